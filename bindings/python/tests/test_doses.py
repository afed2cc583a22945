"""Event tables from Python (issue 26): read_records, solve_doses,
solve_doses_fwd_sens and solve_doses_adjoint against the one-compartment
oral model's closed form (with F, ALAG and a RATE infusion), a steady
state's geometric series and a modelled duration, CSV, file and columns
alike, both modes, Python and compiled callbacks; what is refused; Ctrl-C."""

import gc
import os
import resource
import signal
import sys
import threading
import time

import numpy as np
import pytest

import odetensor as ot

NP = 5  # [ka, CL, V, F, ALAG]
TIGHT = dict(rtol=1e-10, atol=1e-10)

# Subject 1: oral 100 at 0 and (ADDL) 12, observations including the lagged
# dose's arrival 12.5 (pre-dose); subject 2: oral 80 at 0, then an IV
# infusion of 60 at RATE 20 into the central at 6 (no lag there).
CSV = """ID,TIME,EVID,AMT,RATE,CMT,II,ADDL,WT
1,0,1,100,.,1,12,1,70
1,1,0,.,.,2,.,.,.
1,6,0,.,.,2,.,.,.
1,12.5,0,.,.,2,.,.,.
1,20,0,.,.,2,.,.,.
2,0,1,80,.,1,.,.,55
2,2,0,.,.,2,.,.,.
2,6,1,60,20,2,.,.,.
2,7,0,.,.,2,.,.,.
2,12,0,.,.,2,.,.,.
"""
T_OF = [[1.0, 6.0, 12.5, 20.0], [2.0, 7.0, 12.0]]
PARAMS = np.array([[1.2, 3, 30, 0.7, 0.5], [0.8, 2, 25, 0.9, 0.25]]).T  # [NP, 2], F-order
DOSING = dict(compartments=2, f=[3, -1], lag=[4, -1], y0=[0.0, 0.0])


def closed(b, t, p):
    """Amounts [gut, central] of subject b at t: Bateman terms for the oral
    doses (F AMT at t_d + lag; pre-dose at the arrival) and, subject 2, the
    infusion's."""
    ka, cl, v, f, lag = p
    ke = cl / v
    g = c = 0.0
    for td, amt in ([(0, 100), (12, 100)] if b == 0 else [(0, 80)]):
        s = t - td - lag
        if s <= 0:
            continue
        g += f * amt * np.exp(-ka * s)
        c += f * amt * ka / (ka - ke) * (np.exp(-ke * s) - np.exp(-ka * s))
    if b == 1 and t > 6:  # 20 per hour from 6 to 9
        on = min(t, 9) - 6
        c += 20 / ke * (1 - np.exp(-ke * on)) * np.exp(-ke * (t - 6 - on))
    return np.array([g, c])


def oral(t, y, p, dydt):
    dydt[0] = -p[0] * y[0]
    dydt[1] = p[0] * y[0] - p[1] / p[2] * y[1]


def problem(mode, rhs=oral, **kw):
    return ot.Problem(nstates=2, nparams=NP, rhs=rhs, mode=mode, **TIGHT, **kw)


def near(got, want, rel, what):
    scale = np.maximum(np.abs(want), 1e-2)
    bad = np.abs(got - want) > rel * scale
    assert not np.any(bad), f"{what}: {got}, expected {want}"


def check_closed(r, what):
    assert r.ok, r.message
    assert r.ys.shape == (2, 4, 2) and r.ts.shape == (4, 2)
    for b in range(2):
        for j, t in enumerate(T_OF[b]):
            assert r.ts[j, b] == t
            near(r.ys[:, j, b], closed(b, t, PARAMS[:, b]), 1e-7, f"{what} lane {b} t {t}")
    assert np.isnan(r.ts[3, 1])  # subject 2 has 3 observations


