"""Type stubs of the odetensor package (bindings/python)."""
import ctypes
import os
from typing import Any, Callable, Iterable, Optional, Protocol, Sequence, Union

import numpy as np
import numpy.typing as npt

ArrayIn = Any  # a NumPy array, any object with __dlpack__ or the buffer protocol, a list
Compiled = Union[int, "ctypes._CFuncPtr", Any]  # a numba cfunc, a ctypes pointer, an address
Callback = Callable[..., Optional[Union[int, np.ndarray]]]

METHODS: dict[str, int]
KERNEL_METHODS: tuple[str, ...]
LINEAR_SOLVERS: dict[str, int]
MODES: dict[str, int]
DIRECTIONS: dict[str, int]
ACTIONS: dict[str, int]
STATS: tuple[str, ...]
FLAT_SIGNATURE: type

class OdeTensorError(Exception):
    """args: (status name, status code, message)."""

class Cancelled(KeyboardInterrupt):
    result: "Result"

class Problem:
    nstates: int
    rhs: Optional[Union[Callback, Compiled]]
    nparams: int
    jac: Optional[Union[Callback, Compiled]]
    init: Optional[Callback]
    out: Optional[Callback]
    nout: int
    roots: Optional[Callback]
    nroots: int
    root_directions: Optional[Sequence[Union[str, int]]]
    event_actions: Optional[Sequence[Union[str, int]]]
    on_event: Optional[Callable[[float, int, np.ndarray, np.ndarray, int], Optional[int]]]
    event_jac: Optional[Callable[[float, int, int, np.ndarray, np.ndarray, np.ndarray,
                                  np.ndarray], Optional[int]]]
    dfdp: Optional[Callback]
    rhs_explicit: Optional[Callback]
    method: Optional[str]
    linear_solver: Optional[str]
    bandwidths: Optional[tuple[int, int]]
    krylov_dim: Optional[int]
    mode: Optional[str]
    threads: Optional[int]
    lockstep_block: Optional[int]
    rtol: Optional[float]
    atol: Optional[Union[float, ArrayIn]]
    t0: Optional[float]
    first_step: Optional[float]
    max_step: Optional[float]
    max_steps: Optional[int]
    max_order: Optional[int]
    stability_limit_detection: Optional[bool]
    max_events: Optional[int]
    sens_rtol: Optional[float]
    sens_atol: Optional[float]
    sens_initial: Optional[bool]
    adjoint_max_steps: Optional[int]
    adjoint_rtol: Optional[float]
    adjoint_atol: Optional[float]
    output_dtype: Optional[str]
    progress: Optional[Callable[[int, int], Any]]
    precondition: Optional[tuple[Callable[..., Optional[int]], Callable[..., Optional[int]]]]
    nwork: int
    user: Optional[int]
    outputs_before_stops: Optional[bool]
    autonomous: Optional[bool]
    lane_group: Optional[int]
    kernel_model: Optional[Any]
    def __init__(self, nstates: int, rhs: Optional[Union[Callback, Compiled]] = ...,
                 nparams: int = ...,
                 jac: Optional[Union[Callback, Compiled]] = ..., init: Optional[Callback] = ...,
                 out: Optional[Callback] = ..., nout: int = ...,
                 roots: Optional[Callback] = ..., nroots: int = ...,
                 root_directions: Optional[Sequence[Union[str, int]]] = ...,
                 event_actions: Optional[Sequence[Union[str, int]]] = ...,
                 on_event: Optional[Callable[..., Optional[int]]] = ...,
                 event_jac: Optional[Callable[..., Optional[int]]] = ...,
                 dfdp: Optional[Callback] = ..., rhs_explicit: Optional[Callback] = ...,
                 method: Optional[str] = ..., linear_solver: Optional[str] = ...,
                 bandwidths: Optional[tuple[int, int]] = ..., krylov_dim: Optional[int] = ...,
                 mode: Optional[str] = ..., threads: Optional[int] = ...,
                 lockstep_block: Optional[int] = ..., rtol: Optional[float] = ...,
                 atol: Optional[Union[float, ArrayIn]] = ..., t0: Optional[float] = ...,
                 first_step: Optional[float] = ..., max_step: Optional[float] = ...,
                 max_steps: Optional[int] = ..., max_order: Optional[int] = ...,
                 stability_limit_detection: Optional[bool] = ...,
                 max_events: Optional[int] = ..., sens_rtol: Optional[float] = ...,
                 sens_atol: Optional[float] = ..., sens_initial: Optional[bool] = ...,
                 adjoint_max_steps: Optional[int] = ..., adjoint_rtol: Optional[float] = ...,
                 adjoint_atol: Optional[float] = ..., output_dtype: Optional[str] = ...,
                 progress: Optional[Callable[[int, int], Any]] = ...,
                 precondition: Optional[tuple[Callable[..., Optional[int]],
                                              Callable[..., Optional[int]]]] = ...,
                 nwork: int = ..., user: Optional[int] = ...,
                 outputs_before_stops: Optional[bool] = ...,
                 autonomous: Optional[bool] = ...,
                 lane_group: Optional[int] = ...,
                 kernel_model: Optional[Any] = ...) -> None: ...

