# Two entry points for a fresh machine with only python3: `make test` and `make demo`.
# Both create .venv and install the project when it is missing or pyproject.toml changed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test demo lint typecheck unit fuzz bench chromium clean

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

# The fuzz tests run in `make test` with a few hundred examples each; this runs 5000 each.
fuzz: $(STAMP)
	PHASEGATE_FUZZ_PROFILE=fuzz $(BIN)/pytest -m fuzz --hypothesis-show-statistics

demo: $(STAMP)
	$(BIN)/phasegate demo

bench: $(STAMP)
	$(BIN)/python bench/gate.py
	$(BIN)/python bench/report.py
	$(BIN)/python bench/pipeline.py

# The HTML report's browser test runs Debian's chromium; without it that test skips (or fails
# when PHASEGATE_REQUIRE_CHROMIUM=1, as in CI). sudo only when not root and it exists.
chromium:
	@if command -v chromium >/dev/null; then echo "chromium: $$(command -v chromium)"; else \
	  sudo=; if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo=sudo; fi; \
	  $$sudo apt-get update && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends chromium; \
	fi

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