def test_read_records_gives_rows_columns_subjects_and_covariates(tmp_path):
    r = ot.read_records(CSV)
    assert isinstance(r, ot.Records) and r.rows == 10
    assert r.subjects == [(1.0, 1, 5), (2.0, 6, 5)]
    assert list(r.columns) == ["ID", "TIME", "EVID", "AMT", "RATE", "CMT", "II", "ADDL", "WT"]
    amt = r.columns["AMT"]
    assert amt.dtype == np.float64 and amt[0] == 100 and np.isnan(amt[1])
    amt[0] = 5.0  # a copy: the records stay as read
    assert r.columns["AMT"][0] == 100
    np.testing.assert_array_equal(r.covariate("WT"), [70.0, 55.0])
    with pytest.raises(ot.OdeTensorError, match='no column "HT"'):
        r.covariate("HT")
    path = tmp_path / "pk.csv"
    path.write_text(CSV)
    for other in (ot.read_records(path), ot.read_records(CSV.encode()),
                  ot.read_records(r.columns), ot.read_records(r)):
        assert other.subjects == r.subjects
        for name, col in r.columns.items():
            np.testing.assert_array_equal(other.columns[name], col)
    assert ot.read_records(r) is r


class Frame:
    """A table as pandas' DataFrame offers it (pandas is not installed here):
    keys() the column names, frame[name] a column; no collections.abc.Mapping."""

    def __init__(self, columns):
        self._columns = columns

    def keys(self):
        return iter(self._columns)

    def __getitem__(self, name):
        return list(self._columns[name])


def test_a_dataframe_like_table_reads_as_its_columns():
    r = ot.read_records(CSV)
    f = ot.read_records(Frame(r.columns))
    for name, col in r.columns.items():
        np.testing.assert_array_equal(f.columns[name], col)
    with pytest.raises(TypeError, match="a column named 0; names must be str"):
        ot.read_records(Frame({0: [1.0]}))


def test_a_bad_record_is_refused_naming_its_row_and_column(tmp_path):
    with pytest.raises(ot.OdeTensorError) as e:
        ot.read_records("ID,TIME,AMT\n1,0,-5\n")
    assert e.value.args[0] == "OT_ERR_VALUE"
    assert "row 1 (ID 1), AMT: -5 is negative" in e.value.args[2]
    with pytest.raises(ot.OdeTensorError, match=r"row 2 \(ID 1\), AMT: -5 is negative"):
        ot.read_records({"ID": [1, 1], "TIME": [0, 1], "AMT": [1, -5]})
    with pytest.raises(ot.OdeTensorError, match="row 1 .*AMT: -5 is negative"):
        ot.solve_doses(problem("lanes"), "ID,TIME,AMT\n1,0,-5\n", **DOSING)
    with pytest.raises(ot.OdeTensorError, match="a str is CSV text"):
        ot.read_records(str(tmp_path / "pk.csv"))
    with pytest.raises(ot.OdeTensorError, match="nope.csv"):
        ot.read_records(tmp_path / "nope.csv")
    with pytest.raises(ot.OdeTensorError, match=r"records\[TIME\]: 1 values; every column"):
        ot.read_records({"ID": [1, 2], "TIME": [0]})
    with pytest.raises(ValueError, match=r"records\[ID\]"):
        ot.read_records({"ID": ["one"], "TIME": [0]})
    with pytest.raises(ValueError, match="no columns"):
        ot.read_records({})
    with pytest.raises(TypeError, match="expected CSV text"):
        ot.read_records(42)
    with pytest.raises(TypeError, match="expected odetensor records"):
        ot._core.records_rows(object())


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
def test_solve_doses_meets_the_closed_form_with_f_alag_and_an_infusion(mode):
    check_closed(ot.solve_doses(problem(mode), CSV, params=PARAMS, **DOSING), mode)


@pytest.mark.parametrize("method", ["rodas4", "rodas5p"])
def test_the_kernel_methods_solve_doses_to_the_closed_form(method):
    """odetensor's own Rosenbrock methods take the same stops and handler."""
    check_closed(ot.solve_doses(problem("lanes", method=method), CSV, params=PARAMS,
                                **DOSING), method)


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
def test_a_compiled_rhs_meets_the_closed_form_too(models, mode):
    r = ot.solve_doses(problem(mode, models["oral_rhs"], threads=2), CSV, params=PARAMS,
                       **DOSING)
    check_closed(r, f"compiled {mode}")
    if mode == "lanes":  # the same arithmetic as oral(): the same bits
        py = ot.solve_doses(problem(mode), CSV, params=PARAMS, **DOSING)
        np.testing.assert_array_equal(r.ys, py.ys)


def test_records_from_csv_a_file_and_columns_give_identical_results(tmp_path):
    path = tmp_path / "pk.csv"
    path.write_text(CSV)
    a = ot.solve_doses(problem("lanes"), CSV, params=PARAMS, **DOSING)
    for source in (path, ot.read_records(CSV).columns, ot.read_records(CSV)):
        b = ot.solve_doses(problem("lanes"), source, params=PARAMS, **DOSING)
        np.testing.assert_array_equal(b.ys, a.ys)
        np.testing.assert_array_equal(b.ts, a.ts)


