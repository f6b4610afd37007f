# Everything from a fresh machine with Python 3.11 and make: `make demo`, `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
export EVALSUITE_HOME ?= $(CURDIR)/.evalsuite
export DAGSTER_HOME ?= $(EVALSUITE_HOME)/dagster

.PHONY: demo test ui bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/evalsuite example

test: $(VENV)/.installed
	$(PY) -m pytest -n 2 -q

bench: $(VENV)/.installed
	$(PY) bench/bench_trial.py

clean:
	rm -rf $(VENV) $(EVALSUITE_HOME)
