# Quick start: `make check` (the main job) and `make test` (the test suite). Both create .venv and
# install what they need on a fresh Python 3.11 machine: `make check` the package with its `pep` and
# `progress` extras only; `make test` adds torch (CPU wheel), dask, scikit-learn and the test tools.
# `make docs` builds the documentation site (the `docs` extra) into docs/_build/html.
PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
JOBS   ?= $(shell nproc 2>/dev/null || echo 1)
# stamps are named by the checksum of pyproject.toml alone (not its mtime: a fresh clone or a checkout that
# touches the file does not reinstall)
SUM    := $(shell cksum < pyproject.toml | cut -d' ' -f1)
CORE    = $(VENV)/.installed-core-$(SUM)
FULL    = $(VENV)/.installed-full-$(SUM)
DOCS    = $(VENV)/.installed-docs-$(SUM)
HERE   := $(CURDIR)

.PHONY: test test-all check check-full lint bench clean guard docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

# A venv whose editable afltheory install belongs to another clone is never re-pointed to this one: installing
# into it stops with the clone it belongs to (run `make` there, or give this clone its own VENV).
guard: $(BIN)/python
	@owner=$$(cd / && $(abspath $(BIN))/python -c "import afltheory, os; \
	print(os.path.dirname(os.path.dirname(os.path.realpath(afltheory.__file__))))" 2>/dev/null); \
	if [ -n "$$owner" ] && [ "$$owner" != "$$(realpath $(HERE))" ]; then \
	  echo "error: VENV=$(VENV) has afltheory installed from $$owner, not from this clone ($(HERE))." >&2; \
	  echo "       Installing here would re-point that clone's editable install. Use this clone's own venv" >&2; \
	  echo "       (make ... VENV=.venv) or run make in $$owner." >&2; \
	  exit 2; \
	fi

$(CORE): | $(BIN)/python
	@$(MAKE) --no-print-directory guard
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[pep,progress]"
	touch $(CORE)

$(FULL): $(CORE)
	@$(MAKE) --no-print-directory guard
	# torch first and pinned: the CPU wheel of 2.13.0 is on these machines; an unpinned torch pulls CUDA.
	$(BIN)/python -m pip install --quiet "torch==2.13.0" || echo "torch==2.13.0 unavailable: torch tests will be skipped"
	$(BIN)/python -m pip install --quiet -e ".[test,dask,progress,data,pep]"
	touch $(FULL)

$(DOCS): $(CORE)
	@$(MAKE) --no-print-directory guard
	$(BIN)/python -m pip install --quiet -e ".[docs,pep,progress]"
	touch $(DOCS)

# the package runs from this clone (python -m puts the clone first on sys.path), whichever venv is used
# the default tier in $(JOBS) parallel shards of test modules (tools/run_tests.py; JOBS=1 runs one pytest)
test: $(FULL)
	$(BIN)/python tools/run_tests.py --jobs $(JOBS) -- -q -p no:cacheprovider $(PYTEST_ARGS)

test-all: $(FULL)
	$(BIN)/python -m pytest -q -m "" $(PYTEST_ARGS)

check: $(CORE)
	$(BIN)/python -m afltheory check --quick --jobs $(JOBS) --out report

check-full: $(CORE)
	$(BIN)/python -m afltheory check --full --jobs $(JOBS) --out report-full

# the documentation site (docs/conf.py: Sphinx + furo + MyST; the tutorials are run for their real output),
# warnings are errors; open docs/_build/html/index.html
docs: $(DOCS)
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs docs/_build/html

lint: | $(BIN)/python
	$(BIN)/python -m pip install --quiet "ruff==0.17.6" && $(BIN)/ruff check afltheory paper_checks experiments tests benchmarks docs tools \
		&& $(BIN)/ruff format --check afltheory paper_checks experiments tests benchmarks docs tools

bench: $(CORE)
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/engine.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/schedule.py

clean:
	rm -rf $(VENV) report report-full docs/_build docs/_generated
