/* Private: setting the thread-local error message. */
#ifndef OT_SRC_ERROR_H
#define OT_SRC_ERROR_H

#include "odetensor/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define OT_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define OT_PRINTF_(f, a)
#endif

/* Formats this thread's last error message and returns status, so a check
 * reads `return ot__fail(OT_ERR_ARG, "y0: ...", ...);`. Exported (OT_API) only
 * so that libodetensor_mpi.so sets the same thread-local message. */
OT_API int ot__fail(int status, const char *fmt, ...) OT_PRINTF_(2, 3);

#ifdef __cplusplus
}
#endif

#endif
