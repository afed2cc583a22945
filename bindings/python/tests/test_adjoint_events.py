"""The adjoint through doses and events (issue 25) from Python: the dosed
oral one-compartment model's loss gradient against the complex step of the
closed-form loss and against the forward sensitivities' gradient, and the
bouncing ball's dL/d(g, e, h0) against the flight formula, in both modes."""

import numpy as np
import pytest

import odetensor as ot
from test_sens_events import DOSES, P, T, closed, conc, dose, rhs

DATA = np.asfortranarray(np.stack([[0.9 * closed(t, P[:, b]) + 0.01 for t in T]
                                   for b in range(P.shape[1])], axis=1)[None])  # [1, nt, nb]


def loss_closed(p, b):
    return sum((closed(t, p) - DATA[0, i, b]) ** 2 for i, t in enumerate(T))


def dosed(mode):
    prob = ot.Problem(nstates=2, nparams=6, rhs=rhs, out=conc, nout=1, on_event=dose,
                      mode=mode, rtol=1e-10, atol=1e-12)
    stops = np.asfortranarray(DOSES[:, None] + P[4][None, :])  # [nstops, nbatch]
    stops_dp = np.zeros((6, len(DOSES)), order="F")
    stops_dp[4] = 1.0  # d stop / d lag, every lane
    return prob, stops, stops_dp


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
def test_dosed_adjoint_matches_the_closed_form_and_the_sensitivities(mode):
    prob, stops, stops_dp = dosed(mode)
    r = ot.solve_adjoint(prob, [0.0, 0.0], P, T, DATA, stops=stops, stops_dp=stops_dp)
    assert r.ok, r.message
    f = ot.solve_fwd_sens(prob, [0.0, 0.0], P, T, stops=stops, stops_dp=stops_dp)
    assert f.ok, f.message
    for b in range(P.shape[1]):
        p = P[:, b]
        assert abs(r.grad_loss[b] - loss_closed(p, b)) <= 1e-7 * loss_closed(p, b)
        for j in range(6):
            pc = p.astype(complex)
            pc[j] += 1e-30j
            want = np.imag(loss_closed(pc, b)) / 1e-30
            fwd = np.sum(2 * (f.ys[0, :, b] - DATA[0, :, b]) * f.sens[j][0, :, b])
            got = r.grad_params[j, b]
            assert abs(got - want) <= 1e-6 * abs(want) + 1e-9, (b, j, got, want)
            assert abs(got - fwd) <= 1e-6 * abs(fwd) + 1e-9, (b, j, got, fwd)


def ball_rhs(t, y, p, dy):
    dy[0] = y[1]
    dy[1] = -p[0]


def floor(t, y, p, g):
    g[0] = y[0]


def bounce(t, root, y, p, lane):
    y[1] = -p[1] * y[1]


def height(t, i, lane, y, p, g, dgdy, dgdp):
    g[0] = y[0]
    dgdy[0] = 1.0


def flight(T_, g, e, h0):
    t1 = np.sqrt(2 * h0 / g)
    s = T_ - t1
    return e * g * t1 * s - g / 2 * s * s


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
def test_bouncing_ball_adjoint_matches_the_flight_formula(mode):
    prob = ot.Problem(nstates=2, nparams=2, rhs=ball_rhs, roots=floor, nroots=1,
                      root_directions=["falling"], event_actions=["handle"],
                      on_event=bounce, mode=mode, rtol=1e-10, atol=1e-12)
    p = np.asfortranarray(np.array([[9.81, 0.8], [9.81, 0.9]]).T)
    y0 = np.asfortranarray(np.array([[2.0, 0.0], [1.0, 0.0]]).T)
    times = np.array([0.9, 1.2])  # after the first bounce, before the second
    r = ot.solve_adjoint(prob, y0, p, times, loss=height)
    assert r.ok, r.message
    d = 1e-30j
    for b in range(2):
        g, e, h0 = p[0, b], p[1, b], y0[0, b]
        want = [sum(np.imag(flight(t, g + d, e, h0)) for t in times) / 1e-30,
                sum(np.imag(flight(t, g, e + d, h0)) for t in times) / 1e-30,
                sum(np.imag(flight(t, g, e, h0 + d)) for t in times) / 1e-30]
        got = [r.grad_params[0, b], r.grad_params[1, b], r.grad_y0[0, b]]
        for w, x in zip(want, got):
            assert abs(x - w) <= 1e-6 * abs(w) + 1e-9, (b, x, w)


def test_a_root_that_stops_its_lane_is_refused_with_the_adjoint():
    prob = ot.Problem(nstates=2, nparams=2, rhs=ball_rhs, roots=floor, nroots=1,
                      on_event=bounce)
    with pytest.raises(ot.OdeTensorError, match="event_actions: root 0 stops its lane"):
        ot.solve_adjoint(prob, [1.0, 0.0], [9.81, 0.8], [0.3], loss=height)
    with pytest.raises(ValueError, match="lane_offset: not with stops"):
        ot.solve_adjoint(prob, [1.0, 0.0], [9.81, 0.8], [0.3], loss=height, stops=[0.1],
                         lane_offset=2)
