/* Private, test builds only (-DOT_FAULT_INJECT): the allocation-failure
 * injector behind core/alloc.h. Thread-safe: points are counted atomically,
 * so with several worker threads "the k-th point" is the k-th to arrive. */
#ifndef OT_SRC_FAULT_INJECT_H
#define OT_SRC_FAULT_INJECT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Counts one failure point; nonzero when this one is to fail. */
int ot__inject_fail(void);

/* Its controls (arm, counts) are test hooks: core/test_hooks.h. */

#ifdef __cplusplus
}
#endif

#endif
