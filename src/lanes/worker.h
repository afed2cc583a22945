/* Private: the lanes-mode worker, shared by its setup (lane_worker.c) and its
 * per-lane solve (lane_solve.c). */
#ifndef OT_SRC_LANE_WORKER_H
#define OT_SRC_LANE_WORKER_H

#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nonlinearsolver.h>
#include <sundials/sundials_nvector.h>

#include "solve/solve.h"

struct ot__worker {
    const ot__plan *plan;
    int64_t n;
    SUNContext ctx;
    void *cv;
    N_Vector y;  /* no own data: points at an output column or ys_scratch */
    N_Vector y0; /* no own data: points at the lane's y0 column or y0_scratch */
    N_Vector atolv;
    SUNMatrix A;
    SUNLinearSolver LS;
    SUNNonlinearSolver NLS, NLSsens;
    N_Vector *yS;    /* [np], no own data */
    double *pbuf;    /* [2 np + 1]: the lane's params (CVODES perturbs them), then a
                        perturbed copy for output sensitivities */
    double *pbar;    /* [np] parameter scales for CVODES' difference quotients */
    double *scratch; /* one block, carved below */
    double *ys_scratch, *out_scratch, *y0_scratch, *yp_scratch, *ym_scratch,
        *diff_scratch, *sens_scratch, *yS0;
    ot_view p;         /* the lane's params as the callbacks see them */
    ot_view yview;     /* [n, 1] over CVODE's y, data set per call */
    ot_view_mut dview; /* [n, 1] over CVODE's dydt, data set per call */
    int cb_failed;
    int nan_count;             /* NaN/Inf results from callbacks in this lane */
    char cb_msg[200];          /* the lane's last callback problem */
    char cv_msg[200];          /* CVODE's last error message */
    double *steps_t, *steps_y; /* ot_solve: growable per-lane records */
    int64_t steps_cap;
};

/* Views over worker storage ([rows, cols] compact f64), for lane_solve.c. */
ot_view ot__cview(const double *data, int64_t rows);
ot_view_mut ot__mview(double *data, int64_t rows, int64_t cols);

#endif
