"""Builds odetensor._core against the C library's static archive.

The archive (libodetensor.a with its own SUNDIALS inside) and the headers
are found, in order, from ODETENSOR_PREFIX (an install prefix: include/ and
lib/), or from the repository this file sits in (build/install/ and
include/ after `make python`, or `make build/install/libodetensor.a`).
Nothing is downloaded: `pip install --no-build-isolation ./bindings/python`
works offline with Debian's python3-setuptools and python3-numpy.
"""

import os
import sys

import numpy
from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.normpath(os.path.join(here, "..", ".."))
prefix = os.environ.get("ODETENSOR_PREFIX")
if prefix:
    include, archive = os.path.join(prefix, "include"), os.path.join(prefix, "lib", "libodetensor.a")
else:
    include = os.path.join(repo, "include")
    archive = os.path.join(repo, os.environ.get("ODETENSOR_BUILD", "build"), "install",
                           "libodetensor.a")
if not os.path.exists(archive) and "egg_info" not in sys.argv:
    sys.exit(f"odetensor: no {archive}; run `make python` in {repo} first, or set "
             "ODETENSOR_PREFIX to a prefix where `make install` put odetensor")

core = Extension(
    "odetensor._core",
    sources=[os.path.join("src", f)
             for f in ("module.c", "tensor.c", "callbacks.c", "dosing.c")],
    include_dirs=[include, numpy.get_include()],
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-missing-field-initializers",
                        "-Wno-cast-function-type"],
    extra_link_args=[archive, "-lm", "-pthread", "-Wl,--exclude-libs,ALL"],
)

setup(name="odetensor", version="0.1.0", packages=["odetensor"],
      package_data={"odetensor": ["py.typed", "*.pyi"]}, ext_modules=[core])
