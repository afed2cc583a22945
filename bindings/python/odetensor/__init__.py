"""odetensor: many lanes of one ODE system at once, over SUNDIALS.

    import numpy as np, odetensor as ot
    decay = ot.Problem(nstates=1, nparams=1,
                       rhs=lambda t, y, p, dydt: np.multiply(-p, y, out=dydt))
    r = ot.solve_dense(decay, y0=[1.0], params=np.linspace(0.5, 2, 1000)[None],
                       t_eval=[0.0, 1.0, 2.0])
    r.ys  # [1, 3, 1000], a NumPy view of the library's tensor
"""

from ._api import (ACTIONS, DIRECTIONS, FLAT_SIGNATURE, KERNEL_METHODS, LINEAR_SOLVERS,
                   METHODS, MODES, STATS, Cancelled, OdeTensorError, Problem, Records,
                   Result, callback_lane, read_records, solve, solve_adjoint, solve_dense,
                   solve_dense_with, solve_doses, solve_doses_adjoint, solve_doses_fwd_sens,
                   solve_fwd_sens)
from ._core import version as __c_version__

__version__ = "0.1.0"
__all__ = ["Problem", "Result", "OdeTensorError", "Cancelled", "solve_dense",
           "solve_dense_with", "solve", "solve_fwd_sens", "solve_adjoint",
           "callback_lane", "Records", "read_records", "solve_doses",
           "solve_doses_fwd_sens", "solve_doses_adjoint", "FLAT_SIGNATURE", "METHODS",
           "KERNEL_METHODS",
           "LINEAR_SOLVERS", "MODES", "DIRECTIONS", "ACTIONS", "STATS"]