def test_an_observation_at_a_dose_shows_the_state_after_it_with_post_dose():
    pre = ot.solve_doses(problem("lanes"), CSV, params=PARAMS, **DOSING)
    post = ot.solve_doses(problem("lanes"), CSV, params=PARAMS, post_dose=True, **DOSING)
    # subject 1's observation at 12.5 is its second dose's arrival: + F AMT in the gut
    near(post.ys[0, 2, 0] - pre.ys[0, 2, 0], 0.7 * 100, 1e-8, "gut after the dose")
    near(post.ys[1, 2, 0], pre.ys[1, 2, 0], 1e-8, "central")
    mask = np.ones(pre.ys.shape, bool)
    mask[0, 2, 0] = False
    np.testing.assert_allclose(post.ys[mask], pre.ys[mask], rtol=1e-8)


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
def test_forward_sensitivities_match_central_differences_of_the_closed_form(mode):
    r = ot.solve_doses_fwd_sens(problem(mode), CSV, params=PARAMS, **DOSING)
    assert r.ok and len(r.sens) == NP and r.sens[0].shape == (2, 4, 2)
    for b in range(2):
        p = PARAMS[:, b]
        for q in range(NP):
            h = 1e-6 * max(abs(p[q]), 1)
            hi, lo = p.copy(), p.copy()
            hi[q] += h
            lo[q] -= h
            for j, t in enumerate(T_OF[b]):
                # At the lagged dose's arrival (12.5) the pre-dose value's
                # derivative in the lag is one-sided: a later dose leaves it pre-dose.
                arrival = b == 0 and t == 12.5 and q == 4
                dl = closed(b, t, p if arrival else lo)
                want = (closed(b, t, hi) - dl) / (h if arrival else 2 * h)
                near(r.sens[q][:, j, b], want, 1e-4 if arrival else 1e-5,
                     f"{mode} d/dp{q} lane {b} t {t}")


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
def test_the_adjoint_gradient_matches_the_one_from_forward_sensitivities(mode):
    data = np.asfortranarray(5 + np.sin(np.arange(16.0)).reshape(2, 4, 2, order="F"))
    data[:, 3, 1] = np.nan  # subject 2 has 3 observations
    adj = ot.solve_doses_adjoint(problem(mode), CSV, data, params=PARAMS, **DOSING)
    fs = ot.solve_doses_fwd_sens(problem(mode), CSV, params=PARAMS, **DOSING)
    assert adj.ok and adj.grad_params.shape == (NP, 2)
    resid = np.nan_to_num(fs.ys - data)  # NaN data add no term
    want = np.array([[np.sum(2 * resid[:, :, b] * fs.sens[q][:, :, b]) for b in range(2)]
                     for q in range(NP)])
    near(adj.grad_params, want, 1e-5, f"{mode} dL/dp")
    near(adj.grad_loss, np.sum(resid**2, axis=(0, 1)), 1e-7, f"{mode} L")

    def loss(t, i, lane, y, p, g, dgdy, dgdp):  # the same sum of squares by a callable
        d = np.nan_to_num(y - data[:, i, lane])
        g[0] = np.sum(d * d)
        dgdy[:] = 2 * d

    custom = ot.solve_doses_adjoint(problem(mode), CSV, loss=loss, params=PARAMS, **DOSING)
    np.testing.assert_allclose(custom.grad_params, adj.grad_params, rtol=1e-9)


SS_CSV = """ID,TIME,EVID,AMT,CMT,II,SS
1,0,1,100,1,12,1
1,0,0,.,1,.,.
1,6,0,.,1,.,.
2,0,1,50,1,8,1
2,0,0,.,1,.,.
2,6,0,.,1,.,.
"""


