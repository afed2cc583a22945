/* odetensor kernel layer: the kernel methods' one source for the CPU and
 * CUDA, and compiled models.
 *
 * The kernel methods (OT_ROS23 ... OT_VERN7) step each lane with its own t
 * and h. Their arithmetic is written once, here, as functions a C compiler
 * and nvcc both compile (OT_HD): the library's lane groups (callbacks over
 * [n, k] views) call them, and so does the lane loop of
 * <odetensor/kernel_model.inc>, which a user includes to compile a model's
 * rhs (and Jacobian) into the integrator: OT_KM_WIDTH lanes a CPU thread,
 * stepped in turn, and, built by nvcc, one lane a CUDA thread. The same model source then
 * serves both (examples/cuda/kernel_robertson.cu).
 *
 * Everything here but ot_ode_set_kernel_model is the integrator's own
 * arithmetic, public only because a compiled model builds it: the tables'
 * layout and these functions may change with OT_KERNEL_ABI. */
#ifndef ODETENSOR_KERNEL_H
#define ODETENSOR_KERNEL_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ode.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of ot_kernel_job and the tables; ot_ode_set_kernel_model
 * refuses a model built against another. */
#define OT_KERNEL_ABI 1

#ifdef __CUDACC__
#define OT_HD static inline __host__ __device__
#else
#define OT_HD static inline
#endif

#define OT_KERNEL_ROS_MAX_STAGES 8
#define OT_KERNEL_ROS_MAX_DENSE 3
#define OT_KERNEL_ERK_MAX_STAGES 16
#define OT_KERNEL_ERK_MAX_DEGREE 8

/* A Rosenbrock method in Hairer and Wanner's transformed form (the form of
 * their RODAS code, which needs no matrix-vector product): with
 * W = I / (h gamma) - J, J = df/dy at (t0, y0), f_t = df/dt there, stage i
 * (0-based, i < stages) solves
 *
 *   W k_i = f(t0 + alpha[i] h, y0 + sum_{j<i} a[i][j] k_j)
 *           + sum_{j<i} (c[i][j] / h) k_j + h d[i] f_t
 *
 * and the step is y1 = y0 + sum_i m[i] k_i, with the error estimate
 * err = sum_i e[i] k_i (y1 minus the embedded solution). The dense output,
 * for theta in [0, 1]:
 *
 *   y(t0 + theta h) = (1 - theta) y0 + theta (y1 + (1 - theta)
 *                     (D_0 + theta D_1 + ... + theta^(ndense-1) D_{ndense-1}))
 *
 * with D_r = sum_i dense[r][i] k_i. Coefficients past `stages` (or past
 * ndense) are zero. */
typedef struct ot_kernel_ros_table {
    const char *name;
    int stages;
    int order; /* of y1 */
    /* Of y1 - err. The RODAS methods advance the higher order and embed a
     * lower one; ros23 advances order 2 and spends its last stage on an
     * order-3 estimate. Either way err is O(h^(min(order, embedded_order)
     * + 1)), and the step-size controller needs that exponent, which
     * `order` alone does not give. */
    int embedded_order;
    int dense_order; /* of the dense output */
    double gamma;
    double alpha[OT_KERNEL_ROS_MAX_STAGES];
    double d[OT_KERNEL_ROS_MAX_STAGES];
    double a[OT_KERNEL_ROS_MAX_STAGES][OT_KERNEL_ROS_MAX_STAGES];
    double c[OT_KERNEL_ROS_MAX_STAGES][OT_KERNEL_ROS_MAX_STAGES];
    double m[OT_KERNEL_ROS_MAX_STAGES];
    double e[OT_KERNEL_ROS_MAX_STAGES];
    int ndense;
    double dense[OT_KERNEL_ROS_MAX_DENSE][OT_KERNEL_ROS_MAX_STAGES];
} ot_kernel_ros_table;

