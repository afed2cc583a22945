"""odetensor's Python package: answers against closed forms and the compiled
path, zero copies, errors and callbacks' failures."""

import gc
import os
import resource
import signal
import sys
import time
import threading

import numpy as np
import pytest

import odetensor as ot
from conftest import decay_jac, decay_rhs

T = np.array([0.0, 0.5, 1.0, 2.0])
RATES = np.linspace(0.5, 2.0, 40)[None, :]


def decay(**kw):
    return ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, rtol=1e-10, atol=1e-12, **kw)


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
def test_decay_meets_its_closed_form_in_both_modes(mode):
    r = ot.solve_dense(decay(mode=mode, threads=2), [1.0], RATES, T)
    assert r.ok and r.ys.shape == (1, len(T), RATES.shape[1])
    exact = np.exp(-RATES[0][None, :] * T[:, None])
    assert np.max(np.abs(r.ys[0] - exact)) < 1e-8
    assert list(r.status) == ["OT_OK"] * RATES.shape[1]
    assert np.all(r.stats["steps"] > 0) and np.all(r.stats["final_time"] == T[-1])


def test_a_python_rhs_and_a_compiled_one_give_the_same_bits(models):
    py = ot.solve_dense(decay(mode="lockstep"), [1.0], RATES, T)
    c = ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=models["decay_rhs"],
                                  mode="lockstep", rtol=1e-10, atol=1e-12), [1.0], RATES, T)
    assert np.array_equal(py.ys, c.ys)
    assert np.array_equal(py.stats["steps"], c.stats["steps"])


def test_a_compiled_rhs_runs_lanes_mode_on_every_thread_bit_for_bit(models):
    p = dict(nstates=1, nparams=1, rhs=models["decay_rhs"], jac=models["decay_jac"],
             mode="lanes", rtol=1e-9, atol=1e-12)
    one = ot.solve_dense(ot.Problem(threads=1, **p), [1.0], RATES, T)
    two = ot.solve_dense(ot.Problem(threads=2, **p), [1.0], RATES, T)
    py = ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, jac=decay_jac,
                                   mode="lanes", threads=2, rtol=1e-9, atol=1e-12),
                        [1.0], RATES, T)
    assert np.array_equal(one.ys, two.ys) and np.array_equal(one.ys, py.ys)
    assert np.all(one.stats["jac_evals"] > 0)


def test_robertson_compiled_matches_lanes_and_lockstep_within_tolerance(models):
    k = np.asfortranarray(np.array([[0.04] * 8, [1e4] * 8, [3e7] * 8])
                          * np.linspace(0.9, 1.1, 8)[None, :])
    t = np.logspace(-2, 4, 7)
    kw = dict(nstates=3, nparams=3, rhs=models["robertson_rhs"], rtol=1e-8,
              atol=np.array([1e-12, 1e-14, 1e-12]))
    a = ot.solve_dense(ot.Problem(mode="lanes", **kw), np.array([1.0, 0, 0]), k, t)
    b = ot.solve_dense(ot.Problem(mode="lockstep", **kw), np.array([1.0, 0, 0]), k, t)
    assert a.ok and b.ok
    np.testing.assert_allclose(a.ys, b.ys, rtol=1e-5, atol=1e-10)
    np.testing.assert_allclose(a.ys.sum(axis=0), 1.0, rtol=1e-7)  # mass is conserved


def test_results_are_views_that_outlive_the_result_and_export_by_dlpack():
    r = ot.solve_dense(decay(), [1.0], RATES, T)
    ys = r.ys
    tensor = r.tensors["ys"]
    again = np.from_dlpack(tensor)
    assert np.shares_memory(ys, again)
    assert tensor.__dlpack_device__() == (1, 0)
    expected = ys.copy()
    del r, tensor
    gc.collect()
    assert np.array_equal(ys, expected) and np.array_equal(again, expected)
    assert ys.flags.f_contiguous and ys.flags.writeable


