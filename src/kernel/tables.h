/* Private: the coefficients of the kernel integrators (src/kernel/), one
 * table per method, from the methods' papers. The steppers (ros.c,
 * erk.c) read only these, so a method is one table. */
#ifndef OT_SRC_KERNEL_TABLES_H
#define OT_SRC_KERNEL_TABLES_H

#ifdef __cplusplus
extern "C" {
#endif

#define OT__ROS_MAX_STAGES 8
#define OT__ROS_MAX_DENSE 3

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
typedef struct {
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
    double alpha[OT__ROS_MAX_STAGES];
    double d[OT__ROS_MAX_STAGES];
    double a[OT__ROS_MAX_STAGES][OT__ROS_MAX_STAGES];
    double c[OT__ROS_MAX_STAGES][OT__ROS_MAX_STAGES];
    double m[OT__ROS_MAX_STAGES];
    double e[OT__ROS_MAX_STAGES];
    int ndense;
    double dense[OT__ROS_MAX_DENSE][OT__ROS_MAX_STAGES];
} ot__ros_table;

#define OT__ERK_MAX_STAGES 16
#define OT__ERK_MAX_DEGREE 8

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
typedef struct {
    const char *name;
    int stages;
    int order;       /* of y1; the embedded solution's is below */
    int dense_order; /* of the dense output */
    int fsal;
    int dense_stages;
    int dense_degree;
    double c[OT__ERK_MAX_STAGES];
    double a[OT__ERK_MAX_STAGES][OT__ERK_MAX_STAGES];
    double b[OT__ERK_MAX_STAGES];
    double e[OT__ERK_MAX_STAGES];
    double bt[OT__ERK_MAX_STAGES][OT__ERK_MAX_DEGREE];
} ot__erk_table;

/* The methods (ros_tables.c, erk_tables.c). */
extern const ot__ros_table ot__kernel_rodas4; /* Hairer & Wanner, RODAS: 6 stages, 4(3) */
extern const ot__ros_table ot__kernel_rodas5p; /* Steinebach 2023: 8 stages, 5(4) */
extern const ot__ros_table
    ot__kernel_ros23; /* Shampine & Reichelt (ode23s): 3 stages, 2(3) */
extern const ot__erk_table ot__kernel_tsit5; /* Tsitouras 2011: 7 stages FSAL, 5(4) */
extern const ot__erk_table
    ot__kernel_vern7; /* Verner's efficient 7(6): 10 stages + 6 for dense */

#ifdef __cplusplus
}
#endif

#endif
