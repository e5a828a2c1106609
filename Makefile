# Two entry points for a fresh machine with only python3: `make test` and `make demo`.
# Both create .venv and install the project when it is missing or pyproject.toml changed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test demo lint typecheck unit bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest

test: lint typecheck unit

demo: $(STAMP)
	$(BIN)/phasegate demo

bench: $(STAMP)
	$(BIN)/python bench/gate.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
