/* Status names and the thread-local error message. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[512];

const char *ot_status_name(int status)
{
    switch (status) {
#define OT_STATUS_NAME_(name, value, text)                                               \
    case value:                                                                          \
        return #name;
        OT_STATUS_LIST(OT_STATUS_NAME_)
#undef OT_STATUS_NAME_
    default:
        return "OT_UNKNOWN_STATUS";
    }
}

const char *ot_status_text(int status)
{
    switch (status) {
#define OT_STATUS_TEXT_(name, value, text)                                               \
    case value:                                                                          \
        return text;
        OT_STATUS_LIST(OT_STATUS_TEXT_)
#undef OT_STATUS_TEXT_
    default:
        return "unknown status";
    }
}

int ot__status_known(int status)
{
    switch (status) {
#define OT_STATUS_KNOWN_(name, value, text)                                              \
    case value:                                                                          \
        return 1;
        OT_STATUS_LIST(OT_STATUS_KNOWN_)
#undef OT_STATUS_KNOWN_
    default:
        return 0;
    }
}

const char *ot_last_error(void) { return last_error; }

void ot_clear_error(void) { last_error[0] = '\0'; }

/* Formats into a copy first: an argument may be ot_last_error() itself
 * ("...: %s", ot_last_error()), which vsnprintf must not read while it
 * writes the same buffer. */
static void set_message(const char *fmt, va_list ap)
{
    char msg[sizeof last_error];
    vsnprintf(msg, sizeof msg, fmt, ap);
    memcpy(last_error, msg, sizeof msg);
}

int ot__fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(fmt, ap);
    va_end(ap);
    return status;
}

int ot_set_error(int status, const char *fmt, ...)
{
    if (status == OT_OK || !ot__status_known(status))
        return ot__fail(OT_ERR_ARG,
                        "ot_set_error: status is %d; give a failure code of "
                        "odetensor/status.h (OT_ERR_...)",
                        status);
    if (fmt == NULL)
        return ot__fail(OT_ERR_ARG, "ot_set_error: fmt is NULL");
    va_list ap;
    va_start(ap, fmt);
    set_message(fmt, ap);
    va_end(ap);
    return status;
}

int ot_version_number(void) { return OT_VERSION_NUMBER; }

#define OT_STR2_(x) #x
#define OT_STR_(x) OT_STR2_(x)
const char *ot_version_string(void)
{
    return OT_STR_(OT_VERSION_MAJOR) "." OT_STR_(OT_VERSION_MINOR) "." OT_STR_(
        OT_VERSION_PATCH);
}
