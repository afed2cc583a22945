/* Robertson (robertson.h) as odetensor callbacks that serve both modes: they
 * loop over the lanes they are given. Shared by the benchmarks that solve
 * it through odetensor in lockstep and lanes mode. */
#ifndef BENCH_ROBERTSON_OT_H
#define BENCH_ROBERTSON_OT_H

#include "robertson.h"

#include <odetensor.h>

static inline int rb_ot_rhs(double t, ot_view y, ot_view p, ot_view_mut d, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        rb_rhs(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
               ot_view_mut_col_f64(d, b, 0));
    return 0;
}

/* Lane b's block starts at column (0, b): n x n column-major. */
static inline int rb_ot_jac(double t, ot_view y, ot_view p, ot_view_mut J, void *u)
{
    (void)t, (void)u;
    for (int64_t b = 0; b < y.layout.shape[1]; b++)
        rb_jac(ot_view_col_f64(y, b, 0), ot_view_col_f64(p, b, 0),
               ot_view_mut_col_f64(J, 0, b));
    return 0;
}

#endif
