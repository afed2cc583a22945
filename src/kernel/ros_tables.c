/* Private: the Rosenbrock methods' coefficients, in tables.h's transformed
 * form (W = I / (h gamma) - J, the C terms entering with + c[i][j] / h),
 * and which table each kernel method names (ot__kernel_tables, at the end).
 * tools/check_ros_tables.py parses this file and measures every table's
 * orders, so an edited digit is caught there. */
#include "kernel/tables.h"

/* RODAS: E. Hairer and G. Wanner, Solving Ordinary Differential Equations
 * II, 2nd ed. (Springer 1996), Sec. VI.4, with the coefficients of their
 * rodas.f (METH = 1; c2 = 0.386, c3 = 0.21, c4 = 0.63, beta2' = 0.0317,
 * beta3' = 0.0635, beta4' = 0.3438) to the 16 digits printed there.
 * Stiffly accurate: stages 5 and 6 are at t0 + h, stage 6's argument is the
 * embedded (order 3) solution and y1 is that plus k6, so err = k6. The
 * dense output (order 3) is RODAS's own and uses stages 1 to 5. */
const ot__ros_table ot__kernel_rodas4 = {
    .name = "rodas4",
    .stages = 6,
    .order = 4,
    .embedded_order = 3,
    .dense_order = 3,
    .gamma = 0.25,
    .alpha = {0.0, 0.386, 0.21, 0.63, 1.0, 1.0},
    .d = {0.25, -0.1043, 0.1035, -0.03620000000000023, 0.0, 0.0},
    .a =
        {
            {0.0},
            {1.544},
            {0.9466785280815826, 0.2557011698983284},
            {3.314825187068521, 2.896124015972201, 0.9986419139977817},
            {1.221224509226641, 6.019134481288629, 12.53708332932087,
             -0.6878860361058950},
            {1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950,
             1.0},
        },
    .c =
        {
            {0.0},
            {-5.6688},
            {-2.430093356833875, -0.2063599157091915},
            {-0.1073529058151375, -9.594562251023355, -20.47028614809616},
            {7.496443313967647, -10.24680431464352, -33.99990352819905,
             11.70890893206160},
            {8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136,
             -6.058818238834054},
        },
    .m = {1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950,
          1.0, 1.0},
    .e = {0.0, 0.0, 0.0, 0.0, 0.0, 1.0},
    .ndense = 2,
    .dense =
        {
            {10.12623508344586, -7.487995877610167, -34.80091861555747,
             -7.992771707568823, 1.025137723295662, 0.0},
            {-0.6762803392801253, 6.087714651680015, 16.43084320892478, 24.76722511418386,
             -6.594389125716872, 0.0},
        },
};

/* Rodas5P: G. Steinebach, Construction of Rosenbrock-Wanner method Rodas5P
 * and numerical benchmarks within the Julia differential equations package,
 * BIT Numer. Math. 63, 27 (2023), the transformed coefficients as published
 * with it. Stiffly accurate in the same way as RODAS, one level deeper:
 * stages 6, 7 and 8 are at t0 + h, each one's argument the previous one's
 * plus its k, y1 stage 8's argument plus k8, err = k8. Dense output of
 * order 4 over all 8 stages. */
