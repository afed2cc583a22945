/* Private: what differs between the SUNDIALS versions odetensor builds
 * against (6.4, Debian bookworm's; 7.x, our own build and current
 * distributions'), in one place. */
#ifndef OT_SRC_SOLVE_SUN_COMPAT_H
#define OT_SRC_SOLVE_SUN_COMPAT_H

#include <sundials/sundials_config.h>
#include <sundials/sundials_context.h>

#include "kit/callback.h"

#ifdef __cplusplus
extern "C" {
#endif

#if SUNDIALS_VERSION_MAJOR >= 7
#define OT__SUN_SUCCESS SUN_SUCCESS /* linear solvers' success */
/* linear solvers' unrecoverable failures: out of memory, an outside library */
#define OT__SUNLS_MEM_FAIL SUN_ERR_MEM_FAIL
#define OT__SUNLS_EXT_FAIL SUN_ERR_EXT_FAIL
#else
#define OT__SUN_SUCCESS SUNLS_SUCCESS
#define OT__SUNLS_MEM_FAIL SUNLS_MEM_FAIL
#define OT__SUNLS_EXT_FAIL SUNLS_PACKAGE_FAIL_UNREC
#endif

/* A new SUNContext for one solver instance whose errors go to cb->cv_msg
 * and that prints nothing: SUNDIALS 7 sends errors to handlers on the
 * context (its default one prints) and warnings to a logger (its default
 * prints warnings); 6.4 sends both to the handler ot__cv_options sets on
 * CVODE. Ownership: *ctx is the caller's (SUNContext_Free).
 * @return 0, or nonzero when out of memory (nothing left allocated). */
int ot__sun_context_new(SUNContext *ctx, ot__cb *cb);

#ifdef __cplusplus
}
#endif

#endif