@pytest.mark.parametrize("mode", ["lanes", "lockstep"])
@pytest.mark.parametrize("compiled", [False, True])
def test_a_bolus_at_steady_state_starts_from_the_geometric_series_trough(models, mode,
                                                                         compiled):
    def decay(t, y, p, dydt):
        np.multiply(-p, y, out=dydt)

    prob = ot.Problem(nstates=1, nparams=1, rhs=models["decay_rhs"] if compiled else decay,
                      mode=mode, **TIGHT)
    k = np.array([[0.2, 0.3]])
    r = ot.solve_doses(prob, SS_CSV, y0=[0.0], params=k)
    assert r.ok, r.message
    for b, (dose, ii) in enumerate([(100, 12), (50, 8)]):
        phi = np.exp(-k[0, b] * ii)
        trough = dose * phi / (1 - phi)  # D Phi / (1 - Phi): before the dose at 0
        near(r.ys[0, 0, b], trough, 1e-7, f"{mode} trough {b}")
        near(r.ys[0, 1, b], (trough + dose) * np.exp(-k[0, b] * 6), 1e-7, f"{mode} t = 6")


def test_a_modelled_duration_infuses_amt_over_its_parameter():
    csv = "ID,TIME,AMT,RATE,CMT\n1,0,60,-2,1\n1,2,.,.,.\n1,5,.,.,.\n2,0,60,-2,1\n2,5,.,.,.\n"
    kD = np.asfortranarray([[0.1, 0.2], [3.0, 4.0]])  # [k, D] per subject

    def rhs(t, y, p, dydt):
        np.multiply(-p[0], y[0], out=dydt[0])

    prob = ot.Problem(nstates=1, nparams=2, rhs=rhs, **TIGHT)
    r = ot.solve_doses_fwd_sens(prob, csv, params=kD, duration=[1], y0=[0.0])
    assert r.ok, r.message

    def amount(t, k, d):
        on = min(t, d)
        return 60 / d / k * (1 - np.exp(-k * on)) * np.exp(-k * (t - on))

    for b, ts in enumerate([[2.0, 5.0], [5.0]]):
        for j, t in enumerate(ts):
            k, d = kD[:, b]
            near(r.ys[0, j, b], amount(t, k, d), 1e-7, f"lane {b} t {t}")
            h = 1e-6
            dd = (amount(t, k, d + h) - amount(t, k, d - h)) / (2 * h)
            near(r.sens[1][0, j, b], dd, 1e-5, f"d/dD lane {b} t {t}")


def test_refusals_name_the_argument_and_the_reason():
    prob = problem("lanes")
    with pytest.raises(TypeError, match="t_eval: the records give each subject's doses"):
        ot.solve_doses(prob, CSV, params=PARAMS, t_eval=[1.0], **DOSING)
    with pytest.raises(TypeError, match="stops: the records give"):
        ot.solve_doses_fwd_sens(prob, CSV, params=PARAMS, stops=[1.0], **DOSING)
    with pytest.raises(TypeError, match="unexpected keyword argument 'F'"):
        ot.solve_doses(prob, CSV, params=PARAMS, F=[3, -1], compartments=2)
    with pytest.raises(ot.OdeTensorError, match=r"f: 1 entries; expected 2 parameter"):
        ot.solve_doses(prob, CSV, params=PARAMS, compartments=2, f=[3])
    with pytest.raises(ot.OdeTensorError, match=r"cmt_state: 1 entries; expected 2 state"):
        ot.solve_doses(prob, CSV, params=PARAMS, compartments=2, cmt_state=[0])
    with pytest.raises(TypeError, match=r"lag\[0\]: a float; expected an integer"):
        ot.solve_doses(prob, CSV, params=PARAMS, compartments=2, lag=[4.0, -1])
    with pytest.raises(TypeError, match="rate: a int; expected a sequence"):
        ot.solve_doses(prob, CSV, params=PARAMS, compartments=2, rate=3)
    with pytest.raises(ot.OdeTensorError, match=r"model->f\[0\] \(CMT 1\) is 9") as e:
        ot.solve_doses(prob, CSV, params=PARAMS, compartments=2, f=[9, -1])
    assert e.value.args[0] == "OT_ERR_ARG"
    with pytest.raises(ot.OdeTensorError, match="CMT: 2 is not a compartment"):
        ot.solve_doses(prob, CSV, params=PARAMS, compartments=1)
    with pytest.raises(ot.OdeTensorError):
        ot.solve_doses(prob, CSV, params=PARAMS, compartments=0)
    with pytest.raises(TypeError, match="expected CSV text"):
        ot.solve_doses(prob, 42, params=PARAMS, **DOSING)
    with pytest.raises(TypeError, match="expected odetensor.Problem"):
        ot.solve_doses(None, CSV, params=PARAMS, **DOSING)
    with pytest.raises(ValueError, match="give data .* or loss"):
        ot.solve_doses_adjoint(prob, CSV, params=PARAMS, **DOSING)
    with pytest.raises(ot.OdeTensorError, match="asfortranarray"):
        ot.solve_doses(prob, CSV, params=np.ascontiguousarray(PARAMS), **DOSING)
    r = ot.solve_doses(prob, CSV, params=np.ascontiguousarray(PARAMS), copy=True, **DOSING)
    assert r.ok


