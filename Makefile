# Quick start: `make check` (the main job) and `make test` (the test suite). Both create .venv and
# install what they need on a fresh Python 3.11 machine.
PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: test test-all check check-full lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first and pinned: the CPU wheel of 2.13.0 is on these machines; an unpinned torch pulls CUDA.
	$(BIN)/python -m pip install --quiet "torch==2.13.0" || echo "torch==2.13.0 unavailable: torch tests will be skipped"
	$(BIN)/python -m pip install --quiet -e ".[test,dask,progress,data,pep]"
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -m "" $(PYTEST_ARGS)

check: $(STAMP)
	$(BIN)/afltheory check --quick --out report

check-full: $(STAMP)
	$(BIN)/afltheory check --full --out report-full

lint: $(STAMP)
	$(BIN)/python -m pip install --quiet "ruff==0.17.6" && $(BIN)/ruff check afltheory paper_checks experiments tests benchmarks docs

bench: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/engine.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/schedule.py

clean:
	rm -rf $(VENV) report report-full