/* An explicit Runge-Kutta pair: stage i (0-based) is
 * k_i = f(t0 + c[i] h, y0 + h sum_{j<i} a[i][j] k_j), the step
 * y1 = y0 + h sum_i b[i] k_i over the first `stages` stages, and the error
 * estimate err = h sum_i e[i] k_i (y1 minus the embedded solution). fsal:
 * the last stage is f(t1, y1) (b is a's last row), reused as the next
 * step's first. The dense output uses dense_stages >= stages stages (the
 * ones past `stages` are computed only for a step an output time falls in,
 * with their own rows of a and c) and polynomials of degree dense_degree:
 *
 *   y(t0 + theta h) = y0 + h sum_i b_i(theta) k_i,
 *   b_i(theta) = sum_{r=1..dense_degree} bt[i][r-1] theta^r. */
typedef struct ot_kernel_erk_table {
    const char *name;
    int stages;
    int order;       /* of y1; the embedded solution's is below */
    int dense_order; /* of the dense output */
    int fsal;
    int dense_stages;
    int dense_degree;
    double c[OT_KERNEL_ERK_MAX_STAGES];
    double a[OT_KERNEL_ERK_MAX_STAGES][OT_KERNEL_ERK_MAX_STAGES];
    double b[OT_KERNEL_ERK_MAX_STAGES];
    double e[OT_KERNEL_ERK_MAX_STAGES];
    double bt[OT_KERNEL_ERK_MAX_STAGES][OT_KERNEL_ERK_MAX_DEGREE];
} ot_kernel_erk_table;

/* -- the arithmetic, one lane ------------------------------------------
 * Vectors are n values; a lane's stage vectors k_0, k_1, ... stand ks
 * values apart (n for one lane; n k in a group's [n, k] columns). */

/* Step-size control: h_new = h min(FAC_MAX, max(FAC_MIN, SAFETY
 * errn^(-1/q))), q the order of the error estimate; no growth right after
 * a rejection. A callback that asks for a smaller step quarters it, at most
 * RETRY_LIMIT times in a row; a value written NaN or Inf counts as such a
 * request NAN_RETRIES times in a lane's solve, then fails the lane. */
#define OT_KERNEL_SAFETY 0.9
#define OT_KERNEL_FAC_MIN 0.2
#define OT_KERNEL_FAC_MAX 6.0
#define OT_KERNEL_RETRY_LIMIT 50
#define OT_KERNEL_NAN_RETRIES 20

/* LU with partial pivoting of one column-major n x n block a, in place, and
 * the solve with it: the operations of SUNDlsMat_denseGETRF/GETRS (which
 * lanes mode's SUNLinSol_Dense calls) in the same order, so one lane of
 * lockstep stays bit-identical to lanes mode. FACTOR returns 0, or k + 1
 * when pivot k is zero; SOLVE makes b = A^-1 b with the factors and pivots
 * p. One body for every pivot type: the kernel methods' pivots are int64_t
 * (ot_kernel_lu_factor, ot_kernel_lu_solve); the library's lockstep hands
 * SUNDIALS' own sunindextype ones (32-bit in the wasm build) to the same
 * body (src/kit/lu.h). QUAL qualifies both functions. */
