/* Private, test builds only (-DOT_FAULT_INJECT): the allocation-failure
 * injector behind src/alloc.h. Thread-safe: points are counted atomically,
 * so with several worker threads "the k-th point" is the k-th to arrive. */
#ifndef OT_SRC_FAULT_INJECT_H
#define OT_SRC_FAULT_INJECT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Counts one failure point; nonzero when this one is to fail. */
int ot__inject_fail(void);

/* Arms the injector: the point numbered k (0-based, counted from this call)
 * fails; with sticky, every point from k on fails too. k < 0 disarms it and
 * only counts. Resets the counters. */
void ot__inject_arm(long k, int sticky);

/* Points counted since the last ot__inject_arm, and how many of them were
 * made to fail. */
long ot__inject_points(void);
long ot__inject_failed(void);

#ifdef __cplusplus
}
#endif

#endif
