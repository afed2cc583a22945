/* The solves both allocation-failure programs drive (check_alloc_inject.c
 * fails odetensor's own failure points, check_malloc_fail.c every malloc of
 * the process, SUNDIALS' included): one table of cases over a two-state
 * decay model, its inputs, and the comparison of a lane with the reference
 * solve. */
#ifndef OT_TESTS_INJECT_SOLVE_CASES_H
#define OT_TESTS_INJECT_SOLVE_CASES_H

#include "../solve_common.h"

#define SC_NB 5
#define SC_NT 4

/* K_SENS_STOPS: sensitivities through two doses (scheduled stops, a
 * handler and stops_dp); K_ADJ_STOPS: the adjoint through them. */
typedef enum { K_DENSE, K_STEPS, K_SENS, K_ADJ, K_SENS_STOPS, K_ADJ_STOPS } sc_kind;

typedef struct {
    const char *name;
    ot_mode mode;
    ot_method method;
    sc_kind kind;
    int threads, roots, out, init, f32, atolvec, senstol;
    int64_t block; /* lockstep blocks (0: one) */
    int linsol;    /* 0: dense, else an ot_linsol (lanes mode) */
} sc_case;

extern const sc_case SC_CASES[];
extern const int SC_NCASES;

typedef struct {
    double p[2 * SC_NB], y0[2 * SC_NB], t[SC_NT], atol[2];
    float y0f[2 * SC_NB];
} sc_inputs;

void sc_inputs_init(sc_inputs *in);

/* The case's problem (owned by the caller: ot_ode_free); asserts with Check. */
ot_ode *sc_make_ode(const sc_case *c, const sc_inputs *in);

/* The case's solve: its status, *out as the call leaves it. */
int sc_run_solve(const sc_case *c, const ot_ode *ode, const sc_inputs *in,
                 ot_solution **out);

/* NULL when lane b of got is the reference's bit for bit (values, times,
 * sensitivities, gradients, root, statistics), else what differs (a static
 * string). Asserts nothing, so a forked child may call it. */
const char *sc_lane_differs(const ot_solution *got, const ot_solution *ref, int64_t b);

/* Whether case i is this process's: OT_INJECT_SHARD="s/n" (make runs n
 * processes at once, one a core, each on the cases i with i % n == s);
 * unset or malformed: every case (malformed also prints why). */
int sc_in_shard(int i);

/* The shard as words for the summary lines: "shard s of n" or "every case". */
const char *sc_shard_name(void);

#endif
