/* Private: setting the thread-local error message. */
#ifndef OT_SRC_ERROR_H
#define OT_SRC_ERROR_H

#include "odetensor/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Formats this thread's last error message and returns status, so a check
 * reads `return ot__fail(OT_ERR_ARG, "y0: ...", ...);`. The core's own
 * checks; layers above use the public ot_set_error, which also checks its
 * status. */
int ot__fail(int status, const char *fmt, ...) OT_PRINTF_(2, 3);

/* 1 when status is a code of the list in status.h (OT_OK included). */
int ot__status_known(int status);

#ifdef __cplusplus
}
#endif

#endif
