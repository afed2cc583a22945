// Models shared by the tests. The Robertson and Lotka-Volterra callbacks are
// written operation for operation like those in native_ref.c, so wasm and
// native evaluate the same floating-point expressions. Each loops over the k
// lanes of the call, so it serves lanes mode (k = 1) and lockstep (k = nbatch).

export function robertsonRhs(t, y, p, dydt, k) {
  for (let b = 0; b < k; b++) {
    const Y = 3 * b, P = 3 * b;
    dydt[Y] = -p[P] * y[Y] + p[P + 1] * y[Y + 1] * y[Y + 2];
    dydt[Y + 2] = p[P + 2] * y[Y + 1] * y[Y + 1];
    dydt[Y + 1] = -dydt[Y] - dydt[Y + 2];
  }
}

export function robertsonJac(t, y, p, J, k) {
  for (let b = 0; b < k; b++) {
    const Y = 3 * b, P = 3 * b, A = 9 * b;
    J[A] = -p[P];
    J[A + 1] = p[P];
    J[A + 3] = p[P + 1] * y[Y + 2];
    J[A + 4] = -p[P + 1] * y[Y + 2] - 2 * p[P + 2] * y[Y + 1];
    J[A + 5] = 2 * p[P + 2] * y[Y + 1];
    J[A + 6] = p[P + 1] * y[Y + 1];
    J[A + 7] = -p[P + 1] * y[Y + 1];
  }
}

export function lotkaVolterraRhs(t, y, p, dydt, k) {
  for (let b = 0; b < k; b++) {
    const Y = 2 * b, P = 4 * b;
    dydt[Y] = p[P] * y[Y] - p[P + 1] * y[Y] * y[Y + 1];
    dydt[Y + 1] = p[P + 2] * y[Y] * y[Y + 1] - p[P + 3] * y[Y + 1];
  }
}

// y' = -k y, one state, one parameter: y = y0 exp(-k t).
export function decayRhs(t, y, p, dydt, k) {
  for (let b = 0; b < k; b++) dydt[b] = -p[b] * y[b];
}