def test_an_exception_in_the_rhs_fails_its_subject_only():
    def rhs(t, y, p, dydt):
        if p[0] > 1.0 and t > 3.0:  # subject 1 (ka 1.2), lanes mode: one lane a call
            raise RuntimeError("no")
        oral(t, y, p, dydt)

    r = ot.solve_doses(problem("lanes", rhs), CSV, params=PARAMS, **DOSING)
    assert r.status[1] == "OT_OK" and r.status[0] != "OT_OK"
    assert "rhs raised RuntimeError: no" in r.message[0]
    assert isinstance(r.errors[0], RuntimeError)


def test_a_real_ctrl_c_cancels_a_long_dose_solve(models):
    # Robertson to t = 1e11 for 20,000 subjects, each dosed at 0, with a
    # compiled rhs in lanes mode: seconds of work.
    nsub, obs = 20000, np.logspace(-4, 11, 16)
    per = len(obs) + 1
    cols = {"ID": np.repeat(np.arange(1.0, nsub + 1), per),
            "TIME": np.tile(np.concatenate([[0.0], obs]), nsub),
            "EVID": np.tile(np.concatenate([[1.0], np.zeros(len(obs))]), nsub),
            "AMT": np.tile(np.concatenate([[1.0], np.full(len(obs), np.nan)]), nsub)}
    rec = ot.read_records(cols)  # before the timer: Ctrl-C then lands in the solve
    k = np.asfortranarray(np.tile([[0.04], [1e4], [3e7]], (1, nsub)))
    prob = ot.Problem(nstates=3, nparams=3, rhs=models["robertson_rhs"], mode="lanes",
                      threads=2, rtol=1e-12, atol=1e-20, max_steps=10**7)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(ot.Cancelled) as e:
        ot.solve_doses(prob, rec, y0=np.zeros(3), params=k)
    elapsed = time.monotonic() - start
    timer.cancel()
    assert "OT_ERR_CANCELLED" in e.value.result.status
    assert elapsed < 5.0, f"the solve returned {elapsed:.2f} s after start (Ctrl-C at 0.3 s)"


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="ASan's quarantine holds freed memory; the plain build measures RSS")
def test_records_and_dose_solves_keep_memory_flat_and_hold_no_references(models):
    # A Records (2,000 rows), plan or solution (50 subjects) left unfreed
    # would cost tens of KB a call.
    def table(nsub):
        return {"ID": np.repeat(np.arange(1.0, nsub + 1), 10),
                "TIME": np.tile(np.arange(10.0), nsub),
                "AMT": np.tile([100.0] + [np.nan] * 9, nsub), "WT": np.full(10 * nsub, 70.0)}

    big, rec = table(200), ot.read_records(table(50))
    prob = ot.Problem(nstates=1, nparams=1, rhs=models["decay_rhs"], mode="lanes",
                      threads=1, rtol=1e-6, atol=1e-6)
    k = np.full((1, 50), 0.1)
    gc.collect()
    refs = (sys.getrefcount(prob), sys.getrefcount(k), sys.getrefcount(rec))

    def reads(n):
        for _ in range(n):
            rec = ot.read_records(big)
            assert rec.covariate("WT")[0] == 70 and rec.columns["AMT"][0] == 100

    def solves(n):
        for _ in range(n):
            ot.solve_doses(prob, rec, y0=[0.0], params=k).ys.sum()

    for run, n in ((reads, 1000), (solves, 1000)):
        run(n // 10)
        gc.collect()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        run(n)
        gc.collect()
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert after - before < 4096, f"{run.__name__}: RSS grew by {after - before} KiB"
    ot.solve_doses_fwd_sens(prob, rec, y0=[0.0], params=k)
    ot.solve_doses_adjoint(prob, rec, np.ones((1, 9), order="F"), y0=[0.0], params=k)
    gc.collect()
    assert (sys.getrefcount(prob), sys.getrefcount(k), sys.getrefcount(rec)) == refs
