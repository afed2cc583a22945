# The MPI layer (issue 7; included by the Makefile). `make mpi` installs
# Debian's Open MPI (scripts/deps.sh mpi) and builds $(B)/libodetensor_mpi.a
# and .so (src/mpi/, header include/odetensor_mpi.h) on top of the core, the
# MPI tests, the example and the benchmark. The core library never includes
# <mpi.h>. `make test-mpi` (part of `make check`) runs tests/mpi/test_mpi.c (and
# test_mpi_lane.c: callbacks read global lane indices; test_mpi_doses.c: stops,
# starts and events through ot_mpi_solve_*_with) at
# 1, 2 and 4 ranks against one-process ot_solve_dense results, and the example
# with 4,000 lanes at 2 ranks (a hang fails after 300 s). The layer is built
# from the public headers alone (-Iinclude, no -Isrc): it uses the core as
# any library built on odetensor would. `make bench-mpi` measures BENCHMARKS.md's
# MPI section; `make mpi-example` solves 1,000,000 Robertson lanes.

MPI_SRC := src/mpi/mpi_comm.c src/mpi/mpi_check.c src/mpi/mpi_inputs.c \
           src/mpi/mpi_deal.c src/mpi/mpi_collect.c src/mpi/mpi_solve.c
MPI_OBJ := $(MPI_SRC:%.c=$(B)/obj/%.o)
# Read when used, so a first `make mpi` on a bare machine sees them once
# deps.sh has installed Open MPI (the recursive make below).
MPI_CFLAGS = $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS = $(shell mpicc --showme:link 2>/dev/null)
MPI_STATIC := $(B)/libodetensor_mpi.a
MPI_SHARED := $(B)/libodetensor_mpi.so
MPI_BIN := $(B)/tests/mpi/test_mpi $(B)/tests/mpi/test_mpi_lane $(B)/tests/mpi/test_mpi_doses \
           $(B)/examples/mpi/robertson_mpi \
           $(B)/bench/mpi/mpi_scaling
MPI_ALL_OBJ := $(MPI_OBJ) $(MPI_BIN:$(B)/%=$(B)/obj/%.o)

# mpirun as root (containers, CI) needs both variables. Shared memory (vader)
# and self only: no network probing on one machine; the single-copy (CMA)
# path needs ptrace rights that containers often withhold, so it is off.
# --oversubscribe: more ranks than cores is fine for tests.
MPI_ENV := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
           OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
           OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN := env $(MPI_ENV) mpirun --oversubscribe
ifeq ($(SANITIZE),1)
# Open MPI keeps some allocations until exit; LSan skips only leaks whose
# stacks pass through Open MPI's own libraries (tests/mpi/lsan.supp). For
# those stacks to be whole: the slow unwinder (Open MPI has no frame
# pointers) and components kept loaded past MPI_Finalize (else their frames
# are "<unknown module>").
MPI_RUN_ENV := ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1:fast_unwind_on_malloc=0 \
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
               LSAN_OPTIONS=suppressions=$(abspath tests/mpi/lsan.supp):print_suppressions=0 \
               OMPI_MCA_mca_base_component_disable_dlclose=1
else
MPI_RUN_ENV :=
endif
MPI_RANKS ?= 1 2 4
MPI_EXAMPLE_LANES ?= 4000

.PHONY: mpi mpi-build test-mpi bench-mpi mpi-example install-mpi uninstall-mpi

mpi:
	@sh scripts/deps.sh mpi
	@$(MAKE) --no-print-directory mpi-build

mpi-build: $(MPI_STATIC) $(MPI_SHARED) $(MPI_BIN)

$(MPI_ALL_OBJ): CHECK_OBJ_FLAGS = $(MPI_CFLAGS)
# A layer above the core: public headers only (no -Isrc, no SUNDIALS), so a
# private include fails the build, as for the JS shim.
$(MPI_ALL_OBJ): ALL_CFLAGS := $(filter-out -Isrc $(SUN_CFLAGS),$(ALL_CFLAGS))