def test_c_ordered_input_names_asfortranarray_and_copy_true_solves_it():
    y0 = np.ascontiguousarray(np.ones((2, 3)))
    p = ot.Problem(nstates=2, rhs=lambda t, y, q, f: np.negative(y, out=f))
    with pytest.raises(ot.OdeTensorError) as e:
        ot.solve_dense(p, y0, None, [1.0])
    name, code, msg = e.value.args
    assert name == "OT_ERR_LAYOUT" and code < 0 and "np.asfortranarray(y0)" in msg
    r = ot.solve_dense(p, y0, None, [1.0], copy=True)
    assert r.ok and np.allclose(r.ys[:, 0, :], np.exp(-1.0), rtol=1e-5)


def test_bad_inputs_raise_with_the_library_message():
    with pytest.raises(ot.OdeTensorError) as e:
        ot.solve_dense(decay(), [1.0], RATES, [1.0, 0.5])
    assert e.value.args[0] == "OT_ERR_VALUE"
    with pytest.raises(ot.OdeTensorError) as e:
        ot.solve_dense(decay(), np.array([1], dtype=np.int64), RATES, T)
    assert e.value.args[0] == "OT_ERR_DTYPE" and "y0" in e.value.args[2]
    with pytest.raises(ot.OdeTensorError) as e:
        ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, rtol=-1.0), [1.0],
                       RATES, T)
    assert e.value.args[0] == "OT_ERR_VALUE" and "rtol" in e.value.args[2]
    with pytest.raises(ValueError, match="method"):
        ot.solve_dense(decay(method="rk4"), [1.0], RATES, T)
    with pytest.raises(ot.OdeTensorError) as e:
        ot.solve_dense(decay(), object(), RATES, T)
    assert "no array" in e.value.args[2]


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
def test_an_exception_in_a_callback_fails_its_lane_only(mode):
    def rhs(t, y, p, dydt):
        lane = ot.callback_lane()
        if y.shape[1] == 1 and lane == 3:
            raise ValueError("lane three is broken")
        if y.shape[1] > 1 and lane <= 3 < lane + y.shape[1]:
            raise ValueError("lane three is broken")
        np.multiply(-p, y, out=dydt)

    r = ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=rhs, mode=mode), [1.0],
                       RATES[:, :6], T)
    assert r.nfailed == 1 and r.status[3] == "OT_ERR_CALLBACK"
    assert r.message[3].startswith("rhs raised ValueError: lane three is broken")
    assert isinstance(r.errors[3], ValueError) and r.errors[0] is None
    good = [b for b in range(6) if b != 3]
    exact = np.exp(-RATES[0, good][None, :] * T[:, None])
    assert np.max(np.abs(r.ys[0][:, good] - exact)) < 1e-4


def test_a_callback_returning_something_else_is_told_to_write_in_place():
    r = ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=lambda t, y, p, f: -p * y),
                       [1.0], RATES[:, :2], T)
    assert r.nfailed == 2 and "write the results into the output array" in r.message[0]


def test_forward_sensitivities_match_the_derivative_of_the_closed_form():
    r = ot.solve_fwd_sens(decay(method="bdf"), [1.0], RATES, T)
    assert r.ok and len(r.sens) == 1
    k = RATES[0][None, :]
    dk = -T[:, None] * np.exp(-k * T[:, None])
    assert np.max(np.abs(r.sens[0][0] - dk)) < 1e-6


def test_the_adjoint_gradient_matches_central_differences():
    data = np.full((1, len(T)), 0.3)
    p = decay()
    r = ot.solve_adjoint(p, [1.0], RATES[:, :5], T, data)
    assert r.ok and r.grad_params.shape == (1, 5)

    def loss(k):
        y = ot.solve_dense(p, [1.0], k, T).ys[0]
        return ((y - data[0][:, None]) ** 2).sum(axis=0)

    h = 1e-6
    fd = (loss(RATES[:, :5] + h) - loss(RATES[:, :5] - h)) / (2 * h)
    np.testing.assert_allclose(r.grad_params[0], fd, rtol=1e-5)
    np.testing.assert_allclose(r.grad_loss, loss(RATES[:, :5]), rtol=1e-7)


