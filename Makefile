# npc: the two set-up commands are `make demo` and `make test`; both install what they need.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV       := .venv
PY         := $(VENV)/bin/python
# Python 3.12 where the machine has it, else the default python3.
PY_BOOT    := $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) $(shell command -v python3.12 2>/dev/null) $(shell command -v python3))
APT_PKGS   := libopenblas-dev liblapacke-dev catch2 libxtensor-dev libbenchmark-dev ninja-build ccache libhwy-dev
PIP_PKGS   := "numpy>=2.5,<2.6" "pybind11>=2.12" "scikit-build-core>=0.10" pytest pytest-xdist pytest-timeout hypothesis scipy matplotlib array-api-strict
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JOBS       ?= 2
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(JOBS)
export CCACHE_BASEDIR ?= $(CURDIR)

.PHONY: help setup apt venv build test test-cpp test-py demo bench clean fuzz

help:
	@echo "make demo   - install, build and run the main job"
	@echo "make test   - install, build and run every test (C++ and Python)"
	@echo "make bench  - benchmarks against NumPy (results in bench/RESULTS.md)"
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

demo: setup
	$(PY) bench/demo.py

bench: setup
	$(PY) bench/run_all.py

# Random NumPy programs against npc (eager, compiled with both backends) on $(JOBS) workers;
# shrunk reproducers go to tests/fuzz/found/ (docs/fuzzing.md).
SECONDS ?= 60
fuzz: setup
	$(PY) tests/fuzz/fuzz.py --seconds $(SECONDS) --workers $(JOBS) $(FUZZFLAGS)

clean:
	rm -rf build $(VENV) *.egg-info
