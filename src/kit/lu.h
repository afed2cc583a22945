/* Private: LU with partial pivoting of one dense column-major n x n block,
 * and the solve with it, for host code and CUDA kernels alike (OT__HD):
 * lockstep's block LU on the CPU and on the device, and any solver that
 * factors a lane's own matrix. */
#ifndef OT_SRC_KIT_LU_H
#define OT_SRC_KIT_LU_H

#include <math.h>
#include <sundials/sundials_types.h>

#include "core/host_device.h"

/* LU with partial pivoting of one column-major n x n block a, in place, and
 * the solve with it: the operations of SUNDlsMat_denseGETRF/GETRS (which
 * lanes mode's SUNLinSol_Dense calls) in the same order, so one lane of
 * lockstep stays bit-identical to lanes mode. Returns 0, or k + 1 when pivot
 * k is zero. */
static inline OT__HD sunindextype ot__lu_factor(sunrealtype *a, sunindextype n,
                                                sunindextype *p)
{
    for (sunindextype k = 0; k < n; k++) {
        sunrealtype *col_k = a + k * n;
        sunindextype l = k;
        for (sunindextype i = k + 1; i < n; i++)
            if (fabs(col_k[i]) > fabs(col_k[l]))
                l = i;
        p[k] = l;
        if (col_k[l] == 0)
            return k + 1;
        if (l != k)
            for (sunindextype i = 0; i < n; i++) {
                const sunrealtype t = a[i * n + l];
                a[i * n + l] = a[i * n + k];
                a[i * n + k] = t;
            }
        const sunrealtype mult = 1.0 / col_k[k];
        for (sunindextype i = k + 1; i < n; i++)
            col_k[i] *= mult;
        for (sunindextype j = k + 1; j < n; j++) {
            sunrealtype *col_j = a + j * n;
            const sunrealtype a_kj = col_j[k];
            if (a_kj != 0)
                for (sunindextype i = k + 1; i < n; i++)
                    col_j[i] -= a_kj * col_k[i];
        }
    }
    return 0;
}

/* b = A^-1 b with the factors and pivots p of ot__lu_factor. */
static inline OT__HD void ot__lu_solve(const sunrealtype *a, sunindextype n,
                                       const sunindextype *p, sunrealtype *b)
{
    for (sunindextype k = 0; k < n; k++) {
        const sunindextype pk = p[k];
        if (pk != k) {
            const sunrealtype t = b[k];
            b[k] = b[pk];
            b[pk] = t;
        }
    }
    for (sunindextype k = 0; k < n - 1; k++) {
        const sunrealtype *col_k = a + k * n;
        for (sunindextype i = k + 1; i < n; i++)
            b[i] -= col_k[i] * b[k];
    }
    for (sunindextype k = n - 1; k > 0; k--) {
        const sunrealtype *col_k = a + k * n;
        b[k] /= col_k[k];
        for (sunindextype i = 0; i < k; i++)
            b[i] -= col_k[i] * b[k];
    }
    b[0] /= a[0];
}

#endif
