# npc: the two set-up commands are `make demo` and `make test`; both install what they need.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV       := .venv
PY         := $(VENV)/bin/python
# Python 3.12 where the machine has it, else the default python3.
PY_BOOT    := $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) $(shell command -v python3.12 2>/dev/null) $(shell command -v python3))
APT_PKGS   := libopenblas-dev liblapacke-dev catch2 libxtensor-dev libbenchmark-dev ninja-build ccache libhwy-dev
PIP_PKGS   := "numpy>=2.5,<2.6" "pybind11>=2.12" "scikit-build-core>=0.10" pytest pytest-xdist pytest-timeout hypothesis scipy matplotlib array-api-strict dask==2026.8.0 distributed==2026.8.0
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JOBS       ?= 2
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(JOBS)
export CCACHE_BASEDIR ?= $(CURDIR)

.PHONY: help setup apt venv build test test-cpp test-py test-simd-variants test-asan demo bench bench-peers clean fuzz

help:
	@echo "make demo   - install, build and run the main job"
	@echo "make test   - install, build and run every test (C++ and Python)"
	@echo "make bench  - benchmarks against NumPy (results in bench/RESULTS.md)"
	@echo "make bench-peers - npc against NumPy, NumExpr, Numba, torch.compile, JAX, hand C++ (.venv-peers)"
	@echo "make fuzz   - differential fuzzing against NumPy for SECONDS (default 60; docs/fuzzing.md)"

setup: apt venv build

apt:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(VENV)/.deps-stamp: Makefile
	@test -x $(PY) || $(PY_BOOT) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(PIP_PKGS)
	@touch $@

venv: $(VENV)/.deps-stamp

# One CMake build tree (build/) serves the Python extension and the C++ tests. The first
# build is an editable pip install (scikit-build-core); later ones rebuild the tree with
# cmake and refresh the installed extension, which takes seconds when nothing changed.
EXT_DIR = $(shell $(PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/npc
build: venv
	@if [ -f build/build.ninja -o -f build/Makefile ] && [ -d "$(EXT_DIR)" ] && [ $(VENV)/.deps-stamp -ot build/CMakeCache.txt ]; then \
	  cmake --build build && cp -f build/_core*.so "$(EXT_DIR)/"; \
	else \
	  $(PY) -m pip install -q --no-build-isolation --no-deps -e . ; \
	fi
	@$(PY) -c "import npc" || { echo "npc failed to build or import"; exit 1; }

test: setup
	cd build && ctest --output-on-failure -j$(JOBS)
	NPC_CACHE_DIR=$$(mktemp -d) $(PY) -m pytest -n $(JOBS) -p no:cacheprovider
	$(MAKE) --no-print-directory test-simd-variants
	$(MAKE) --no-print-directory test-asan

# Note [NumPy's SIMD paths in tests]
# NumPy picks its loops for sorting, reductions, transcendental functions and float16 by the
# CPU it runs on (AVX2, AVX-512 Skylake/Ice Lake/Sapphire Rapids), and some of its results
# (the order of equal keys in unstable sorts, the last bits of some functions) differ between
# those paths. The conformance modules whose expectations could depend on that run again with
# NumPy held to other paths, so an assertion that holds on one CPU only fails on every machine.
# NPY_DISABLE_CPU_FEATURES names dispatch targets only (never baseline features), so each set
# is valid on any x86-64 CPU; a target the CPU lacks is off anyway.
SIMD_TESTS    := test_sort.py test_sort_regressions.py test_reductions.py test_reduction_order.py \
                 test_reduce_signature.py test_vector_math.py test_ufunc.py test_ufunc_call.py \
                 test_quantile.py test_fp_warnings_reduce.py
SIMD_VARIANTS := "X86_V4 AVX512_ICL AVX512_SPR" "AVX512_SPR"
test-simd-variants: build
	@cd tests/numpy_conformance && for f in $(SIMD_VARIANTS); do \
	  echo "== NumPy with NPY_DISABLE_CPU_FEATURES=\"$$f\""; \
	  NPY_DISABLE_CPU_FEATURES="$$f" NPC_CACHE_DIR=$$(mktemp -d) ../../$(PY) -m pytest -n $(JOBS) -p no:cacheprovider $(SIMD_TESTS) || exit 1; \
	done

# The C++ tests and a pytest subset under ASan and UBSan, in build-asan/ (.ci/sanitize).
test-asan: setup
	JOBS=$(JOBS) PY=$(PY) .ci/sanitize

demo: setup
	$(PY) bench/demo.py

bench: setup
	$(PY) bench/run_all.py

# Note [bench-peers]
# The field suite (bench/field/, docs/benchmarks.md) runs npc beside its peers in a virtualenv
# of its own, .venv-peers, so the project's .venv never changes. The peers are pinned to
# releases that install beside the project's NumPy (the constraint file keeps NumPy inside its
# pin: a peer that would need another NumPy fails to install and is reported missing, never
# a NumPy downgrade). npc is installed from this tree (non-editable, build tree build-peers/).
# The C++ side (bench/cpp, Google Benchmark and xtensor) builds in build-bench/ only here.
PEERS_VENV := .venv-peers
PEERS_PY   := $(PEERS_VENV)/bin/python
PEERS_PKGS := numexpr==2.14.2 numba==0.68.1 "jax[cpu]==0.12.0.1" torch==2.15.0
FIELD_ARGS ?= --write
bench-peers: apt
	@test -x $(PEERS_PY) || $(PY_BOOT) -m venv $(PEERS_VENV)
	@echo "numpy>=2.5,<2.6" > $(PEERS_VENV)/constraints.txt
	$(PEERS_PY) -m pip install -q --upgrade pip
	$(PEERS_PY) -m pip install -q -c $(PEERS_VENV)/constraints.txt "numpy>=2.5,<2.6" matplotlib "pybind11>=2.12" "scikit-build-core>=0.10"
	@rm -f $(PEERS_VENV)/missing.txt; for p in $(PEERS_PKGS); do \
	  $(PEERS_PY) -m pip install -q -c $(PEERS_VENV)/constraints.txt "$$p" || echo "$$p" >> $(PEERS_VENV)/missing.txt; \
	done; test ! -f $(PEERS_VENV)/missing.txt || { echo "peers that did not install beside NumPy 2.5:"; cat $(PEERS_VENV)/missing.txt; }
	$(PEERS_PY) -m pip install -q --no-build-isolation --no-deps -C build-dir=build-peers -C cmake.define.NPC_BUILD_TESTS=OFF .
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DNPC_BUILD_BENCH=ON -DNPC_BUILD_TESTS=OFF -DNPC_BUILD_PYTHON=OFF
	cmake --build build-bench --target npc_bench_field
	$(PEERS_PY) bench/field/run.py $(FIELD_ARGS)
	$(PEERS_PY) bench/field/cpp_report.py build-bench/bench/cpp/npc_bench_field $(if $(findstring --write,$(FIELD_ARGS)),--write)

# Random NumPy programs against npc (eager, compiled with both backends) on $(JOBS) workers;
# shrunk reproducers go to tests/fuzz/found/ (docs/fuzzing.md).
SECONDS ?= 60
fuzz: setup
	$(PY) tests/fuzz/fuzz.py --seconds $(SECONDS) --workers $(JOBS) $(FUZZFLAGS)

clean:
	rm -rf build build-asan $(VENV) *.egg-info
