# The Python package (bindings/python, issue 24): a CPython extension in C
# over the public headers, linked with the static libodetensor.a (our
# SUNDIALS inside), built with Debian's python3, setuptools and NumPy.
#   make python           build it into $(B)/python/lib (PYTHONPATH) and the
#                         tests' compiled models
#   make test-python      its pytest suite, the ctypes/DLPack test, the README's
#                         block, the fitting example (150 iterations), and
#                         `pip install --no-build-isolation` into a venv, offline
PY_DIR := bindings/python
PY_LIB := $(B)/python/lib
PY_SRC := $(wildcard $(PY_DIR)/src/*.c $(PY_DIR)/src/*.h $(PY_DIR)/odetensor/*.py \
                     $(PY_DIR)/setup.py)
PY_STAMP := $(B)/python/.built
PY_MODELS := $(B)/python/libmodels.so

.PHONY: python test-python

python: $(PY_STAMP) $(PY_MODELS)

$(PY_STAMP): $(B)/install/libodetensor.a $(PY_SRC)
	@sh scripts/deps.sh check
	rm -rf $(PY_LIB)
	cd $(PY_DIR) && ODETENSOR_BUILD=$(B) $(PYTHON) setup.py -q build \
	    --build-base $(abspath $(B)/python/tmp) --build-lib $(abspath $(PY_LIB)) --force
	@touch $@

$(PY_MODELS): $(PY_DIR)/tests/models.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O2 -fPIC -shared -Iinclude -o $@ $<

test-python: $(SHARED) python
	$(PY_ENV) ODETENSOR_LIB=$(abspath $(SHARED)) $(PYTHON) tests/python/test_numpy_dlpack.py
	$(PY_ENV) PYTHONPATH=$(abspath $(PY_LIB)) ODETENSOR_TEST_MODELS=$(abspath $(PY_MODELS)) \
	    $(PYTHON) -m pytest -q -rs -p no:cacheprovider $(PY_DIR)/tests
	awk '/^```python$$/{f=1;next} /^```/{f=0} f' README.md > $(B)/python/readme.py
	cd $(B)/python && $(PY_ENV) PYTHONPATH=$(abspath $(PY_LIB)) $(PYTHON) readme.py
	@echo "python: the README's block runs"
	$(PY_ENV) PYTHONPATH=$(abspath $(PY_LIB)) $(PYTHON) examples/python/fit_logistic.py \
	    $(B)/python/fit_logistic.svg 150
	@rm -rf $(B)/python/venv
	$(PYTHON) -m venv --system-site-packages $(B)/python/venv
	@# pip builds in the source tree (build/, egg-info): never one left by another B
	rm -rf $(PY_DIR)/build $(PY_DIR)/odetensor.egg-info
	ODETENSOR_BUILD=$(B) $(B)/python/venv/bin/pip install -q --no-build-isolation \
	    --no-index --no-deps $(PY_DIR)
	rm -rf $(PY_DIR)/build $(PY_DIR)/odetensor.egg-info
	cd $(B)/python && $(PY_ENV) venv/bin/python -c "import odetensor, numpy as np; \
	    r = odetensor.solve_dense(odetensor.Problem(nstates=1, rhs=lambda t, y, p, f: \
	    np.negative(y, out=f)), [1.0], None, [1.0]); assert abs(r.ys[0, 0, 0] - np.exp(-1)) < 1e-5; \
	    print('python: pip install --no-build-isolation works offline; import odetensor solves')"