const ot__ros_table ot__kernel_rodas5p = {
    .name = "rodas5p",
    .stages = 8,
    .order = 5,
    .embedded_order = 4,
    .dense_order = 4,
    .gamma = 0.21193756319429014,
    .alpha = {0.0, 0.6358126895828704, 0.4095798393397535, 0.9769306725060716,
              0.4288403609558664, 1.0, 1.0, 1.0},
    .d = {0.21193756319429014, -0.42387512638858027, -0.3384627126235924,
          1.8046452872882734, 2.325825639765069, 0.0, 0.0, 0.0},
    .a =
        {
            {0.0},
            {3.0},
            {2.849394379747939, 0.45842242204463923},
            {-6.954028509809101, 2.489845061869568, -10.358996098473584},
            {2.8029986275628964, 0.5072464736228206, -0.3988312541770524,
             -0.04721187230404641},
            {-7.502846399306121, 2.561846144803919, -11.627539656261098,
             -0.18268767659942256, 0.030198172008377946},
            {-7.502846399306121, 2.561846144803919, -11.627539656261098,
             -0.18268767659942256, 0.030198172008377946, 1.0},
            {-7.502846399306121, 2.561846144803919, -11.627539656261098,
             -0.18268767659942256, 0.030198172008377946, 1.0, 1.0},
        },
    .c =
        {
            {0.0},
            {-14.155112264123755},
            {-17.97296035885952, -2.859693295451294},
            {147.12150275711716, -1.41221402718213, 71.68940251302358},
            {165.43517024871676, -0.4592823456491126, 42.90938336958603,
             -5.961986721573306},
            {24.854864614690072, -3.0009227002832186, 47.4931110020768,
             5.5814197821558125, -0.6610691825249471},
            {30.91273214028599, -3.1208243349937974, 77.79954646070892, 34.28646028294783,
             -19.097331116725623, -28.087943162872662},
            {37.80277123390563, -3.2571969029072276, 112.26918849496327, 66.9347231244047,
             -40.06618937091002, -54.66780262877968, -9.48861652309627},
        },
    .m = {-7.502846399306121, 2.561846144803919, -11.627539656261098,
          -0.18268767659942256, 0.030198172008377946, 1.0, 1.0, 1.0},
    .e = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0},
    .ndense = 3,
    .dense =
        {
            {25.948786856663858, -2.5579724845846235, 10.433815404888879,
             -2.3679251022685204, 0.524948541321073, 1.1241088310450404,
             0.4272876194431874, -0.17202221070155493},
            {-9.91568850695171, -0.9689944594115154, 3.0438037242978453,
             -24.495224566215796, 20.176138334709044, 15.98066361424651,
             -6.789040303419874, -6.710236069923372},
            {11.419903575922262, 2.8879645146136994, 72.92137995996029, 80.12511834622643,
             -52.072871366152654, -59.78993625266729, -0.15582684282751913,
             4.883087185713722},
        },
};

/* ode23s: L. F. Shampine and M. W. Reichelt, The MATLAB ODE suite, SIAM J.
 * Sci. Comput. 18(1), 1997, its Rosenbrock(2,3) pair, d = 1/(2 + sqrt 2),
 * e32 = 6 + sqrt 2. Its stages are slopes (y1 = y0 + h k2) and stage 3
 * feeds back F0 = f(y0) and F1 = f(stage 2) explicitly; writing those two in
 * terms of k1, k2 (F0 = W k1 - h d T, F1 = W k2 + h d J k1) makes it the
 * usual Rosenbrock form in h k_i with gamma = d,
 *   Gamma = [[d], [-d, d], [d (e32 - 2), -d e32, d]],
 *   stage 2 at y0 + h k1 / 2 (t0 + h/2), stage 3 at y1 (t0 + h),
 * and u = Gamma (h k) gives the numbers below (40-digit arithmetic):
 * a = A Gamma^-1, c = I/d - Gamma^-1, d_i = Gamma's row sums,
 * m = (0, 1, 0) Gamma^-1, dense row (1, -1, 0)/(1 - 2d) Gamma^-1 (their
 * interpolant with the theta^2 terms collected), and
 * e = -(1, -2, 1)/6 Gamma^-1: their h/6 (k1 - 2 k2 + k3) is the order-3
 * solution minus y1 (they only take its norm), err here y1 minus it.
 * y1 is order 2 for any J (a W method); stage 3, f at y1, serves only the
 * error estimate, whose embedded solution (order 3, with the exact J) is
 * above y1's. Not stiffly accurate, but L-stable: R(inf) = 0. */
const ot__ros_table ot__kernel_ros23 = {
    .name = "ros23",
    .stages = 3,
    .order = 2,
    .embedded_order = 3,
    .dense_order = 2,
    .gamma = 0.29289321881345248,
    .alpha = {0.0, 0.5, 1.0},
    .d = {0.29289321881345248, 0.0, -0.29289321881345248},
    .a =
        {
            {0.0},
            {1.7071067811865475},
            {3.4142135623730950, 3.4142135623730950},
        },
    .c =
        {
            {0.0},
            {-3.4142135623730950},
            {-6.8284271247461901, -25.313708498984760},
        },
    .m = {3.4142135623730950, 3.4142135623730950, 0.0},
    .e = {-0.56903559372884917, -3.0808802290397617, -0.56903559372884917},
    .ndense = 1,
    .dense =
        {
            {0.0, -8.2426406871192851, 0.0},
        },
};

void ot__kernel_tables(int method, const ot__ros_table **ros, const ot__erk_table **erk)
{
    *ros = NULL;
    *erk = NULL;
    switch (method) {
    case OT_ROS23:
        *ros = &ot__kernel_ros23;
        break;
    case OT_RODAS4:
        *ros = &ot__kernel_rodas4;
        break;
    case OT_RODAS5P:
        *ros = &ot__kernel_rodas5p;
        break;
    case OT_TSIT5:
        *erk = &ot__kernel_tsit5;
        break;
    default:
        *erk = &ot__kernel_vern7;
        break;
    }
}
