# ragaudit: `make demo` runs the main job, `make test` runs the checks. Both set up .venv first.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test lint typecheck unit test-ray all-tests bench clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned to the local CPU wheel (an unpinned torch pulls a multi-GB CUDA build)
	$(BIN)/python -m pip install -q -c constraints.txt torch
	# all = the runtime extras incl. torch (torch-vs-ONNX agreement tests, CrossEncoder plumbing);
	# export = onnx for scripts/export_onnx.py and its reproducibility test. The demo needs neither.
	# ray = the Ray executor (--executor ray) and its tests on a local 2-node cluster (make test-ray)
	# frameworks = the LangChain / LlamaIndex / Haystack adapters, tested with the real libraries;
	# mlflow = ragaudit export mlflow, tested against a real MLflow SQLite store
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[all,export,dev,ray,frameworks,mlflow]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/ragaudit demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

MYPY := $(BIN)/mypy --strict src/ragaudit
typecheck: $(STAMP)
	$(MYPY)

unit: $(STAMP)
	$(BIN)/pytest -q

# the Ray executor's tests alone: a real head + worker on 127.0.0.1 (about 1.5 minutes on 2 cores), so a
# plain `pytest` leaves them out (-m 'not ray' in pyproject.toml); `make test` runs them with the rest
test-ray: $(STAMP)
	RAY_USAGE_STATS_ENABLED=0 $(BIN)/pytest -q -m ray

# every test, the Ray ones too, in one pytest run on $(WORKERS) pytest-xdist workers: each test file runs
# in one worker, and the browser and Ray files are one unit, run one after the other in one worker
# (tests/conftest.py, SERIAL_FILES); units go out longest first (UNIT_SECONDS); tests retry without
# backoff waits (conftest, `backoff` marker)
# (bytecode caching on even where the environment turns it off, PYTHONDONTWRITEBYTECODE=1 as on this
# project's machines: otherwise every worker and every CLI subprocess a test starts compiles ragaudit
# from source again, and pytest rewrites its asserts again; __pycache__/ is ignored by git)
WORKERS ?= 2
ALL_TESTS := env -u PYTHONDONTWRITEBYTECODE RAY_USAGE_STATS_ENABLED=0 $(BIN)/pytest -q -n $(WORKERS) --dist loadfile -m 'ray or not ray'
all-tests: $(STAMP)
	$(ALL_TESTS)

# what CI runs (.ci/run): lint (seconds), then mypy beside all the tests (mypy's cache, .mypy_cache, is
# kept between runs); fails when either fails, after both have finished
test: lint
	$(MYPY) & mypy=$$!; $(ALL_TESTS); tests=$$?; wait $$mypy && exit $$tests

# every benchmark, each printing its table (figures and commands are kept in docs/benchmarks.md)
bench: $(STAMP)
	$(BIN)/python bench/metrics_bench.py
	$(BIN)/python bench/bm25_quality.py
	$(BIN)/python bench/runner_bench.py
	$(BIN)/python bench/load_bench.py
	RAGAUDIT_CACHE_DIR=bench/_data/dense_cache $(BIN)/python bench/dense_bench.py
	RAGAUDIT_CACHE_DIR=bench/_data/dense_cache $(BIN)/python bench/presets_quality.py

clean:
	rm -rf $(VENV) reports .pytest_cache .mypy_cache .ruff_cache
