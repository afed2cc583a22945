/* Private test hooks, all in one place: the library exports them (its
 * static archive does; the shared library hides them) only so that the
 * tests and benchmarks can reach behaviour no user should change. Each acts
 * on the calling thread only. */
#ifndef OT_SRC_CORE_TEST_HOOKS_H
#define OT_SRC_CORE_TEST_HOOKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Lockstep on the CPU (lockstep/cpu.c): CVODE's plain WRMS norm instead of
 * the per-lane maximum (1), or the per-lane norm again (0). */
void ot__lockstep_plain_norm(int plain);

/* Lockstep on CUDA (cuda/lockstep_cuda.cu): cuBLAS' batched LU instead of
 * the own kernel (1), or the kernel again (0). CUDA builds only. */
void ot__cuda_use_cublas(int on);

/* Size limits (entry/size_limits.c): a memory limit to use instead of the
 * machine's (0 restores it), and the total the last size check computed (0
 * before any). */
void ot__size_set_limit(uint64_t bytes);
uint64_t ot__size_last_estimate(void);

/* Tensors the library allocates (tensor/tensor.c) larger than bytes fail as
 * if malloc had no memory, though the limit above says they fit (the
 * process's own memory): 0 restores malloc's own answer. */
void ot__tensor_set_alloc_ceiling(uint64_t bytes);

/* Allocation-failure injection (core/fault_inject.c, builds with
 * -DOT_FAULT_INJECT only): arms the injector so that the point numbered k
 * (0-based, counted from this call) fails; with sticky, every point from k
 * on fails too. k < 0 disarms it and only counts. Resets the counters. */
void ot__inject_arm(long k, int sticky);
/* Points counted since the last ot__inject_arm, and how many of them were
 * made to fail. */
long ot__inject_points(void);
long ot__inject_failed(void);

#ifdef __cplusplus
}
#endif

#endif