#define OT_KERNEL_DEFINE_LU(QUAL, IDX, FACTOR, SOLVE)                                    \
    QUAL IDX FACTOR(double *a, IDX n, IDX *p)                                            \
    {                                                                                    \
        for (IDX k = 0; k < n; k++) {                                                    \
            double *col_k = a + k * n;                                                   \
            IDX l = k;                                                                   \
            for (IDX i = k + 1; i < n; i++)                                              \
                if (fabs(col_k[i]) > fabs(col_k[l]))                                     \
                    l = i;                                                               \
            p[k] = l;                                                                    \
            if (col_k[l] == 0)                                                           \
                return k + 1;                                                            \
            if (l != k)                                                                  \
                for (IDX i = 0; i < n; i++) {                                            \
                    const double t = a[i * n + l];                                       \
                    a[i * n + l] = a[i * n + k];                                         \
                    a[i * n + k] = t;                                                    \
                }                                                                        \
            const double mult = 1.0 / col_k[k];                                          \
            for (IDX i = k + 1; i < n; i++)                                              \
                col_k[i] *= mult;                                                        \
            for (IDX j = k + 1; j < n; j++) {                                            \
                double *col_j = a + j * n;                                               \
                const double a_kj = col_j[k];                                            \
                if (a_kj != 0)                                                           \
                    for (IDX i = k + 1; i < n; i++)                                      \
                        col_j[i] -= a_kj * col_k[i];                                     \
            }                                                                            \
        }                                                                                \
        return 0;                                                                        \
    }                                                                                    \
    QUAL void SOLVE(const double *a, IDX n, const IDX *p, double *b)                     \
    {                                                                                    \
        for (IDX k = 0; k < n; k++) {                                                    \
            const IDX pk = p[k];                                                         \
            if (pk != k) {                                                               \
                const double t = b[k];                                                   \
                b[k] = b[pk];                                                            \
                b[pk] = t;                                                               \
            }                                                                            \
        }                                                                                \
        for (IDX k = 0; k < n - 1; k++) {                                                \
            const double *col_k = a + k * n;                                             \
            for (IDX i = k + 1; i < n; i++)                                              \
                b[i] -= col_k[i] * b[k];                                                 \
        }                                                                                \
        for (IDX k = n - 1; k > 0; k--) {                                                \
            const double *col_k = a + k * n;                                             \
            b[k] /= col_k[k];                                                            \
            for (IDX i = 0; i < k; i++)                                                  \
                b[i] -= col_k[i] * b[k];                                                 \
        }                                                                                \
        b[0] /= a[0];                                                                    \
    }

OT_KERNEL_DEFINE_LU(OT_HD, int64_t, ot_kernel_lu_factor, ot_kernel_lu_solve)

/* Every value finite. */
OT_HD int ot_kernel_finite(const double *v, int64_t n)
{
    int finite = 1;
    for (int64_t i = 0; i < n; i++)
        finite &= fabs(v[i]) <= DBL_MAX;
    return finite;
}

/* The RMS of err / (atol + rtol max(|y|, |y1|)); atol_vec [n] or NULL. */
OT_HD double ot_kernel_err_norm(int64_t n, const double *y, const double *y1,
                                const double *err, double rtol, double atol,
                                const double *atol_vec)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        const double sc =
            (atol_vec ? atol_vec[i] : atol) + rtol * fmax(fabs(y[i]), fabs(y1[i]));
        const double r = err[i] / sc;
        s += r * r;
    }
    return sqrt(s / (double)n);
}

/* The exponent q of the error estimate's leading term, err = O(h^q): the
 * lower of the two solutions' orders plus one. For the explicit pairs the
 * embedded solution is one order below y1. */
OT_HD int ot_kernel_err_order(const ot_kernel_ros_table *ros,
                              const ot_kernel_erk_table *erk)
{
    if (ros)
        return (ros->order < ros->embedded_order ? ros->order : ros->embedded_order) + 1;
    return erk->order;
}

/* How a lane ended (a compiled model's result; the verdicts below). */
enum {
    OT_KERNEL_LANE_OK = 0,
    OT_KERNEL_LANE_CALLBACK = 1, /* rhs or jac returned < 0, or failed at a point */
    OT_KERNEL_LANE_NAN = 2,      /* rhs or jac wrote NaN or Inf too often */
    OT_KERNEL_LANE_RETRIES = 3,  /* RETRY_LIMIT attempts in a row failed */
    OT_KERNEL_LANE_SMALL = 4,    /* the step fell below the time resolution */
    OT_KERNEL_LANE_MAX_STEPS = 5 /* max_steps between two outputs */
};

/* A lane's step-size controller state. */
typedef struct ot_kernel_ctrl {
    double h;      /* the step just attempted; then the next one */
    double hacc;   /* the last accepted step (0: none yet), for the predictive */
    double erracc; /* controller, and its error norm (at least 1e-2)^(1/q) */
    int rejected;  /* the last attempt was rejected */
    int retries;   /* attempts in a row a callback asked to retry */
} ot_kernel_ctrl;

/* A lane's controller at its start, or after a jump (a stop's handler): no
 * step-size history, first step h. */
OT_HD void ot_kernel_ctrl_start(ot_kernel_ctrl *s, double h)
{
    s->h = h;
    s->hacc = 0;
    s->erracc = 1;
    s->rejected = 0;
    s->retries = 0;
}

