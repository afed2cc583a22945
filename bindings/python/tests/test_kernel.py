"""The kernel methods (issue 27) by name from Python: each against the
closed form of a decay, lane groups bit for bit a lane at a time, the
per-lane-time option, and the refusals."""

import ctypes

import numpy as np
import pytest

import odetensor as ot
from conftest import decay_jac, decay_rhs

T = np.array([0.0, 0.3, 1.0, 2.5])
RATES = np.linspace(0.5, 2.0, 21)[None, :]


def rtol_of(method):
    """Rosenbrock23 at its own (loose) tolerances: order 2 with each step's
    error within the tolerance, it is 620 tolerance units off at 1e-8."""
    return 1e-5 if method == "ros23" else 1e-8


def problem(method, **kw):
    return ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, method=method,
                      rtol=rtol_of(method), atol=1e-10, **kw)


@pytest.mark.parametrize("method", ot.KERNEL_METHODS)
def test_each_kernel_method_meets_the_closed_form(method):
    r = ot.solve_dense(problem(method), [1.0], RATES, T)
    assert r.ok, r.message
    exact = np.exp(-RATES[0][None, :] * T[:, None])
    units = np.abs(r.ys[0] - exact) / (1e-10 + rtol_of(method) * exact)
    assert units.max() < 100


@pytest.mark.parametrize("method", ["rodas4", "tsit5"])
def test_an_autonomous_problem_runs_in_groups_bit_for_bit(method):
    one = ot.solve_dense(problem(method, lane_group=1), [1.0], RATES, T)
    grp = ot.solve_dense(problem(method, autonomous=True, lane_group=8), [1.0], RATES, T)
    assert one.ok and grp.ok
    assert np.array_equal(np.asarray(one.ys), np.asarray(grp.ys))


def test_a_group_of_a_rhs_that_reads_t_is_refused():
    with pytest.raises(ot.OdeTensorError) as e:
        ot.solve_dense(problem("rodas4", lane_group=4), [1.0], RATES, T)
    assert e.value.args[0] == "OT_ERR_ARG" and "ot_ode_set_autonomous" in e.value.args[2]


def test_the_kernel_methods_have_no_sensitivities_yet():
    with pytest.raises(ot.OdeTensorError) as e:
        ot.solve_fwd_sens(problem("rodas5p"), [1.0], RATES, T)
    assert "the kernel solver has no forward sensitivities" in e.value.args[2]


@pytest.mark.parametrize("method", ot.KERNEL_METHODS)
def test_roots_stop_each_lane_at_its_crossing(method):
    """A root of y - 0.5 stops lane b at ln 2 / k_b, found on the kernel
    method's own dense output (kernel/roots.c)."""
    prob = problem(method, roots=lambda t, y, p, g: np.subtract(y, 0.5, out=g), nroots=1)
    r = ot.solve_dense(prob, [1.0], RATES, np.array([0.1, 5.0]))
    assert r.ok, r.message
    tol = 1e-3 if method == "ros23" else 1e-6
    np.testing.assert_allclose(r.root_time, np.log(2) / RATES[0], rtol=tol)
    assert np.all(r.root_index == 0)


@pytest.mark.parametrize("method", ["rodas5p", "tsit5", "bdf"])
def test_a_compiled_kernel_model_runs_with_no_python_call(models_lib, method):
    """tests/models.c's decay_kernel_model: the kernel methods run it compiled,
    bit for bit the same lanes through Python callbacks a lane at a time;
    any other method takes its rhs and Jacobian as C callbacks."""
    addr = ctypes.c_char.in_dll(models_lib, "decay_kernel_model")
    compiled = ot.solve_dense(
        ot.Problem(nstates=1, nparams=1, kernel_model=addr, method=method, rtol=1e-8,
                   atol=1e-10), [1.0], RATES, T)
    assert compiled.ok, compiled.message
    exact = np.exp(-RATES[0][None, :] * T[:, None])
    np.testing.assert_allclose(compiled.ys[0], exact, rtol=1e-6, atol=1e-9)
    if method in ot.KERNEL_METHODS:
        python = ot.solve_dense(problem(method, jac=decay_jac, lane_group=1), [1.0], RATES, T)
        assert np.array_equal(np.asarray(python.ys), np.asarray(compiled.ys))


def test_a_kernel_model_of_another_shape_or_beside_an_rhs_is_refused(models_lib):
    addr = ctypes.c_char.in_dll(models_lib, "decay_kernel_model")
    with pytest.raises(ot.OdeTensorError, match="n = 1, np = 1; the problem has n = 2"):
        ot.solve_dense(ot.Problem(nstates=2, nparams=1, kernel_model=addr,
                                  method="rodas4"), [1.0, 1.0], RATES, T)
    with pytest.raises(TypeError, match="kernel_model's own serve"):
        ot.Problem(nstates=1, nparams=1, rhs=decay_rhs, kernel_model=addr)._spec()
    with pytest.raises(TypeError, match="kernel_model: a str"):
        ot.Problem(nstates=1, nparams=1, kernel_model="decay")._spec()
