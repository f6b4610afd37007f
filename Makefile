# Everything from a fresh machine with Python 3.11 and make: `make demo`, `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
export EVALSUITE_HOME ?= $(CURDIR)/.evalsuite
export DAGSTER_HOME ?= $(EVALSUITE_HOME)/dagster
# The PUBLISHED DEMO de-identification key (evalsuite.deid.keys.DEMO_KEY), which protects nothing: used only when
# EVALSUITE_DEID_KEY is unset and only on the bundled suites, by `make demo` and by `make ui` without EVALSUITE_SUITES.
# Any other build needs your own secret in EVALSUITE_DEID_KEY and stops with one line naming the variable without it.
DEMO_KEY = $(shell $(PY) -c 'from evalsuite.deid.keys import DEMO_KEY; print(DEMO_KEY)')

.PHONY: demo test ui bench bench-pipeline clean instance mutation mutation-sample mutmut system peers

# Installed by uv (from PyPI into the venv itself): the same versions pip resolves, in about 30 s with the bytecode
# compiled on both cores, instead of pip's minute and a half. Left to first imports, the compiling cost the tests'
# processes 80 s more (a clean clone's `.ci/run`: 558 s without, 481 s with). Where uv cannot be had, pip does it.
UV = $(PY) -m uv pip install -q --python
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	($(PY) -m pip install -q 'uv>=0.9,<1' && $(UV) $(PY) --compile-bytecode --upgrade pip -e '.[dev]') \
	  || ($(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e '.[dev]')
	touch $@

# The embedded Dagster instance: SQLite in DAGSTER_HOME, configured by a copy of the top-level dagster.yaml
# (so `dagster dev`'s note that ./dagster.yaml is not used is expected). Plain `dagster dev -w workspace.yaml`
# without DAGSTER_HOME runs on a throwaway instance in ./.tmp_dagster_home_*, configured by ./dagster.yaml.
instance:
	@mkdir -p $(DAGSTER_HOME)
	@cmp -s dagster.yaml $(DAGSTER_HOME)/dagster.yaml || cp dagster.yaml $(DAGSTER_HOME)/dagster.yaml

demo: $(VENV)/.installed instance
	$(PY) examples/demo.py

ui: $(VENV)/.installed instance
	@$(if $(EVALSUITE_SUITES)$(EVALSUITE_DEID_KEY),,echo "note: the bundled suites de-identify with the published DEMO key; set EVALSUITE_DEID_KEY for real records")
	$(if $(EVALSUITE_SUITES)$(EVALSUITE_DEID_KEY),,EVALSUITE_DEID_KEY=$(DEMO_KEY)) $(VENV)/bin/dagster dev -h 127.0.0.1 -w workspace.yaml

# Debian packages the tests use: chromium (the UI test drives it; never a browser download) and bubblewrap
# (the sealed boundary of external agents). Installed through apt-get when missing and we are root;
# otherwise say what is missing (those tests then skip, or fail under CI=true).
SYSTEM_PACKAGES := chromium:/usr/bin/chromium bubblewrap:/usr/bin/bwrap
system:
	@missing=""; for pair in $(SYSTEM_PACKAGES); do [ -x "$${pair#*:}" ] || missing="$$missing $${pair%%:*}"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "note: missing Debian packages:$$missing (apt-get install -y$$missing as root)"; fi; \
	fi

# The pinned peer packages, in an interpreter of their own (never beside evalsuite: agentdojo pulls in four model
# vendors' clients), for the differential tests of the imports. A failed install is said, and those tests skip.
PEERS := .venv-peers
$(PEERS)/.installed: $(VENV)/.installed
	@($(PYTHON) -m venv $(PEERS) && ($(UV) $(PEERS)/bin/python 'agentdojo==0.1.35' \
	    || $(PEERS)/bin/python -m pip install -q 'agentdojo==0.1.35') && touch $@) \
	  || echo "note: could not install agentdojo==0.1.35 into $(PEERS); the AgentDojo differential test skips"
# Stock Inspect AI with the openai SDK it wants (evalsuite pins openai 2; inspect-ai's own OpenAI providers need 3.4+),
# in an interpreter of its own too, so bench_model_agents.py compares against Inspect as its users run it.
INSPECT_PEER := .venv-inspect
$(INSPECT_PEER)/.installed: $(VENV)/.installed
	@($(PYTHON) -m venv $(INSPECT_PEER) && ($(UV) $(INSPECT_PEER)/bin/python 'inspect-ai==0.3.285' 'openai>=3.4,<4' \
	    || $(INSPECT_PEER)/bin/python -m pip install -q 'inspect-ai==0.3.285' 'openai>=3.4,<4') && touch $@) \
	  || echo "note: could not install inspect-ai into $(INSPECT_PEER); the benchmark leaves stock Inspect out"
peers: $(PEERS)/.installed $(INSPECT_PEER)/.installed

# The linter first (ruff: pyflakes, pycodestyle, import sorting; config in pyproject.toml). Then the docs site
# (mkdocs.yml, docs/): warnings are errors, so a page outside the nav, a broken link or a missing anchor stops
# here. Built into ./site (git-ignored); `.venv/bin/mkdocs serve` shows it while editing. Then the tests.
test: $(VENV)/.installed system $(PEERS)/.installed
	$(VENV)/bin/ruff check .
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict
	$(PY) -m pytest -n 2

# Every bench/bench_*.py that takes --json (bench/benchlib.py), one after another: bench/results.json and the
# table on the docs' scaling page (docs/scaling/index.md). About 15 minutes on 2 cores.
bench: $(VENV)/.installed $(INSPECT_PEER)/.installed
	$(PY) bench/run_all.py

bench-pipeline: $(VENV)/.installed
	$(PY) bench/bench_pipeline.py

# Mutation score of the judging modules: mutmut 3.8.1 (the `mutation` extra) with the [tool.mutmut] config in
# pyproject.toml (forkserver isolation; tests/conftest.py runs a mutant's fastest tests first). About 20 minutes on
# 2 cores, venv included; not part of `make test`. Rebuilds ./mutants (git-ignored) from scratch each run, then
# prints the score per module (mutmut's own verdicts).
mutation: mutmut
	rm -rf mutants
	nice -n 10 $(VENV)/bin/mutmut run
	$(PY) bench/mutation_scores.py

# The same four scores from a seeded sample of 40 mutants a module, each with its 95% interval: a quicker look
# (bench/mutation_sample.py; MUTATION_SAMPLE=N for another sample size).
MUTATION_SAMPLE ?= 40
mutation-sample: mutmut
	rm -rf mutants
	nice -n 10 $(PY) bench/mutation_sample.py --per-module $(MUTATION_SAMPLE)

mutmut: $(VENV)/.installed
	@$(VENV)/bin/mutmut --version 2>/dev/null | grep -q ' 3\.8\.1$$' || $(PY) -m pip install -q -e '.[dev,mutation]'

clean:
	rm -rf $(VENV) $(EVALSUITE_HOME)