/* The next step's h from an attempt's error norm e (q its exponent).
 * After an accepted Rosenbrock step (ros), Gustafsson's predictive
 * controller as in Hairer and Wanner's RODAS also bounds the growth by the
 * error's trend over the last two steps: the plain rule lets a stiff
 * problem's error creep up over long steps where the estimate stays just
 * below 1 (HIRES at rtol 1e-4 drifted to 171 tolerance units on Rodas5P
 * without it). hmax 0: none. */
OT_HD double ot_kernel_next_h(ot_kernel_ctrl *s, double e, int q, int ros, int accepted,
                              double hmax)
{
    const double r = e > 0 ? pow(e, -1.0 / q) : INFINITY; /* one pow a step */
    double fac = fmin(OT_KERNEL_FAC_MAX, fmax(OT_KERNEL_FAC_MIN, OT_KERNEL_SAFETY * r));
    if (accepted && ros) {
        /* erracc^(1/q) is kept rather than erracc: (erracc / e^2)^(1/q) =
         * erracc^(1/q) r^2. */
        if (s->hacc > 0 && e > 0) {
            const double gus = OT_KERNEL_SAFETY * (s->h / s->hacc) * s->erracc * r * r;
            fac = fmin(fac, fmin(OT_KERNEL_FAC_MAX, fmax(OT_KERNEL_FAC_MIN, gus)));
        }
        s->hacc = s->h;
        s->erracc = e >= 1e-2 ? 1.0 / r : pow(1e-2, 1.0 / q);
    }
    if (accepted && s->rejected)
        fac = fmin(fac, 1.0);
    if (!accepted)
        fac = fmin(fac, 1.0);
    double h = s->h * fac;
    if (hmax > 0)
        h = fmin(h, hmax);
    return h;
}

/* Whether a step h at t is below the time resolution: 4 gaps between
 * doubles there. */
OT_HD int ot_kernel_too_small(double t, double h)
{
    return !(h >= 4 * (nextafter(fabs(t), HUGE_VAL) - fabs(t)));
}

/* An attempt's verdict, past the lane-failure codes (OT_KERNEL_LANE_*). */
enum { OT_KERNEL_ACCEPT = 100, OT_KERNEL_RETRY = 101, OT_KERNEL_REJECT = 102 };

/* The verdict on a lane's attempt from t with step s->h: rc, its callbacks'
 * (0; 1: one asked for a smaller step, or a singular matrix; -1: one
 * failed), and errn, its error norm (read only when rc is 0). RETRY: the
 * step quartered, at most RETRY_LIMIT times in a row; REJECT: the step
 * from the error norm; either fails the lane (LANE_SMALL) below the time
 * resolution at t. ACCEPT leaves s alone: the step's outputs still need its
 * h; ot_kernel_accepted follows them. Else a lane failure, LANE_CALLBACK
 * or LANE_RETRIES. The one rule of the lane groups (src/kernel/drive.c)
 * and of a compiled model's lane loop (kernel_model.inc). */
OT_HD int ot_kernel_judge(ot_kernel_ctrl *s, int rc, double errn, int q, int ros,
                          double hmax, double t)
{
    int v;
    if (rc < 0)
        return OT_KERNEL_LANE_CALLBACK;
    if (rc > 0) {
        if (++s->retries > OT_KERNEL_RETRY_LIMIT)
            return OT_KERNEL_LANE_RETRIES;
        s->h *= 0.25;
        v = OT_KERNEL_RETRY;
    } else if (errn <= 1) {
        return OT_KERNEL_ACCEPT;
    } else {
        s->h = ot_kernel_next_h(s, errn, q, ros, 0, hmax);
        v = OT_KERNEL_REJECT;
    }
    s->rejected = 1;
    return ot_kernel_too_small(t, s->h) ? OT_KERNEL_LANE_SMALL : v;
}

/* After an accepted attempt (and its outputs): the next step's h. */
OT_HD void ot_kernel_accepted(ot_kernel_ctrl *s, double errn, int q, int ros, double hmax)
{
    s->h = ot_kernel_next_h(s, errn, q, ros, 1, hmax);
    s->rejected = 0;
    s->retries = 0;
}