def test_bolus_doses_follow_the_superposition_of_exponentials():
    # One compartment, elimination k, a bolus of 1 at t = 0, 1 and 2.
    def on_event(t, root, y, p, lane):
        y[0] += 1.0

    prob = ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, on_event=on_event, rtol=1e-10,
                      atol=1e-12)
    t = np.array([0.5, 1.5, 2.5, 3.0])
    r = ot.solve_dense_with(prob, [0.0], RATES[:, :4], t, stops=np.array([0.0, 1.0, 2.0]))
    k = RATES[0, :4][None, :]
    exact = sum(np.where(t[:, None] >= d, np.exp(-k * (t[:, None] - d)), 0.0)
                for d in (0.0, 1.0, 2.0))
    assert r.ok and np.max(np.abs(r.ys[0] - exact)) < 1e-8
    assert np.all(r.events["count"] == 3)


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
@pytest.mark.parametrize("before", [False, True])
def test_outputs_at_doses_show_the_state_before_them_with_outputs_before_stops(mode, before):
    # Boluses of 1 at t = 0, 1 and 2, outputs at each: with the option the
    # state before each dose (NONMEM's trough; 0 at t0), without, after it.
    def on_event(t, root, y, p, lane):
        y[0] += 1.0

    prob = ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, on_event=on_event, rtol=1e-8,
                      atol=1e-10, mode=mode, outputs_before_stops=before)
    t = np.array([0.0, 0.5, 1.0, 2.0, 3.0])
    r = ot.solve_dense_with(prob, [0.0], RATES[:, :4], t, stops=np.array([0.0, 1.0, 2.0]))
    k = RATES[0, :4][None, :]
    given = (lambda d: t[:, None] > d) if before else (lambda d: t[:, None] >= d)
    exact = sum(np.where(given(d), np.exp(-k * (t[:, None] - d)), 0.0)
                for d in (0.0, 1.0, 2.0))
    assert r.ok and np.all(r.events["count"] == 3)
    np.testing.assert_allclose(r.ys[0], exact, rtol=3e-6, atol=1e-9)
    if before:
        assert np.all(r.ys[0, 0] == 0.0)  # the output at t0 before its dose


def test_roots_stop_lanes_at_the_crossing():
    prob = ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, rtol=1e-10, atol=1e-12,
                      roots=lambda t, y, p, g: np.subtract(y, 0.5, out=g), nroots=1)
    r = ot.solve_dense(prob, [1.0], RATES[:, :3], np.array([0.1, 5.0]))
    np.testing.assert_allclose(r.root_time, np.log(2) / RATES[0, :3], rtol=1e-8)
    assert np.all(r.root_index == 0)


def test_all_steps_are_recorded_with_counts():
    r = ot.solve(decay(), [1.0], RATES[:, :3], 2.0)
    assert r.ok and r.ts.shape[1] == 3
    for b in range(3):
        n = r.count[b]
        assert r.ts[n - 1, b] == 2.0 and np.all(np.isnan(r.ts[n:, b]))


def test_ctrl_c_in_a_callback_cancels_and_keeps_what_was_reached():
    calls = []

    def rhs(t, y, p, dydt):
        calls.append(t)
        if t > 1.0:
            raise KeyboardInterrupt
        np.multiply(-p, y, out=dydt)

    with pytest.raises(ot.Cancelled) as e:
        ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=rhs), [1.0], RATES[:, :4], T)
    res = e.value.result
    assert isinstance(e.value, KeyboardInterrupt)
    assert all(s in ("OT_ERR_CANCELLED", "OT_OK") for s in res.status)
    assert "OT_ERR_CANCELLED" in res.status and res.count.max() >= 2


def test_the_progress_callable_may_cancel():
    seen = []

    def progress(done, total):
        seen.append((done, total))
        return True

    r = ot.solve_dense(decay(mode="lanes", threads=1, progress=progress), [1.0], RATES, T)
    assert seen and seen[0][1] == RATES.shape[1]
    assert "OT_ERR_CANCELLED" in r.status


def test_concurrent_solves_from_python_threads_agree_with_one_alone():
    ref = ot.solve_dense(decay(), [1.0], RATES, T).ys
    out = [None] * 4

    def work(i):
        out[i] = ot.solve_dense(decay(threads=2), [1.0], RATES, T).ys

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert all(o is not None and np.array_equal(o, ref) for o in out)


