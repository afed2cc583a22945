import ctypes
import os

import numpy as np
import pytest

import odetensor as ot

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="session")
def models_lib():
    """tests/models.c's library (`make python` builds it; make test-python
    names it in ODETENSOR_TEST_MODELS)."""
    path = os.environ.get("ODETENSOR_TEST_MODELS", os.path.join(HERE, "libmodels.so"))
    return ctypes.CDLL(path)


@pytest.fixture(scope="session")
def models(models_lib):
    """The compiled callbacks of tests/models.c."""
    return {name: ot.FLAT_SIGNATURE((name, models_lib)) for name in
            ("decay_rhs", "decay_jac", "robertson_rhs", "oral_rhs")}


def decay_rhs(t, y, p, dydt):
    np.multiply(-p, y, out=dydt)


def decay_jac(t, y, p, J):
    J[0, 0, :] = -p[0, :]