/* The attempt from t with step *h toward target (the next stop or the last
 * output): lands on target rather than just short of it. @return t1. */
OT_HD double ot_kernel_clip(double t, double *h, double target)
{
    const double rest = target - t;
    if (*h >= rest * (1 - 1e-12) || *h > 0.99 * rest) {
        *h = rest;
        return target;
    }
    return t + *h;
}

/* Hairer and Wanner's starting step (Solving ODEs I, II.4), first half:
 * from the sizes of y0 and f0 = f(t0, y0), the Euler probe's step (at most
 * span), its argument y0 + h f0 into arg, and d1 (for the second half). */
OT_HD double ot_kernel_h0_probe(int64_t n, const double *y, const double *f, double rtol,
                                double atol, const double *atol_vec, double span,
                                double *arg, double *d1)
{
    double d0 = 0, s1 = 0;
    for (int64_t i = 0; i < n; i++) {
        const double sc = (atol_vec ? atol_vec[i] : atol) + rtol * fabs(y[i]);
        d0 += (y[i] / sc) * (y[i] / sc);
        s1 += (f[i] / sc) * (f[i] / sc);
    }
    d0 = sqrt(d0 / (double)n);
    s1 = sqrt(s1 / (double)n);
    double h = d0 < 1e-5 || s1 < 1e-5 ? 1e-6 : 0.01 * d0 / s1;
    h = fmin(h, span);
    for (int64_t i = 0; i < n; i++)
        arg[i] = y[i] + h * f[i];
    *d1 = s1;
    return h;
}

/* Second half: with f1 = f(t0 + h, arg) (f1 NULL: the probe's rhs failed,
 * which says nothing of the lane), the first step for a method of order
 * q - 1, at most span and hmax (0: none). */
OT_HD double ot_kernel_h0_finish(int64_t n, const double *y, const double *f,
                                 const double *f1, double rtol, double atol,
                                 const double *atol_vec, double h, double d1, int q,
                                 double span, double hmax)
{
    if (f1) {
        double d2 = 0;
        for (int64_t i = 0; i < n; i++) {
            const double sc = (atol_vec ? atol_vec[i] : atol) + rtol * fabs(y[i]);
            const double r = (f1[i] - f[i]) / sc;
            d2 += r * r;
        }
        d2 = sqrt(d2 / (double)n) / h;
        const double dm = fmax(d1, d2);
        const double h1 = dm <= 1e-15 ? fmax(1e-6, h * 1e-3) : pow(0.01 / dm, 1.0 / q);
        h = fmin(100 * h, h1);
    }
    h = fmin(h, span);
    if (hmax > 0)
        h = fmin(h, hmax);
    return h;
}

/* Hairer and Wanner's difference-quotient increment (RODAS): it depends on
 * the value alone, so that a lane's J is the same whenever it is made. */
OT_HD double ot_kernel_increment(double v)
{
    return sqrt(DBL_EPSILON * fmax(1e-5, fabs(v)));
}

/* Column j of J from f(y + inc e_j) = fj, f0 = f(y), and the step taken. */
OT_HD void ot_kernel_dq_column(int64_t n, double step, const double *fj, const double *f0,
                               double *col)
{
    const double inv = 1.0 / step;
    for (int64_t i = 0; i < n; i++)
        col[i] = inv * (fj[i] - f0[i]);
}

/* W = I / (h gamma) - J. */
OT_HD void ot_kernel_ros_w(int64_t n, double h, double gamma, const double *J, double *W)
{
    const double dg = 1.0 / (h * gamma);
    for (int64_t e = 0; e < n * n; e++)
        W[e] = -J[e];
    for (int64_t i = 0; i < n; i++)
        W[i * n + i] += dg;
}

/* Rosenbrock stage i's argument y + sum_j a_ij k_j into a, one pass per
 * value (the same sums, in the same order, as axpy after axpy). */
OT_HD void ot_kernel_ros_arg(const ot_kernel_ros_table *m, int i, int64_t n, int64_t ks,
                             const double *y, const double *k, double *a)
{
    for (int64_t e = 0; e < n; e++) {
        double v = y[e];
        for (int j = 0; j < i; j++)
            v += m->a[i][j] * k[j * ks + e];
        a[e] = v;
    }
}