def test_a_python_rhs_in_lanes_mode_on_two_threads_does_not_deadlock():
    r = ot.solve_dense(decay(mode="lanes", threads=2), [1.0], RATES, T)
    assert r.ok


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="ASan's quarantine holds freed memory; the plain build measures RSS")
def test_many_solves_keep_memory_flat():
    prob = decay()
    k = np.asfortranarray(RATES[:, :2])
    for _ in range(500):
        ot.solve_dense(prob, [1.0], k, T)
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(10000):
        r = ot.solve_dense(prob, [1.0], k, T)
        del r
    gc.collect()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 4096, f"RSS grew by {after - before} KiB over 10,000 solves"


def test_solves_hold_no_reference_to_their_inputs_or_callables_after():
    k = np.asfortranarray(RATES[:, :3])
    prob = decay()
    gc.collect()  # what earlier tests left for the collector holds decay_rhs too
    before = (sys.getrefcount(k), sys.getrefcount(decay_rhs), sys.getrefcount(prob))
    for _ in range(50):
        r = ot.solve_dense(prob, [1.0], k, T)
        ys = r.ys
        del r
    del ys
    gc.collect()
    assert (sys.getrefcount(k), sys.getrefcount(decay_rhs), sys.getrefcount(prob)) == before


def test_numba_cfunc_callbacks_run_without_the_interpreter():
    numba = pytest.importorskip("numba")
    from numba import types

    sig = types.int32(types.float64, types.CPointer(types.float64),
                      types.CPointer(types.float64), types.CPointer(types.float64),
                      types.int64, types.int64, types.voidptr)

    @numba.cfunc(sig)
    def rhs(t, y, p, dydt, n, k, user):
        for b in range(k):
            dydt[b] = -p[b] * y[b]
        return 0

    c = ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=rhs, mode="lanes", rtol=1e-10,
                                  atol=1e-12), [1.0], RATES, T)
    py = ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, mode="lanes",
                                   rtol=1e-10, atol=1e-12), [1.0], RATES, T)
    assert np.array_equal(c.ys, py.ys)


def test_pytorch_tensors_go_in_and_come_out_without_a_copy():
    torch = pytest.importorskip("torch")
    k = torch.tensor(RATES, dtype=torch.float64).t().contiguous().t()  # column-major
    r = ot.solve_dense(decay(), torch.ones(1, dtype=torch.float64), k, torch.tensor(T))
    ys = torch.from_dlpack(r.tensors["ys"])
    assert np.shares_memory(ys.numpy(), r.ys)
    assert torch.allclose(ys[0, -1], torch.exp(-2.0 * k[0]), atol=1e-8)


def test_a_real_ctrl_c_cancels_a_long_solve_within_a_fraction_of_a_second(models):
    # Robertson to t = 1e11 with a compiled rhs in lanes mode: seconds of work.
    k = np.asfortranarray(np.tile([[0.04], [1e4], [3e7]], (1, 20000)))
    prob = ot.Problem(nstates=3, nparams=3, rhs=models["robertson_rhs"], mode="lanes",
                      threads=2, rtol=1e-12, atol=1e-20, max_steps=10**7)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(ot.Cancelled) as e:
        ot.solve_dense(prob, np.array([1.0, 0.0, 0.0]), k, np.logspace(-4, 11, 16))
    elapsed = time.monotonic() - start
    timer.cancel()
    res = e.value.result
    assert "OT_ERR_CANCELLED" in res.status
    assert elapsed < 5.0, f"the solve returned {elapsed:.2f} s after start (Ctrl-C at 0.3 s)"


