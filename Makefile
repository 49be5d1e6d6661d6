# Quick start: `make demo`, `make test`. Both create .venv from nothing but Python 3.11.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: venv demo test test-fast lint bench docs clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dask,plots,progress,units,docs]'
	touch $(STAMP)

venv: $(STAMP)

# The operator's question first (`stormsim plan` on the README's fleet, a small budget),
# then the researcher's path (a small sweep into results/demo.h5): both in `stormsim demo`.
demo: $(STAMP)
	$(PY) -m stormsim demo

test: $(STAMP)
	$(PY) -m pytest -q

# The fast loop: everything but the tests marked slow (subprocesses, clusters, ptys, scripts).
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

lint: $(STAMP)
	$(PY) -m ruff check stormsim tests scripts benchmarks

bench: $(STAMP)
	$(PY) -m benchmarks

# The documentation site into site/: the reference pages regenerated from the code, then
# a strict build (every warning is an error).
docs: $(STAMP)
	$(PY) docs/gen_reference.py
	$(PY) -m mkdocs build --strict

# RESULTS.md and figures/ regenerated from scratch: every claim script in order, then the
# summary table of all verdicts at the top (~3 min of CPU for the claims, ~20 more for the
# e3 and e4 entries' splitting and mixing runs; scripts/README.md gives each one's time).
RESULT_SCRIPTS := claim1_pair_return_map claim2_spectrum claim3_separation claim4_5_locking_tail \
	claim4b_launch_distance claim4c_tightest_pair corollary10_long_horizon claim6_stagger_jitter \
	claim7_stagger_feasibility claim8_cap claim8b_hetero_response \
	e1_async_pair e1_async_fleet e1_async_deep_tail e2_weighted_pair e3_storm_splitting e4_product_form e4_mixing \
	e6_power e8_goodput
.PHONY: results
results: $(STAMP)
	rm -f RESULTS.md figures/*.png
	set -e; for s in $(RESULT_SCRIPTS); do $(PY) scripts/$$s.py; done
	$(PY) scripts/summarize_results.py

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .hypothesis