/* Stage i's right side f + sum_j (c_ij / h) k_j + h d_i f_t into k_i (the
 * solve with W follows), with 1 / h once. */
OT_HD void ot_kernel_ros_side(const ot_kernel_ros_table *m, int i, int64_t n, int64_t ks,
                              double h, const double *f, const double *ft, double *k)
{
    const double rh = 1.0 / h, hd = h * m->d[i];
    double *kc = k + i * ks;
    for (int64_t e = 0; e < n; e++) {
        double v = f[e];
        for (int j = 0; j < i; j++)
            v += m->c[i][j] * rh * k[j * ks + e];
        kc[e] = m->d[i] != 0 ? v + hd * ft[e] : v;
    }
}

/* The step y1 and its error estimate err from the stages. */
OT_HD void ot_kernel_ros_end(const ot_kernel_ros_table *m, int64_t n, int64_t ks,
                             const double *y, const double *k, double *y1, double *err)
{
    for (int64_t e = 0; e < n; e++) {
        double v = y[e], r = 0;
        for (int i = 0; i < m->stages; i++) {
            v += m->m[i] * k[i * ks + e];
            r += m->e[i] * k[i * ks + e];
        }
        y1[e] = v;
        err[e] = r;
    }
}

/* The dense output at t0 + theta h of the step y0 -> y1 into out. */
OT_HD void ot_kernel_ros_dense(const ot_kernel_ros_table *m, int64_t n, int64_t ks,
                               double theta, const double *y0, const double *y1,
                               const double *k, double *out)
{
    for (int64_t e = 0; e < n; e++) {
        double d = 0;
        for (int r = m->ndense - 1; r >= 0; r--) {
            double dr = 0;
            for (int i = 0; i < m->stages; i++)
                dr += m->dense[r][i] * k[i * ks + e];
            d = d * theta + dr;
        }
        out[e] = (1 - theta) * y0[e] + theta * (y1[e] + (1 - theta) * d);
    }
}

/* ERK stage i's argument y + h sum_{j<i} a_ij k_j into a: the sum in the
 * stage's own order, as y1's in ot_kernel_erk_end, so that an FSAL stage's
 * argument is y1 exactly. */
OT_HD void ot_kernel_erk_arg(const ot_kernel_erk_table *m, int i, int64_t n, int64_t ks,
                             double h, const double *y, const double *k, double *a)
{
    for (int64_t e = 0; e < n; e++)
        a[e] = 0;
    for (int j = 0; j < i; j++)
        if (m->a[i][j] != 0)
            for (int64_t e = 0; e < n; e++)
                a[e] += m->a[i][j] * k[j * ks + e];
    for (int64_t e = 0; e < n; e++)
        a[e] = y[e] + h * a[e];
}

/* The step y1 (an FSAL method's: its last stage's argument, last_arg) and
 * its error estimate err. */
OT_HD void ot_kernel_erk_end(const ot_kernel_erk_table *m, int64_t n, int64_t ks,
                             double h, const double *y, const double *k,
                             const double *last_arg, double *y1, double *err)
{
    if (m->fsal) {
        for (int64_t e = 0; e < n; e++)
            y1[e] = last_arg[e];
    } else {
        for (int64_t e = 0; e < n; e++)
            y1[e] = 0;
        for (int i = 0; i < m->stages; i++)
            if (m->b[i] != 0)
                for (int64_t e = 0; e < n; e++)
                    y1[e] += m->b[i] * k[i * ks + e];
        for (int64_t e = 0; e < n; e++)
            y1[e] = y[e] + h * y1[e];
    }
    for (int64_t e = 0; e < n; e++)
        err[e] = 0;
    for (int i = 0; i < m->stages; i++)
        if (m->e[i] != 0)
            for (int64_t e = 0; e < n; e++)
                err[e] += m->e[i] * k[i * ks + e];
    for (int64_t e = 0; e < n; e++)
        err[e] *= h;
}