def test_a_custom_loss_gives_the_sum_of_squares_gradient():
    data = np.full((1, len(T)), 0.3)

    def loss(t, i, lane, y, p, g, dgdy, dgdp):
        d = y[0] - data[0, i]
        g[0] = d * d
        dgdy[0] = 2.0 * d

    squares = ot.solve_adjoint(decay(), [1.0], RATES[:, :5], T, data)
    custom = ot.solve_adjoint(decay(), [1.0], RATES[:, :5], T, loss=loss)
    assert custom.ok
    np.testing.assert_allclose(custom.grad_params, squares.grad_params, rtol=1e-9)
    np.testing.assert_allclose(custom.grad_loss, squares.grad_loss, rtol=1e-12)
    with pytest.raises(ValueError, match="data"):
        ot.solve_adjoint(decay(), [1.0], RATES[:, :5], T)


def test_an_integral_term_matches_its_closed_form_and_derivative():
    def nothing(t, i, lane, y, p, g, dgdy, dgdp):
        pass  # g = 0 at the outputs: L is the integral alone

    def integrand(t, lane, y, p, q, dqdy, dqdp):
        q[0] = y[0] * y[0]
        dqdy[0] = 2.0 * y[0]

    k = RATES[0, :5]
    r = ot.solve_adjoint(decay(), [1.0], RATES[:, :5], T, loss=nothing, integrand=integrand)
    tf = T[-1]
    e = np.exp(-2 * k * tf)
    np.testing.assert_allclose(r.grad_loss, (1 - e) / (2 * k), rtol=1e-6)
    np.testing.assert_allclose(r.grad_params[0], tf * e / k - (1 - e) / (2 * k * k),
                               rtol=1e-5)


def test_gmres_with_a_python_preconditioner_solves_and_iterates():
    def setup(t, y, p, gamma, jok, work):
        work[0] = 1.0 / (1.0 + gamma * p[0])  # (I - gamma J)^-1, J = -p

    def solve(t, y, p, gamma, r, z, work):
        z[0] = r[0] * work[0]

    prob = ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, mode="lanes", threads=2,
                      linear_solver="gmres", precondition=(setup, solve), nwork=1,
                      rtol=1e-9, atol=1e-12)
    r = ot.solve_dense(prob, [1.0], RATES[:, :6], T)
    assert r.ok and np.all(r.stats["lin_iters"] > 0)
    exact = np.exp(-RATES[0, :6][None, :] * T[:, None])
    assert np.max(np.abs(r.ys[0] - exact)) < 1e-7


def test_an_exception_in_the_loss_fails_its_lane_with_the_text():
    def loss(t, i, lane, y, p, g, dgdy, dgdp):
        if lane == 2:
            raise RuntimeError("bad datum")
        g[0] = y[0]
        dgdy[0] = 1.0

    r = ot.solve_adjoint(decay(), [1.0], RATES[:, :4], T, loss=loss)
    assert r.status[2] != "OT_OK" and r.message[2].startswith("loss raised RuntimeError: bad datum")
    assert [s for b, s in enumerate(r.status) if b != 2] == ["OT_OK"] * 3


