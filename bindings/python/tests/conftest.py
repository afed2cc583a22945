import ctypes
import os

import numpy as np
import pytest

import odetensor as ot

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="session")
def models():
    """The compiled callbacks of tests/models.c (`make python` builds them;
    make test-python names the library in ODETENSOR_TEST_MODELS)."""
    path = os.environ.get("ODETENSOR_TEST_MODELS", os.path.join(HERE, "libmodels.so"))
    lib = ctypes.CDLL(path)
    return {name: ot.FLAT_SIGNATURE((name, lib)) for name in
            ("decay_rhs", "decay_jac", "robertson_rhs", "oral_rhs")}


def decay_rhs(t, y, p, dydt):
    np.multiply(-p, y, out=dydt)


def decay_jac(t, y, p, J):
    J[0, 0, :] = -p[0, :]
