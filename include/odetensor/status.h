/* odetensor: status codes, error messages and version.
 *
 * Every fallible odetensor function returns an int status: OT_OK (0) on
 * success, one of the negative codes below on failure. The failing call also
 * sets a thread-local message, read with ot_last_error(), that names the
 * argument and the rule it broke. Nothing in the library aborts, exits or
 * prints.
 *
 * Stability: the numeric values of the codes are part of the ABI and never
 * change; new codes get new values. */
#ifndef ODETENSOR_STATUS_H
#define ODETENSOR_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define OT_API
#elif defined(__GNUC__) || defined(__clang__)
#define OT_API __attribute__((visibility("default")))
#else
#define OT_API
#endif

/* Marks a printf-like declaration (format at argument f, its values from a),
 * so that compilers check the calls. */
#if defined(__GNUC__) || defined(__clang__)
#define OT_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define OT_PRINTF_(f, a)
#endif

#define OT_VERSION_MAJOR 0
#define OT_VERSION_MINOR 1
#define OT_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH: compare with ot_version_number(). */
#define OT_VERSION_NUMBER                                                                \
    (OT_VERSION_MAJOR * 10000 + OT_VERSION_MINOR * 100 + OT_VERSION_PATCH)

/* X(name, value, description): the one list of status codes. */
#define OT_STATUS_LIST(X)                                                                \
    X(OT_OK, 0, "success")                                                               \
    X(OT_ERR_ARG, -1, "invalid argument")                                                \
    X(OT_ERR_LAYOUT, -2, "tensor layout breaks the column-major rules")                  \
    X(OT_ERR_SHAPE, -3, "tensor shape does not match")                                   \
    X(OT_ERR_DTYPE, -4, "unsupported data type")                                         \
    X(OT_ERR_DEVICE, -5, "unsupported device")                                           \
    X(OT_ERR_READ_ONLY, -6, "tensor is read-only")                                       \
    X(OT_ERR_VERSION, -7, "unsupported DLPack major version")                            \
    X(OT_ERR_OVERFLOW, -8, "size overflows")                                             \
    X(OT_ERR_NOMEM, -9, "out of memory")                                                 \
    X(OT_ERR_NO_CUDA, -10, "no CUDA device")                                             \
    X(OT_ERR_LANES_FAILED, -11, "some lanes failed")                                     \
    X(OT_ERR_SOLVER, -12, "solver failure")                                              \
    X(OT_ERR_CALLBACK, -13, "user callback failed")                                      \
    X(OT_ERR_VALUE, -14, "value out of range (NaN, Inf or negative)")                    \
    X(OT_ERR_CANCELLED, -15, "cancelled by the progress callback")                       \
    X(OT_ERR_MPI, -20, "MPI communication failed")                                       \
    X(OT_ERR_INTERNAL, -99, "internal error")

typedef enum ot_status {
#define OT_STATUS_ENUM_(name, value, text) name = value,
    OT_STATUS_LIST(OT_STATUS_ENUM_)
#undef OT_STATUS_ENUM_
} ot_status;

/* The code's name ("OT_ERR_LAYOUT"), or "OT_UNKNOWN_STATUS" for a value not in
 * the list. The string is static. */
OT_API const char *ot_status_name(int status);

/* A one-line description of the code ("out of memory"); static string. */
OT_API const char *ot_status_text(int status);

/* The message of the last failing odetensor call on this thread, e.g.
 * "params: strides[0] is 24 bytes; column-major needs 8". Successful calls
 * leave it unchanged. Valid until the next failing call on the same thread;
 * never NULL ("" when no call has failed). */
OT_API const char *ot_last_error(void);

/* Clears this thread's last error message. */
OT_API void ot_clear_error(void);

/* Sets this thread's last error message, for a layer built on odetensor (a
 * binding, a scheduler, libodetensor_mpi) whose own checks should read like
 * the library's: printf's format and arguments, which may include
 * ot_last_error() itself (the message is formatted before it is replaced);
 * truncated to 511 bytes. Returns status, so a check reads
 * `return ot_set_error(OT_ERR_ARG, "opts: root is %d; ...", root);`.
 * @return status, a failure code of the list above; OT_ERR_ARG (and a
 * message saying so) when status is OT_OK or not in the list, or fmt is
 * NULL. */
OT_API int ot_set_error(int status, const char *fmt, ...) OT_PRINTF_(2, 3);

/* OT_VERSION_NUMBER of the library actually linked, and its "0.1.0" string. */
OT_API int ot_version_number(void);
OT_API const char *ot_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* ODETENSOR_STATUS_H */