class OnlyDlpack:
    """An array that offers DLPack and nothing else (no buffer protocol)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_inputs_by_dlpack_alone_give_the_same_bits_as_buffers():
    k = np.asfortranarray(RATES[:, :7])
    a = ot.solve_dense(decay(), np.ones(1), k, T)
    b = ot.solve_dense(decay(), OnlyDlpack(np.ones(1)), OnlyDlpack(k), OnlyDlpack(T))
    assert np.array_equal(a.ys, b.ys)
    with pytest.raises(ot.OdeTensorError) as e:  # row-major through DLPack: refused, named
        ot.solve_dense(ot.Problem(nstates=2, rhs=lambda t, y, p, f: np.negative(y, out=f)),
                       OnlyDlpack(np.ascontiguousarray(np.ones((2, 3)))), None, T)
    assert "y0" in e.value.args[2] and "np.asfortranarray" in e.value.args[2]


def test_a_scipy_low_level_callable_is_a_compiled_rhs(models):
    scipy = pytest.importorskip("scipy")
    rhs = scipy.LowLevelCallable(models["decay_rhs"])
    c = ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=rhs, mode="lanes", rtol=1e-10,
                                  atol=1e-12), [1.0], RATES, T)
    py = ot.solve_dense(decay(mode="lanes"), [1.0], RATES, T)
    assert np.array_equal(c.ys, py.ys)


def test_every_refusal_names_its_argument():
    def refused(call, status, *words):
        with pytest.raises(ot.OdeTensorError) as e:
            call()
        name, code, msg = e.value.args
        assert name == status, (name, msg)
        assert code == {"OT_ERR_ARG": -1, "OT_ERR_SHAPE": -3, "OT_ERR_VALUE": -14}[status]
        for w in words:
            assert w in msg, (w, msg)

    refused(lambda: ot.solve_dense(ot.Problem(nstates=0, rhs=decay_rhs), [1.0], None, T),
            "OT_ERR_ARG", "nstates")
    refused(lambda: ot.solve_dense(decay(), [1.0], np.ones((2, 3), order="F"), T),
            "OT_ERR_SHAPE", "params")
    refused(lambda: ot.solve_dense(decay(), [1.0, 2.0], RATES, T), "OT_ERR_SHAPE", "y0")
    refused(lambda: ot.solve_dense(decay(), [1.0], RATES, [np.nan]), "OT_ERR_VALUE", "t_eval")
    refused(lambda: ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=decay_rhs,
                                              roots=lambda t, y, p, g: None, nroots=2,
                                              root_directions=["rising"]), [1.0], RATES, T),
            "OT_ERR_SHAPE", "root_directions")
    refused(lambda: ot.solve_dense(decay(max_steps=0), [1.0], RATES, T), "OT_ERR_VALUE",
            "max_steps")
    refused(lambda: ot.solve_fwd_sens(ot.Problem(nstates=1, rhs=decay_rhs), [1.0], None, T),
            "OT_ERR_ARG")
    with pytest.raises(TypeError, match="rhs"):
        ot.solve_dense(ot.Problem(nstates=1, rhs="not a function"), [1.0], None, T)
    with pytest.raises(ValueError, match="root_directions"):
        ot.solve_dense(ot.Problem(nstates=1, rhs=decay_rhs, roots=lambda *a: None,
                                  nroots=1, root_directions=["up"]), [1.0], None, T)


def test_a_lane_with_a_nan_input_fails_alone():
    k = RATES[:, :4].copy()
    k[0, 1] = np.nan
    r = ot.solve_dense(decay(), [1.0], np.asfortranarray(k), T)
    assert r.status[1] != "OT_OK" and "params" in r.message[1]
    assert [r.status[b] for b in (0, 2, 3)] == ["OT_OK"] * 3


def test_per_lane_starts_and_times_and_a_lane_offset():
    t0 = np.array([0.0, 0.5, 1.0])
    t_eval = np.asfortranarray([[1.0, 1.5, 2.0], [2.0, 2.5, np.nan]])  # [nt, nbatch]
    k = np.asfortranarray(RATES[:, :3])
    r = ot.solve_dense_with(decay(mode="lanes"), [1.0], k, t_eval, t0=t0)
    assert r.ok and r.ts.shape == (2, 3) and np.isnan(r.ys[0, 1, 2])
    exact = np.exp(-k[0][None, :] * (t_eval - t0[None, :]))
    assert np.nanmax(np.abs(r.ys[0] - exact)) < 1e-8
    seen = set()

    def rhs(t, y, p, dydt):
        seen.add(ot.callback_lane())
        np.multiply(-p, y, out=dydt)

    ot.solve_dense(ot.Problem(nstates=1, nparams=1, rhs=rhs, mode="lanes", threads=1), [1.0],
                   k, T, lane_offset=100)
    assert seen == {100, 101, 102}


def test_float32_outputs_and_sensitivities_to_y0():
    r = ot.solve_dense(decay(output_dtype="float32"), [1.0], RATES[:, :3], T)
    assert r.ys.dtype == np.float32
    assert np.max(np.abs(r.ys[0] - np.exp(-RATES[0, :3][None, :] * T[:, None]))) < 1e-6
    s = ot.solve_fwd_sens(decay(sens_initial=True), [2.0], RATES[:, :3], T)
    assert len(s.sens) == 2  # d/dk, then d/dy0
    np.testing.assert_allclose(s.sens[1][0], np.exp(-RATES[0, :3][None, :] * T[:, None]),
                               rtol=1e-6)
