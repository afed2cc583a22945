"""Forward sensitivities through doses (issue 25) from Python: an oral
one-compartment model with a lag and bioavailability against the
complex-step derivatives of its closed-form superposition, with the
handler's central differences and with event_jac, in both modes."""

import numpy as np
import pytest

import odetensor as ot

DOSES = np.array([0.0, 12.0, 24.0])
T = np.array([0.75, 2.0, 6.0, 13.0, 20.0, 25.0, 36.0])  # no output at a dose
# p = (ka, CL, V, F, lag, amt), one column per patient
P = np.asfortranarray(np.array([[1.2, 3.0, 20.0, 0.8, 0.5, 100.0],
                                [0.7, 5.0, 35.0, 0.6, 0.25, 250.0]]).T)


def rhs(t, y, p, dy):
    dy[0] = -p[0] * y[0]
    dy[1] = p[0] * y[0] - p[1] / p[2] * y[1]


def conc(t, y, p, o):
    o[0] = y[1] / p[2]


def dose(t, root, y, p, lane):
    y[0] += p[3] * p[5]


def dose_jac(t, root, lane, y, p, dz, dzdt):
    dz[0, 2 + 3] = p[5]  # d gut+ / d F
    dz[0, 2 + 5] = p[3]  # d gut+ / d amt


def closed(t, p):
    ka, cl, v, f, lag, amt = p
    ke, c = cl / v, 0
    for d in DOSES:
        s = t - d - lag
        if np.real(s) >= 0:
            c = c + f * amt * ka / (v * (ka - ke)) * (np.exp(-ke * s) - np.exp(-ka * s))
    return c


def closed_dp(t, p, j):
    pc = p.astype(complex)
    pc[j] += 1e-30j
    return np.imag(closed(t, pc)) / 1e-30


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
@pytest.mark.parametrize("jac", [False, True])
def test_dosed_pk_gradients_match_the_closed_form(mode, jac):
    prob = ot.Problem(nstates=2, nparams=6, rhs=rhs, out=conc, nout=1, on_event=dose,
                      event_jac=dose_jac if jac else None, mode=mode, rtol=1e-10,
                      atol=1e-12)
    stops = np.asfortranarray(DOSES[:, None] + P[4][None, :])  # [nstops, nbatch]
    stops_dp = np.zeros((6, len(DOSES)), order="F")
    stops_dp[4] = 1.0  # d stop / d lag, every lane
    r = ot.solve_fwd_sens(prob, [0.0, 0.0], P, T, stops=stops, stops_dp=stops_dp)
    assert r.ok, r.message
    assert len(r.sens) == 6
    for b in range(P.shape[1]):
        p = P[:, b]
        want = np.array([closed(t, p) for t in T])
        assert np.max(np.abs(r.ys[0, :, b] - want)) < 1e-7 * p[5] / p[2]
        for j in range(6):
            d = np.array([closed_dp(t, p, j) for t in T])
            err = np.max(np.abs(r.sens[j][0, :, b] - d))
            assert err <= 1e-6 * np.max(np.abs(d)), (b, j, err)
    assert list(r.events["count"]) == [3, 3]


def test_stop_derivatives_need_forward_sensitivities_and_stops():
    prob = ot.Problem(nstates=2, nparams=6, rhs=rhs, on_event=dose)
    with pytest.raises(ot.OdeTensorError, match="stops_dp: given, but there are no stops"):
        ot.solve_fwd_sens(prob, [0.0, 0.0], P[:, 0], T, stops_dp=np.zeros((6, 1), order="F"))
    with pytest.raises(ValueError, match="lane_offset: not with stops"):
        ot.solve_fwd_sens(prob, [0.0, 0.0], P[:, 0], T, stops=[0.0], lane_offset=3)