class Result:
    ts: npt.NDArray[np.float64]
    ys: np.ndarray
    status: list[str]
    status_code: npt.NDArray[np.int32]
    message: list[str]
    errors: list[Optional[BaseException]]
    count: npt.NDArray[np.int64]
    root_index: npt.NDArray[np.int64]
    root_time: npt.NDArray[np.float64]
    stats: dict[str, np.ndarray]
    sens: list[np.ndarray]
    grad_loss: Optional[npt.NDArray[np.float64]]
    grad_params: Optional[npt.NDArray[np.float64]]
    grad_y0: Optional[npt.NDArray[np.float64]]
    events: Optional[dict[str, np.ndarray]]
    adjoint_bytes: Optional[npt.NDArray[np.int64]]
    tensors: dict[str, Any]
    @property
    def nbatch(self) -> int: ...
    @property
    def nfailed(self) -> int: ...
    @property
    def ok(self) -> bool: ...

def solve_dense(problem: Problem, y0: Optional[ArrayIn], params: Optional[ArrayIn],
                t_eval: ArrayIn, *, copy: bool = ..., lane_offset: int = ...) -> Result: ...
def solve_dense_with(problem: Problem, y0: Optional[ArrayIn], params: Optional[ArrayIn],
                     t_eval: ArrayIn, *, stops: Optional[ArrayIn] = ...,
                     t0: Optional[ArrayIn] = ..., copy: bool = ...) -> Result: ...
def solve(problem: Problem, y0: Optional[ArrayIn], params: Optional[ArrayIn],
          final_time: float, *, copy: bool = ...) -> Result: ...
def solve_fwd_sens(problem: Problem, y0: Optional[ArrayIn], params: Optional[ArrayIn],
                   t_eval: ArrayIn, *, stops: Optional[ArrayIn] = ...,
                   t0: Optional[ArrayIn] = ..., stops_dp: Optional[ArrayIn] = ...,
                   copy: bool = ..., lane_offset: int = ...) -> Result: ...
def solve_adjoint(problem: Problem, y0: Optional[ArrayIn], params: Optional[ArrayIn],
                  t_eval: ArrayIn, data: Optional[ArrayIn] = ..., *,
                  weights: Optional[ArrayIn] = ...,
                  loss: Optional[Callable[..., Optional[int]]] = ...,
                  integrand: Optional[Callable[..., Optional[int]]] = ...,
                  copy: bool = ..., lane_offset: int = ...) -> Result: ...
def callback_lane() -> int: ...

class Records:
    """NONMEM-style event records, checked by the library (read_records)."""
    @property
    def rows(self) -> int: ...
    @property
    def columns(self) -> dict[str, npt.NDArray[np.float64]]: ...
    @property
    def subjects(self) -> list[tuple[float, int, int]]: ...
    def covariate(self, name: str) -> npt.NDArray[np.float64]: ...

class ColumnTable(Protocol):
    """Columns as dict() takes them: a dict {name: 1-D values}, a pandas DataFrame."""
    def keys(self) -> Iterable[Any]: ...
    def __getitem__(self, name: Any, /) -> Any: ...

# CSV text (str, bytes), a CSV file (os.PathLike), columns, or Records
RecordsSource = Union[str, bytes, "os.PathLike[str]", ColumnTable, Records]
Indices = Optional[Sequence[int]]  # per compartment: a parameter index, -1 for none

def read_records(source: RecordsSource) -> Records: ...
def solve_doses(problem: Problem, records: RecordsSource, *,
                compartments: Optional[int] = ..., cmt_state: Indices = ...,
                f: Indices = ..., lag: Indices = ..., rate: Indices = ...,
                duration: Indices = ..., post_dose: bool = ..., ss_tol: float = ...,
                ss_max_iter: int = ..., ss_interval: float = ...,
                y0: Optional[ArrayIn] = ..., params: Optional[ArrayIn] = ...,
                copy: bool = ...) -> Result: ...
def solve_doses_fwd_sens(problem: Problem, records: RecordsSource, *,
                         compartments: Optional[int] = ..., cmt_state: Indices = ...,
                         f: Indices = ..., lag: Indices = ..., rate: Indices = ...,
                         duration: Indices = ..., post_dose: bool = ...,
                         ss_tol: float = ..., ss_max_iter: int = ...,
                         ss_interval: float = ..., y0: Optional[ArrayIn] = ...,
                         params: Optional[ArrayIn] = ..., copy: bool = ...) -> Result: ...
def solve_doses_adjoint(problem: Problem, records: RecordsSource,
                        data: Optional[ArrayIn] = ..., *, weights: Optional[ArrayIn] = ...,
                        loss: Optional[Callable[..., Optional[int]]] = ...,
                        integrand: Optional[Callable[..., Optional[int]]] = ...,
                        compartments: Optional[int] = ..., cmt_state: Indices = ...,
                        f: Indices = ..., lag: Indices = ..., rate: Indices = ...,
                        duration: Indices = ..., post_dose: bool = ...,
                        ss_tol: float = ..., ss_max_iter: int = ...,
                        ss_interval: float = ..., y0: Optional[ArrayIn] = ...,
                        params: Optional[ArrayIn] = ..., copy: bool = ...) -> Result: ...

__version__: str
