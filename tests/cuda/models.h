/* Device models and memory helpers for the CUDA tests (models.cu). */
#ifndef OT_TESTS_CUDA_MODELS_H
#define OT_TESTS_CUDA_MODELS_H

#include <stddef.h>

#include <odetensor.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y' = -k y (n 1, np 1); fails (-1) for t > 1 in the _fail variant. */
int decay_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u);
int decay_fail_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u);
/* Lane 3 writes NaN once t > 0.5. */
int decay_nan_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u);
/* Writes lane 0 only (a lanes-mode callback in lockstep). */
int decay_lane0_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u);
/* x'' = -w^2 x as (x, v), p = (w). */
int osc_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u);
/* Free fall (h, v), no params; root g = h. */
int fall_gpu(double t, ot_view y, ot_view p, ot_view_mut d, void *u);
int ground_gpu(double t, ot_view y, ot_view p, ot_view_mut g, void *u);

double *dev_alloc(size_t count);   /* NULL on failure */
int cuda_current_device(int *dev); /* 0 on success */
void dev_free(void *p);
int to_device(double *dst, const double *src, size_t count); /* 0 on success */
int to_host(double *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