$(MPI_STATIC): $(MPI_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# Linked against the core's shared library; --no-undefined proves that it
# needs nothing beyond libodetensor.so and libmpi.
$(MPI_SHARED): $(MPI_OBJ) $(SHARED)
	$(CC) -shared $(SANFLAGS) -Wl,-soname,libodetensor_mpi.so.0 -Wl,--no-undefined \
	    -o $@ $(MPI_OBJ) -L$(B) -lodetensor $(MPI_LIBS) $(LDLIBS_CORE)

$(MPI_BIN): $(B)/%: $(B)/obj/%.o $(MPI_STATIC) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $< $(MPI_STATIC) $(STATIC) $(MPI_LIBS) $(LDLIBS_CORE)

test-mpi:
	@sh scripts/deps.sh mpi
	@$(MAKE) --no-print-directory mpi-build
	$(CC) -std=c11 $(WARN) -Iinclude $(MPI_CFLAGS) -fsyntax-only -x c include/odetensor_mpi.h
	@# Open MPI's deprecated C++ bindings warn on their own; C++ users skip them.
	$(CXX) -std=c++11 $(WARN) -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX -Iinclude $(MPI_CFLAGS) \
	    -fsyntax-only -x c++ include/odetensor_mpi.h
	sh scripts/check-exports.sh $(MPI_SHARED) include/odetensor_mpi.h
	@set -e; for n in $(MPI_RANKS); do \
	    s=$$(date +%s); \
	    $(MPI_RUN_ENV) timeout 300 $(MPIRUN) -n $$n $(B)/tests/mpi/test_mpi >$(B)/tests/mpi/test_mpi.$$n.out 2>&1 \
	        || { cat $(B)/tests/mpi/test_mpi.$$n.out; echo "mpi: tests at $$n ranks FAILED"; exit 1; }; \
	    echo "mpi: $$(grep -c '^ok' $(B)/tests/mpi/test_mpi.$$n.out) checks pass at $$n ranks ($$(( $$(date +%s) - s )) s)"; \
	    $(MPI_RUN_ENV) timeout 300 $(MPIRUN) -n $$n $(B)/tests/mpi/test_mpi_lane >$(B)/tests/mpi/test_mpi_lane.$$n.out 2>&1 \
	        || { cat $(B)/tests/mpi/test_mpi_lane.$$n.out; echo "mpi: lane index tests at $$n ranks FAILED"; exit 1; }; \
	    echo "mpi: $$(grep -c '^ok' $(B)/tests/mpi/test_mpi_lane.$$n.out) lane index checks pass at $$n ranks"; \
	    $(MPI_RUN_ENV) timeout 300 $(MPIRUN) -n $$n $(B)/tests/mpi/test_mpi_doses >$(B)/tests/mpi/test_mpi_doses.$$n.out 2>&1 \
	        || { cat $(B)/tests/mpi/test_mpi_doses.$$n.out; echo "mpi: dose and event tests at $$n ranks FAILED"; exit 1; }; \
	    echo "mpi: $$(grep -c '^ok' $(B)/tests/mpi/test_mpi_doses.$$n.out) dose and event checks pass at $$n ranks"; \
	done
	@$(MPI_RUN_ENV) timeout 300 $(MPIRUN) -n 2 $(B)/examples/mpi/robertson_mpi $(MPI_EXAMPLE_LANES) \
	    >$(B)/examples/mpi/robertson_mpi.out 2>&1 \
	    || { cat $(B)/examples/mpi/robertson_mpi.out; echo "mpi: example FAILED"; exit 1; }
	@echo "mpi: example robertson_mpi, $(MPI_EXAMPLE_LANES) lanes at 2 ranks: ok"

# The 1e6-lane example (minutes on 2 cores).
mpi-example: mpi
	$(MPIRUN) -n 2 $(B)/examples/mpi/robertson_mpi 1000000

# Results in $(B)/bench/mpi/results.txt (with the load average around each
# run: other jobs on the machine change wall times), then the projection.
bench-mpi: mpi
	@set -e; out=$(B)/bench/mpi/results.txt; : >$$out; \
	for m in "scaling 2000 5" "imbalance 2000 3" "messages"; do \
	    echo "### mpirun -n 2 $(B)/bench/mpi/mpi_scaling $$m" | tee -a $$out; \
	    echo "load before: $$(cat /proc/loadavg)" | tee -a $$out; \
	    $(MPIRUN) -n 2 $(B)/bench/mpi/mpi_scaling $$m | tee -a $$out; \
	    echo "load after: $$(cat /proc/loadavg)" | tee -a $$out; done
	$(PYTHON) bench/mpi/project.py $(B)/bench/mpi/results.txt

# make install-mpi PREFIX=... DESTDIR=...: the MPI header and libraries next
# to the core's (make install); link with -lodetensor_mpi -lodetensor and
# mpicc's flags.
install-mpi: mpi install
	install -m 644 include/odetensor_mpi.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(MPI_STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(MPI_SHARED) $(DESTDIR)$(LIBDIR)/libodetensor_mpi.so.0
	ln -sf libodetensor_mpi.so.0 $(DESTDIR)$(LIBDIR)/libodetensor_mpi.so

uninstall-mpi:
	rm -f $(DESTDIR)$(INCDIR)/odetensor_mpi.h $(DESTDIR)$(LIBDIR)/libodetensor_mpi.a \
	      $(DESTDIR)$(LIBDIR)/libodetensor_mpi.so $(DESTDIR)$(LIBDIR)/libodetensor_mpi.so.0