/* The dense output at t0 + theta h of a step h from y into out. */
OT_HD void ot_kernel_erk_dense(const ot_kernel_erk_table *m, int64_t n, int64_t ks,
                               double h, double theta, const double *y, const double *k,
                               double *out)
{
    double bt[OT_KERNEL_ERK_MAX_STAGES];
    for (int i = 0; i < m->dense_stages; i++) {
        double s = 0;
        for (int r = m->dense_degree; r >= 1; r--)
            s = (s + m->bt[i][r - 1]) * theta;
        bt[i] = s;
    }
    for (int64_t e = 0; e < n; e++) {
        double s = 0;
        for (int i = 0; i < m->dense_stages; i++)
            s += bt[i] * k[i * ks + e];
        out[e] = y[e] + h * s;
    }
}

/* -- compiled models ------------------------------------------------------ */

/* One lane's result. */
typedef struct ot_kernel_lane_result {
    int status;    /* OT_KERNEL_LANE_* */
    int64_t count; /* outputs written */
    double t, h;   /* where it stands, and its last step */
    int64_t steps, rhs_evals, jac_rhs_evals, jac_evals, lin_setups, err_test_fails;
} ot_kernel_lane_result;

/* A compiled model's work, built by the library: lanes [0, nlanes) of
 * compact host arrays (or device arrays, in the CUDA launcher's copy). */
typedef struct ot_kernel_job {
    int abi;
    int64_t n, np, nlanes;
    const ot_kernel_ros_table *ros; /* one of ros and erk */
    const ot_kernel_erk_table *erk;
    double rtol, atol;
    const double *atol_vec; /* [n] or NULL */
    double h0, hmax;        /* 0: chosen, none */
    int64_t max_steps;
    int autonomous;      /* df/dt taken as 0 */
    int device_id;       /* the CUDA device (ot_ode_set_device) */
    const double *t0;    /* [nlanes] */
    const double *times; /* [nt, nlanes], NaN past a lane's own count */
    const int64_t *nt;   /* [nlanes]: a lane's count of times */
    int64_t nt_max;
    const double *y0;           /* [n, nlanes] */
    const double *p;            /* [np, nlanes] */
    double *ys;                 /* [n, nt_max, nlanes]: the states at the times */
    ot_kernel_lane_result *res; /* [nlanes] */
} ot_kernel_job;

/* A compiled model, defined by <odetensor/kernel_model.inc>. */
typedef struct ot_kernel_model {
    int abi; /* OT_KERNEL_ABI of the build */
    const char *name;
    int64_t n, np;
    int has_jac;
    /* Solves lanes [first, first + count) of job on this thread. */
    void (*host)(const ot_kernel_job *job, int64_t first, int64_t count);
    /* Solves every lane of job (host arrays) on the current CUDA device:
     * NULL in a model not built by nvcc. @return 0, or a CUDA error code
     * (msg: its text). */
    int (*cuda)(const ot_kernel_job *job, char *msg, size_t msg_len);
    /* The model as ordinary callbacks (for ot_ode_new and the lane groups);
     * jac_lanes NULL without a Jacobian. */
    ot_rhs_fn rhs;
    ot_rhs_lanes_fn rhs_lanes;
    ot_jac_lanes_fn jac_lanes;
} ot_kernel_model;

/* Solves the kernel methods with model's compiled rhs (and Jacobian) in
 * place of the problem's callbacks (NULL: the callbacks again). The model
 * is not copied: it must outlive the problem's solves (a static object, as
 * kernel_model.inc defines). With ot_ode_set_device(OT_CUDA) the lanes run
 * one a CUDA thread (the model built by nvcc); else OT_KM_WIDTH (8) a CPU
 * thread, stepped in turn, bit for bit the lane groups' results with the
 * same rhs. The out
 * function and init run on the host as for the callbacks; roots, scheduled
 * stops and sensitivities are refused with a model (its lane loop has none
 * yet: solve those through the callbacks, in lane groups); inputs and
 * outputs are host memory (the CUDA run copies them). @return OT_OK, OT_ERR_ARG (ode
 * NULL), OT_ERR_VERSION (built against another OT_KERNEL_ABI) or OT_ERR_SHAPE (its n or
 * np is not the problem's). */
OT_API int ot_ode_set_kernel_model(ot_ode *ode, const ot_kernel_model *model);

#ifdef __cplusplus
}
#endif

#endif
