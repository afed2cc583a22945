/* Compiled callbacks for the Python tests, of odetensor.FLAT_SIGNATURE:
 * the same arithmetic as the tests' Python callables, so results can be
 * compared bit for bit. Built by `make python` into tests/libmodels.so. */
#include <stdint.h>

/* dy/dt = -p y, one state and one parameter per lane. */
int decay_rhs(double t, const double *y, const double *p, double *dydt, int64_t n,
              int64_t k, void *user)
{
    (void)t, (void)n, (void)user;
    for (int64_t b = 0; b < k; b++)
        dydt[b] = -p[b] * y[b];
    return 0;
}

/* Its Jacobian [1, 1, k]. */
int decay_jac(double t, const double *y, const double *p, double *J, int64_t n, int64_t k,
              void *user)
{
    (void)t, (void)y, (void)n, (void)user;
    for (int64_t b = 0; b < k; b++)
        J[b] = -p[b];
    return 0;
}

/* Robertson's chemical kinetics with rates p [3, k]. */
int robertson_rhs(double t, const double *y, const double *p, double *f, int64_t n,
                  int64_t k, void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < k; b++) {
        const double *Y = y + n * b, *P = p + 3 * b;
        double *F = f + n * b;
        F[0] = -P[0] * Y[0] + P[1] * Y[1] * Y[2];
        F[2] = P[2] * Y[1] * Y[1];
        F[1] = -F[0] - F[2];
    }
    return 0;
}

/* Robertson's Jacobian [3, 3, k], column-major: J[i + 3 j] = d f_i / d y_j. */
int robertson_jac(double t, const double *y, const double *p, double *J, int64_t n,
                  int64_t k, void *user)
{
    (void)t, (void)n, (void)user;
    for (int64_t b = 0; b < k; b++) {
        const double *Y = y + 3 * b, *P = p + 3 * b;
        double *A = J + 9 * b;
        A[0] = -P[0];
        A[1] = P[0];
        A[3] = P[1] * Y[2];
        A[4] = -P[1] * Y[2] - 2.0 * P[2] * Y[1];
        A[5] = 2.0 * P[2] * Y[1];
        A[6] = P[1] * Y[1];
        A[7] = -P[1] * Y[1];
    }
    return 0;
}

/* The one-compartment oral model of test_doses.py: gut y[0] -> central
 * y[1], p [5, k] = (ka, CL, V, F, ALAG) per lane (F and ALAG are the dose
 * layer's, never read here). */
int oral_rhs(double t, const double *y, const double *p, double *f, int64_t n, int64_t k,
             void *user)
{
    (void)t, (void)user;
    for (int64_t b = 0; b < k; b++) {
        const double *Y = y + n * b, *P = p + 5 * b;
        f[n * b] = -P[0] * Y[0];
        f[n * b + 1] = P[0] * Y[0] - P[1] / P[2] * Y[1];
    }
    return 0;
}

/* The decay compiled into the kernel methods (odetensor/kernel_model.inc):
 * decay_kernel_model, for Problem(kernel_model=...): the same arithmetic,
 * -p y, as decay_rhs above and the tests' Python decay_rhs. */
#include <odetensor/kernel.h>

OT_HD int kdecay_rhs(double t, const double *y, const double *p, double *f)
{
    (void)t;
    f[0] = -p[0] * y[0];
    return 0;
}

OT_HD int kdecay_jac(double t, const double *y, const double *p, double *J)
{
    (void)t, (void)y;
    J[0] = -p[0];
    return 0;
}

#define OT_KM_NAME decay_kernel
#define OT_KM_N 1
#define OT_KM_NP 1
#define OT_KM_RHS kdecay_rhs
#define OT_KM_JAC kdecay_jac
#include <odetensor/kernel_model.inc>
