"""odetensor's Python API: a Problem and its solves, over the C library.

Arrays go in as any object with the buffer protocol or ``__dlpack__``
(NumPy, PyTorch, ...), column-major ``[n, nbatch]`` as in C: a C-ordered
2-D array is refused with a message naming ``np.asfortranarray``, unless
``copy=True`` lets the binding copy it. Results are NumPy views of the
tensors the library allocated (no copy), which stay alive as long as any
view or DLPack export of them does.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _core

OdeTensorError = _core.OdeTensorError

METHODS = {
    "bdf": 1, "adams": 2, "bs32": 3, "dp54": 4, "verner65": 5, "esdirk32": 6,
    "esdirk43": 7, "esdirk54": 8, "imex32": 9, "imex43": 10, "imex54": 11,
    "ros23": 12, "rodas4": 13, "rodas5p": 14, "tsit5": 15, "vern7": 16,
}
# odetensor's own per-lane methods (each lane its own steps): lanes mode.
KERNEL_METHODS = ("ros23", "rodas4", "rodas5p", "tsit5", "vern7")
LINEAR_SOLVERS = {"dense": 1, "band": 2, "gmres": 3}
MODES = {"lanes": 1, "lockstep": 2}
DIRECTIONS = {"falling": -1, "both": 0, "rising": 1}
ACTIONS = {"stop": 0, "record": 1, "handle": 2}
DTYPES = {"float32": 1, "float64": 2}
STATS = ("steps", "rhs_evals", "jac_rhs_evals", "jac_evals", "lin_setups",
         "err_test_fails", "nonlin_iters", "nonlin_fails", "lin_iters",
         "final_time", "adj_steps", "adj_max_steps")

#: The C signature of a compiled rhs or jac (ctypes): returns 0, > 0 to
#: retry with a smaller step, < 0 to fail the lane; y [n, k], p [np, k] and
#: out (rhs [n, k], jac [n, n, k] zeroed) compact column-major.
FLAT_SIGNATURE = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
    ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
    ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


class Cancelled(KeyboardInterrupt):
    """Ctrl-C (or a callback's KeyboardInterrupt) cancelled a solve; the
    lanes that had not finished report OT_ERR_CANCELLED in ``result``."""

    def __init__(self, result: "Result"):
        super().__init__("odetensor: the solve was cancelled; its result is .result")
        self.result = result


def _address(f: Any, name: str) -> Optional[int]:
    """The address of a compiled callback, or None for a Python callable."""
    if f is None or isinstance(f, int) and not isinstance(f, bool):
        return f
    if hasattr(f, "address") and hasattr(f, "ctypes"):  # a numba cfunc
        return int(f.address)
    if isinstance(f, ctypes._CFuncPtr):
        return ctypes.cast(f, ctypes.c_void_p).value
    if type(f).__name__ == "LowLevelCallable":  # scipy.LowLevelCallable
        return ctypes.cast(f.function, ctypes.c_void_p).value if isinstance(
            f.function, ctypes._CFuncPtr) else _capsule_pointer(f.function)
    if callable(f):
        return None
    raise TypeError(f"{name}: a {type(f).__name__} is neither callable nor a compiled "
                    "function (a numba cfunc, a ctypes function pointer, an address)")


def _model_address(m: Any) -> Optional[int]:
    """The address of a compiled kernel model (an int, or a ctypes object
    such as ctypes.c_char.in_dll(lib, "NAME_model")), or None."""
    if m is None:
        return None
    if isinstance(m, int) and not isinstance(m, bool):
        if m == 0:
            raise ValueError("kernel_model: address 0")
        return m
    if isinstance(m, ctypes.c_void_p):  # a pointer's value, not its own address
        if not m.value:
            raise ValueError("kernel_model: a NULL pointer")
        return m.value
    if isinstance(m, (ctypes._SimpleCData, ctypes.Structure)):
        return ctypes.addressof(m)
    raise TypeError(f"kernel_model: a {type(m).__name__}; expected the address of an "
                    "ot_kernel_model (an int or a ctypes object in a compiled library)")


def _capsule_pointer(capsule: Any) -> int:
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype = ctypes.c_char_p
    name.argtypes = [ctypes.py_object]
    return get(capsule, name(capsule))


def _names(values: Optional[Sequence[Any]], table: dict, what: str) -> Optional[list]:
    if values is None:
        return None
    out = []
    for i, v in enumerate(values):
        if isinstance(v, str):
            if v not in table:
                raise ValueError(f"{what}[{i}]: {v!r}; expected one of {sorted(table)}")
            out.append(table[v])
        else:
            out.append(int(v))
    return out


def _choice(value: Any, table: dict, what: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, str):
        if value not in table:
            raise ValueError(f"{what}: {value!r}; expected one of {sorted(table)}")
        return table[value]
    return int(value)


@dataclass
class Problem:
    """An ODE system dy/dt = rhs(t, y, p) and its solver options.

    Callbacks are Python callables over ``[n, k]`` NumPy views (k lanes at
    once: 1 in lanes mode, a block in lockstep), written in place and valid
    only during the call; they return None (or an int: > 0 retry with a
    smaller step, < 0 fail the lane). ``rhs(t, y, p, dydt)``,
    ``jac(t, y, p, J)`` (J [n, n, k], zeroed), ``init(p, y0)``,
    ``out(t, y, p, o)`` (o [nout, k]), ``roots(t, y, p, g)`` (g [nroots, k]),
    ``dfdp(t, y, p, D)`` (D [n, np, k]), ``on_event(t, root, y, p, lane)``
    (y [n] and p [np] of the lane, writable), ``event_jac(t, root, lane, y,
    p, dz, dzdt)`` (the handler's derivatives for sensitivities through
    events: dz [n + np, n + np] = d (y+, p+) / d (y-, p-) arriving as the
    identity, dzdt [n + np] zeroed; without it, central differences of
    on_event, which must then depend on its arguments alone). rhs and jac may instead be
    compiled functions of FLAT_SIGNATURE (a numba cfunc, a ctypes pointer,
    a scipy.LowLevelCallable or an address): no interpreter is entered and
    lanes mode runs on every core. With a Python rhs the default mode is
    lockstep (one call per block); lanes mode then calls Python per lane
    and per step, which is slow.
    """

    nstates: int
    rhs: Any = None  # required unless kernel_model gives it
    nparams: int = 0
    jac: Any = None
    init: Optional[Callable] = None
    out: Optional[Callable] = None
    nout: int = 0
    roots: Optional[Callable] = None
    nroots: int = 0
    root_directions: Optional[Sequence[Any]] = None
    event_actions: Optional[Sequence[Any]] = None
    on_event: Optional[Callable] = None
    event_jac: Optional[Callable] = None
    dfdp: Optional[Callable] = None
    rhs_explicit: Optional[Callable] = None
    method: Any = None
    linear_solver: Any = None
    bandwidths: Optional[tuple] = None
    krylov_dim: Optional[int] = None
    mode: Any = None
    threads: Optional[int] = None
    lockstep_block: Optional[int] = None
    rtol: Optional[float] = None
    atol: Any = None
    t0: Optional[float] = None
    first_step: Optional[float] = None
    max_step: Optional[float] = None
    max_steps: Optional[int] = None
    max_order: Optional[int] = None
    stability_limit_detection: Optional[bool] = None
    max_events: Optional[int] = None
    sens_rtol: Optional[float] = None
    sens_atol: Optional[float] = None
    sens_initial: Optional[bool] = None
    adjoint_max_steps: Optional[int] = None
    adjoint_rtol: Optional[float] = None
    adjoint_atol: Optional[float] = None
    output_dtype: Any = None
    progress: Optional[Callable[[int, int], Any]] = None
    precondition: Optional[tuple] = None  # (setup, solve) for linear_solver="gmres"
    nwork: int = 0  # doubles of work per lane for the preconditioner
    user: Any = None  # a compiled callback's user pointer (an int address)
    # An output at a stop's time: the state before the stop (True: NONMEM's
    # pre-dose observation) or after it (False, the default); last, so that
    # positional arguments keep their places.
    outputs_before_stops: Optional[bool] = None
    # The kernel methods: rhs and jac do not read t (a lane group's lanes
    # then share one call), and how many lanes a thread steps together.
    autonomous: Optional[bool] = None
    lane_group: Optional[int] = None
    # A model compiled into the kernel methods (odetensor/kernel_model.inc,
    # built into a shared library): the address of its ot_kernel_model, an
    # int or a ctypes object (ctypes.c_char.in_dll(lib, "NAME_model")).
    # Its rhs (and Jacobian) then serve every method as callbacks, and the
    # kernel methods run it compiled, with no Python call per step; rhs and
    # jac stay None.
    kernel_model: Any = None

    def _spec(self) -> "_Spec":
        return _Spec(self)


class _Spec:
    """The attributes the C side reads (module.c), each None or a value."""

    def __init__(self, p: Problem):
        self.nstates, self.nparams = int(p.nstates), int(p.nparams)
        self.c_kernel_model = _model_address(p.kernel_model)
        if self.c_kernel_model is not None and (p.rhs is not None or p.jac is not None):
            raise TypeError("rhs, jac: the kernel_model's own serve; give neither")
        self.c_rhs = _address(p.rhs, "rhs")
        self.rhs = None if self.c_rhs is not None else p.rhs
        if p.rhs is None and self.c_kernel_model is None:
            raise TypeError("rhs: required (a callable or a compiled function), or a "
                            "kernel_model")
        self.c_jac = _address(p.jac, "jac")
        self.jac = None if self.c_jac is not None else p.jac
        self.c_user = None if p.user is None else int(p.user)
        if self.c_rhs is not None and (p.init or p.out or p.roots or p.dfdp):
            pass  # a compiled rhs combines with Python init/out/roots
        self.init, self.out, self.roots = p.init, p.out, p.roots
        self.nout = int(p.nout) if p.out is not None else 0
        self.nroots = int(p.nroots) if p.roots is not None else 0
        self.root_directions = _names(p.root_directions, DIRECTIONS, "root_directions")
        self.event_actions = _names(p.event_actions, ACTIONS, "event_actions")
        self.on_event, self.dfdp, self.rhs_explicit = p.on_event, p.dfdp, p.rhs_explicit
        self.event_jac = p.event_jac
        self.method = _choice(p.method, METHODS, "method")
        self.linear_solver = _choice(p.linear_solver, LINEAR_SOLVERS, "linear_solver")
        mode = p.mode
        compiled = self.c_rhs is not None or self.c_kernel_model is not None
        if mode is None and not compiled and p.method not in KERNEL_METHODS:
            mode = "lockstep"  # a Python rhs: one call per block, not per lane
        self.mode = _choice(mode, MODES, "mode")
        self.mupper = self.mlower = None
        if p.bandwidths is not None:
            self.mupper, self.mlower = (int(b) for b in p.bandwidths)
        self.krylov_dim, self.threads = p.krylov_dim, p.threads
        self.lockstep_block, self.rtol, self.t0 = p.lockstep_block, p.rtol, p.t0
        self.atol = self.atol_vector = None
        if p.atol is not None:
            if np.ndim(p.atol) == 0:
                self.atol = float(p.atol)
            else:
                self.atol_vector = np.ascontiguousarray(p.atol, dtype=np.float64)
        self.first_step, self.max_step = p.first_step, p.max_step
        self.max_steps, self.max_order = p.max_steps, p.max_order
        self.stability_limit_detection = (None if p.stability_limit_detection is None
                                          else int(bool(p.stability_limit_detection)))
        self.max_events = p.max_events
        self.outputs_before_stops = (None if p.outputs_before_stops is None
                                     else int(bool(p.outputs_before_stops)))
        self.autonomous = None if p.autonomous is None else int(bool(p.autonomous))
        self.lane_group = p.lane_group
        if (p.sens_rtol is None) != (p.sens_atol is None):
            raise ValueError("sens_rtol and sens_atol: give both or neither")
        self.sens_rtol, self.sens_atol = p.sens_rtol, p.sens_atol
        self.sens_initial = None if p.sens_initial is None else int(bool(p.sens_initial))
        self.adjoint_max_steps = p.adjoint_max_steps
        if (p.adjoint_rtol is None) != (p.adjoint_atol is None):
            raise ValueError("adjoint_rtol and adjoint_atol: give both or neither")
        self.adjoint_rtol, self.adjoint_atol = p.adjoint_rtol, p.adjoint_atol
        self.output_dtype = _choice(p.output_dtype, DTYPES, "output_dtype")
        self.progress = p.progress
        self.precondition_setup = self.precondition_solve = None
        if p.precondition is not None:
            self.precondition_setup, self.precondition_solve = p.precondition
        self.nwork = int(p.nwork)
        self.loss = self.integrand = None  # the adjoint's, set per call (_solve)


def _array(x: Any, name: str, copy: bool) -> Any:
    """An input as the C side takes it: arrays (buffer protocol or
    __dlpack__) as they are, no copy; lists, tuples and numbers as float64
    arrays; with copy=True a NumPy array is made column-major (a copy where
    it was not). Anything else goes on to be refused with its name."""
    if x is None:
        return None
    if isinstance(x, (list, tuple, int, float)) and not isinstance(x, bool):
        return np.asfortranarray(np.asarray(x, dtype=np.float64))
    if copy and (isinstance(x, np.ndarray) or hasattr(x, "__array__")):
        return np.asfortranarray(x)
    return x


@dataclass
class Result:
    """A solve's result. Arrays are NumPy views of the library's tensors.

    ts [nt] (or [nt, nbatch]), ys [n|nout, nt, nbatch]; sens[j] as ys for
    parameter j; grad_loss [nbatch], grad_params [np, nbatch], grad_y0
    [n, nbatch] (the adjoint); per lane: status (names), status_code,
    message, errors (the exception a callback raised, or None), count,
    root_index, root_time, stats (a dict of arrays), events (times, roots,
    before, after, count). Lanes fail alone: their failures are here, never
    raised.
    """

    ts: np.ndarray
    ys: np.ndarray
    status: list
    status_code: np.ndarray
    message: list
    errors: list
    count: np.ndarray
    root_index: np.ndarray
    root_time: np.ndarray
    stats: dict
    sens: list = field(default_factory=list)
    grad_loss: Optional[np.ndarray] = None
    grad_params: Optional[np.ndarray] = None
    grad_y0: Optional[np.ndarray] = None
    events: Optional[dict] = None
    adjoint_bytes: Optional[np.ndarray] = None
    tensors: dict = field(default_factory=dict, repr=False)

    @property
    def nbatch(self) -> int:
        return len(self.status)

    @property
    def nfailed(self) -> int:
        return int(np.count_nonzero(self.status_code))

    @property
    def ok(self) -> bool:
        return self.nfailed == 0


def _view(t: Any) -> Optional[np.ndarray]:
    return None if t is None else np.asarray(t)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _result(d: dict) -> Result:
    code = np.asarray(d["status"], dtype=np.int32)
    errors: list = [None] * len(code)
    message = list(d["message"])
    raised = d["errors"]
    batch = d["batch_error"]
    interrupted = d["interrupt"] is not None
    for b in range(len(code)):
        if code[b] == 0:
            continue
        if interrupted and b not in raised and code[b] == _CALLBACK:
            # the callback that saw Ctrl-C (or raised KeyboardInterrupt) stopped it
            code[b] = _CANCELLED
            message[b] = "cancelled by KeyboardInterrupt; " + message[b]
            continue
        entry = raised.get(b, batch if not raised else None)
        if entry is not None:
            name, exc = entry
            errors[b] = exc
            message[b] = f"{name} raised {_describe(exc)}; {message[b]}"
    stats_rows = np.asarray(d["stats"], dtype=np.float64).reshape(len(code), len(STATS))
    stats = {k: (stats_rows[:, i] if k == "final_time" else stats_rows[:, i].astype(np.int64))
             for i, k in enumerate(STATS)}
    g = d["grads"]
    ev = d["events"]
    events = None
    if ev[0] is not None:
        events = {"times": _view(ev[0]), "roots": _view(ev[1]), "before": _view(ev[2]),
                  "after": _view(ev[3]),
                  "count": np.asarray(d["event_count"], dtype=np.int64)}
    tensors = {"ts": d["ts"], "ys": d["ys"], "sens": d["sens"], "grads": g, "events": ev}
    return Result(
        ts=_view(d["ts"]), ys=_view(d["ys"]),
        status=[_core.status_name(int(c)) for c in code], status_code=code,
        message=message, errors=errors,
        count=np.asarray(d["count"], dtype=np.int64),
        root_index=np.asarray(d["root_index"], dtype=np.int64),
        root_time=np.asarray(d["root_time"], dtype=np.float64),
        stats=stats, sens=[_view(s) for s in d["sens"]],
        grad_loss=_view(g[0]), grad_params=_view(g[1]), grad_y0=_view(g[2]),
        events=events, adjoint_bytes=np.asarray(d["adjoint_bytes"], dtype=np.int64),
        tensors=tensors)


_DENSE, _STEPS, _SENS, _ADJ, _WITH, _SENS_WITH, _ADJ_WITH = range(7)
_CALLBACK, _CANCELLED = -13, -15


def _solve(problem: Problem, kind: int, y0: Any, params: Any, t_eval: Any = None,
           final_time: float = 0.0, stops: Any = None, t0: Any = None,
           data: Any = None, weights: Any = None, copy: bool = False,
           loss: Optional[Callable] = None, integrand: Optional[Callable] = None,
           lane_offset: int = 0, stops_dp: Any = None) -> Result:
    if not isinstance(problem, Problem):
        raise TypeError(f"problem: a {type(problem).__name__}; expected odetensor.Problem")
    spec = problem._spec()
    spec.loss, spec.integrand = loss, integrand
    spec.lane_offset = int(lane_offset)
    d = _core.solve(spec, kind, _array(y0, "y0", copy), _array(params, "params", copy),
                    _array(t_eval, "t_eval", copy), float(final_time),
                    _array(stops, "stops", copy), _array(t0, "t0", copy),
                    _array(data, "data", copy), _array(weights, "weights", copy),
                    _array(stops_dp, "stops_dp", copy))
    result = _result(d)
    if d["interrupt"] is not None:
        raise Cancelled(result) from d["interrupt"]
    return result


def solve_dense(problem: Problem, y0: Any, params: Any, t_eval: Any, *,
                copy: bool = False, lane_offset: int = 0) -> Result:
    """Every lane at the times t_eval ([nt], or [nt, nbatch] per lane).

    y0 [n] or [n, nbatch] (None: problem.init from params), params [np] or
    [np, nbatch]. lane_offset: what callback_lane() adds, as if this batch
    were a slice of a larger one. Raises OdeTensorError for a refused call;
    lanes that fail are in the result."""
    return _solve(problem, _DENSE, y0, params, t_eval, copy=copy, lane_offset=lane_offset)


def solve_dense_with(problem: Problem, y0: Any, params: Any, t_eval: Any, *,
                     stops: Any = None, t0: Any = None, copy: bool = False) -> Result:
    """As solve_dense, with scheduled stops ([nstops] or [nstops, nbatch],
    NaN-padded: doses, handled by on_event with root -1 - k) and per-lane
    starts t0 ([nbatch])."""
    return _solve(problem, _WITH, y0, params, t_eval, stops=stops, t0=t0, copy=copy)


def solve(problem: Problem, y0: Any, params: Any, final_time: float, *,
          copy: bool = False) -> Result:
    """Every internal step from t0 to final_time: ts [nt_max, nbatch], ys
    [n, nt_max, nbatch], lane b's first count[b] entries (NaN after)."""
    return _solve(problem, _STEPS, y0, params, final_time=final_time, copy=copy)


def solve_fwd_sens(problem: Problem, y0: Any, params: Any, t_eval: Any, *,
                   stops: Any = None, t0: Any = None, stops_dp: Any = None,
                   copy: bool = False, lane_offset: int = 0) -> Result:
    """As solve_dense, plus sens[j] = d ys / d p_j (CVODES, BDF or Adams);
    with problem.sens_initial, also d ys / d y0_i after the parameters.

    With stops and t0 as in solve_dense_with, the sensitivities go through
    the doses and handled roots (they jump with the handler's derivatives:
    problem.event_jac, or central differences of on_event); stops_dp
    ([np, nstops] or [np, nstops, nbatch], Fortran order) gives
    d stop_k / d p_j for stops that move with a parameter (a lag)."""
    return _solve(problem, _with_kind(_SENS, stops, t0, stops_dp, lane_offset), y0, params,
                  t_eval, stops=stops, t0=t0, stops_dp=stops_dp, copy=copy,
                  lane_offset=lane_offset)


def _with_kind(kind: int, stops: Any, t0: Any, stops_dp: Any, lane_offset: int) -> int:
    """The solve's _with kind when stops, t0 or stops_dp are given (those
    entries take no lane_offset), else kind itself."""
    if stops is None and t0 is None and stops_dp is None:
        return kind
    if lane_offset:
        raise ValueError("lane_offset: not with stops, t0 or stops_dp")
    return {_SENS: _SENS_WITH, _ADJ: _ADJ_WITH}[kind]


def solve_adjoint(problem: Problem, y0: Any, params: Any, t_eval: Any, data: Any = None,
                  *, weights: Any = None, loss: Optional[Callable] = None,
                  integrand: Optional[Callable] = None, stops: Any = None,
                  t0: Any = None, stops_dp: Any = None, copy: bool = False,
                  lane_offset: int = 0) -> Result:
    """The gradient of a loss L by the adjoint method: grad_loss [nbatch]
    (L), grad_params [np, nbatch], grad_y0 [n, nbatch]. L is the sum of
    squares sum w (ys - data)^2 (data and weights [n|nout, nt] or
    [n|nout, nt, nbatch]; a NaN datum adds nothing), or with loss the sum
    over outputs of loss(t, i, lane, y, p, g, dgdy, dgdp), which writes g[0]
    and its derivatives (1-D views of the lane, zeroed); with integrand(t,
    lane, y, p, q, dqdy, dqdp), plus the integral of q from t0.

    With stops, t0 and stops_dp as in solve_fwd_sens, the adjoint goes
    through the doses and the handled or recorded roots (a root that stops
    its lane is refused): (lambda, mu) jump back with the transpose of the
    sensitivities' map at each event (ot_solve_adjoint_with)."""
    if (data is None) == (loss is None):
        raise ValueError("solve_adjoint: give data (a sum of squares) or loss, one of them")
    return _solve(problem, _with_kind(_ADJ, stops, t0, stops_dp, lane_offset), y0, params,
                  t_eval, data=data, weights=weights, copy=copy, loss=loss,
                  integrand=integrand, lane_offset=lane_offset, stops=stops, t0=t0,
                  stops_dp=stops_dp)


def callback_lane() -> int:
    """Inside a callback: the batch index of the first lane of its views."""
    return _core.callback_lane()


# ---- Event tables (NONMEM-style datasets; the C layer is dosing.h) ----------


class Records:
    """NONMEM-style event records (ID, TIME, EVID, AMT, RATE, DUR, CMT, II,
    ADDL, SS, DV, MDV, covariates), read and checked by the library: every
    record obeys dosing.h's rules once a Records exists. Immutable; make
    one with read_records. ``rows``, ``columns`` ({name: float64 array},
    NaN for missing, a copy on each access), ``subjects`` ([(id,
    first_row, nrows)], rows 1-based as in messages) and ``covariate(name)``
    (per subject, the first value that is not missing)."""

    __slots__ = ("_handle",)

    def __init__(self, handle: Any):
        self._handle = handle  # a capsule owning the ot_records (dosing.c)

    @property
    def rows(self) -> int:
        return _core.records_rows(self._handle)

    @property
    def columns(self) -> dict:
        return _core.records_column_values(self._handle)

    @property
    def subjects(self) -> list:
        return _core.records_subjects(self._handle)

    def covariate(self, name: str) -> np.ndarray:
        """Column name's value per subject: on the subject's first row where
        it is not missing (ot_records_covariate). Raises OdeTensorError for
        no such column, or a subject missing it on every row."""
        return _core.records_covariate(self._handle, str(name))

    def __repr__(self) -> str:
        names = list(self.columns)
        return f"Records(rows={self.rows}, subjects={len(self.subjects)}, columns={names})"


def read_records(source: Any) -> Records:
    """Records from ``source``: a str (or bytes) is CSV text; an
    ``os.PathLike`` (``pathlib.Path``) is a CSV file, read by the library;
    a mapping is columns {name: 1-D array-like of numbers, NaN or None for
    missing} (anything with keys() and [name], as dict() takes: a dict, a
    pandas DataFrame); a Records is returned as it is.
    CSV: a header of column names (any case), ``.`` or an empty cell for
    missing, ``#`` comment lines, CRLF. Raises OdeTensorError with the
    library's message, which names the row (the 1-based data record) and
    the column: "row 14 (ID 3), AMT: -5 is negative; ..."."""
    if isinstance(source, Records):
        return source
    if isinstance(source, (str, bytes)):
        try:
            return Records(_core.records_csv(source))
        except OdeTensorError as e:
            if (b"\n" if isinstance(source, bytes) else "\n") not in source:
                # one line: perhaps a file name meant as a path
                name, code, message = e.args
                raise OdeTensorError(name, code, message + " (a str is CSV text; read a "
                                     "file with read_records(pathlib.Path(...)))") from None
            raise
    if isinstance(source, os.PathLike):
        return Records(_core.records_file(source))
    # the mapping protocol dict() takes, not abc.Mapping alone: a pandas
    # DataFrame (keys() its column names, df[name] a column) is no Mapping
    if isinstance(source, Mapping) or (hasattr(source, "keys")
                                       and hasattr(source, "__getitem__")):
        names, cols = [], []
        for name in list(source.keys()):
            values = source[name]
            if not isinstance(name, str):
                raise TypeError(f"records: a column named {name!r}; names must be str")
            try:
                col = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
            except (TypeError, ValueError) as e:
                raise ValueError(f"records[{name}]: {e}; expected numbers (NaN for "
                                 "missing)") from None
            if col.ndim != 1:
                raise ValueError(f"records[{name}]: shape {col.shape}; expected one "
                                 "value per row (1-D)")
            names.append(name)
            cols.append(col)
        if not names:
            raise ValueError("records: a mapping with no columns; expected {'ID': [...], "
                             "'TIME': [...], ...}")
        return Records(_core.records_columns(names, cols))
    raise TypeError(f"records: a {type(source).__name__}; expected CSV text (str), a "
                    "path (os.PathLike), a mapping of columns (a dict, a DataFrame) or "
                    "odetensor.Records")


_DOSE_DENSE, _DOSE_SENS, _DOSE_ADJ = range(3)
# What the other solves take and these do not: the records give every
# subject's doses (the stops) and observation times.
_NOT_FOR_DOSES = ("t_eval", "stops", "t0", "stops_dp", "lane_offset", "final_time")


def _dose_solve(fn: str, kind: int, problem: Problem, records: Any, extra: dict, *,
                compartments: Optional[int], cmt_state: Optional[Sequence[int]],
                f: Optional[Sequence[int]], lag: Optional[Sequence[int]],
                rate: Optional[Sequence[int]], duration: Optional[Sequence[int]],
                post_dose: bool, ss_tol: float, ss_max_iter: int, ss_interval: float,
                y0: Any, params: Any, copy: bool, data: Any = None, weights: Any = None,
                loss: Optional[Callable] = None,
                integrand: Optional[Callable] = None) -> Result:
    for key in extra:
        if key in _NOT_FOR_DOSES:
            raise TypeError(f"{fn}: {key}: the records give each subject's doses and "
                            "observation times; leave it out")
        raise TypeError(f"{fn}() got an unexpected keyword argument {key!r}")
    if not isinstance(problem, Problem):
        raise TypeError(f"problem: a {type(problem).__name__}; expected odetensor.Problem")
    rec = read_records(records)
    if compartments is None:
        compartments = len(cmt_state) if cmt_state is not None else problem.nstates
    spec = problem._spec()
    spec.loss, spec.integrand = loss, integrand
    d = _core.solve_doses(spec, kind, rec._handle, int(compartments), cmt_state, f, lag,
                          rate, duration, bool(post_dose), float(ss_tol), int(ss_max_iter),
                          float(ss_interval), _array(y0, "y0", copy),
                          _array(params, "params", copy), _array(data, "data", copy),
                          _array(weights, "weights", copy))
    result = _result(d)
    if d["interrupt"] is not None:
        raise Cancelled(result) from d["interrupt"]
    return result


def solve_doses(problem: Problem, records: Any, *, compartments: Optional[int] = None,
                cmt_state: Optional[Sequence[int]] = None,
                f: Optional[Sequence[int]] = None, lag: Optional[Sequence[int]] = None,
                rate: Optional[Sequence[int]] = None,
                duration: Optional[Sequence[int]] = None, post_dose: bool = False,
                ss_tol: float = 0, ss_max_iter: int = 0, ss_interval: float = 0,
                y0: Any = None, params: Any = None, copy: bool = False,
                **unexpected: Any) -> Result:
    """Every subject of records (a Records, or anything read_records takes)
    as one lane of problem, at its observation times, the doses applied
    around the model (ot_dose_solve_dense): ts [nobs, nsubjects] (each
    subject's times, NaN-padded), ys [n|nout, nobs, nsubjects].

    compartments: the model's compartment count (None: len(cmt_state), or
    nstates); cmt_state: compartment c's (CMT c + 1's) state index (None:
    state c). f, lag, rate, duration: per compartment, the parameter index
    (a row of params) of its bioavailability F, its lag ALAG, the rate of
    its RATE -1 doses and the duration of its RATE -2 doses; -1 (or None
    for all) where none applies. An observation at a dose time shows the
    state before the dose (NONMEM's trough); post_dose=True: after it.
    Steady states (SS 1, 2): ss_tol (tolerance units), ss_max_iter, and
    ss_interval for a constant infusion (0: the library's defaults 1, 20,
    1). y0 [n] or [n, nsubjects] (None: problem.init), params [np] or
    [np, nsubjects] (covariates from Records.covariate go in here); the
    callbacks see the problem's own n and np. Every subject starts at
    problem.t0; post_dose, not problem.outputs_before_stops, decides what
    an observation at a dose shows. Raises OdeTensorError for a refused
    call (the message names the record's row); lanes that fail are in the
    result."""
    return _dose_solve("solve_doses", _DOSE_DENSE, problem, records, unexpected,
                       compartments=compartments, cmt_state=cmt_state, f=f, lag=lag,
                       rate=rate, duration=duration, post_dose=post_dose, ss_tol=ss_tol,
                       ss_max_iter=ss_max_iter, ss_interval=ss_interval, y0=y0,
                       params=params, copy=copy)


def solve_doses_fwd_sens(problem: Problem, records: Any, *,
                         compartments: Optional[int] = None,
                         cmt_state: Optional[Sequence[int]] = None,
                         f: Optional[Sequence[int]] = None,
                         lag: Optional[Sequence[int]] = None,
                         rate: Optional[Sequence[int]] = None,
                         duration: Optional[Sequence[int]] = None, post_dose: bool = False,
                         ss_tol: float = 0, ss_max_iter: int = 0, ss_interval: float = 0,
                         y0: Any = None, params: Any = None, copy: bool = False,
                         **unexpected: Any) -> Result:
    """As solve_doses, plus sens[j] = d ys / d p_j [n|nout, nobs, nsubjects]
    through every dose, F, ALAG, modelled rate and duration, reset and
    steady state (with problem.sens_initial, d ys / d y0_i after them)."""
    return _dose_solve("solve_doses_fwd_sens", _DOSE_SENS, problem, records, unexpected,
                       compartments=compartments, cmt_state=cmt_state, f=f, lag=lag,
                       rate=rate, duration=duration, post_dose=post_dose, ss_tol=ss_tol,
                       ss_max_iter=ss_max_iter, ss_interval=ss_interval, y0=y0,
                       params=params, copy=copy)


def solve_doses_adjoint(problem: Problem, records: Any, data: Any = None, *,
                        weights: Any = None, loss: Optional[Callable] = None,
                        integrand: Optional[Callable] = None,
                        compartments: Optional[int] = None,
                        cmt_state: Optional[Sequence[int]] = None,
                        f: Optional[Sequence[int]] = None,
                        lag: Optional[Sequence[int]] = None,
                        rate: Optional[Sequence[int]] = None,
                        duration: Optional[Sequence[int]] = None, post_dose: bool = False,
                        ss_tol: float = 0, ss_max_iter: int = 0, ss_interval: float = 0,
                        y0: Any = None, params: Any = None, copy: bool = False,
                        **unexpected: Any) -> Result:
    """As solve_doses, plus a loss and its gradient by the adjoint through
    every dose: grad_loss [nsubjects], grad_params [np, nsubjects], grad_y0
    [n, nsubjects]. data and weights [n|nout, nobs] or [n|nout, nobs,
    nsubjects] (the sum of squares; a NaN datum, as past a subject's last
    observation, adds nothing), or loss and integrand as in solve_adjoint."""
    if (data is None) == (loss is None):
        raise ValueError("solve_doses_adjoint: give data (a sum of squares) or loss, one "
                         "of them")
    return _dose_solve("solve_doses_adjoint", _DOSE_ADJ, problem, records, unexpected,
                       compartments=compartments, cmt_state=cmt_state, f=f, lag=lag,
                       rate=rate, duration=duration, post_dose=post_dose, ss_tol=ss_tol,
                       ss_max_iter=ss_max_iter, ss_interval=ss_interval, y0=y0,
                       params=params, copy=copy, data=data, weights=weights, loss=loss,
                       integrand=integrand)
