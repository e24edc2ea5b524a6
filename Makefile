# Every target sets up what it needs; `make demo` and `make test` work on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo serve test test-slow lint format typecheck catalog docs docs-check jslibs dist clean

$(STAMP): pyproject.toml scripts/setup.sh jsbuild/package-lock.json jsbuild/checksums.json \
		jsbuild/typecheck/package-lock.json
	bash scripts/setup.sh
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/toolfoundry demo

# MCP at http://$(SERVE_HTTP)/mcp, review page at /ui (stdio clients run `toolfoundry serve`).
SERVE_HTTP ?= 127.0.0.1:8765
serve: $(STAMP)
	$(BIN)/toolfoundry serve --http $(SERVE_HTTP)

# lint-imports: the layer contract in pyproject.toml ([tool.importlinter]).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache --no-logo

# Fix what lint reports: ruff's safe fixes, then formatting. The pre-commit hooks
# (.pre-commit-config.yaml) run lint and typecheck on every commit.
format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: $(STAMP)
	$(BIN)/mypy

catalog: $(STAMP)
	$(BIN)/toolfoundry catalog check

# docs/openapi.json, docs/cli.md and README.md's table of commands, generated from the code.
docs: $(STAMP)
	$(BIN)/python scripts/generated_docs.py

docs-check: $(STAMP)
	$(BIN)/python scripts/generated_docs.py --check

test: $(STAMP)
	$(MAKE) lint typecheck catalog docs-check
	$(BIN)/pytest -n 2 -q

test-slow: $(STAMP)
	$(BIN)/pytest -q -m slow || [ $$? -eq 5 ]

# dist/toolfoundry-<version>-py3-none-any.whl and its sdist. The guest and the libraries are
# brought up to date first (both return at once when they are), here where zig and node are;
# uv builds the sdist, then the wheel from it (so the sdist is proven to build), and
# hatch_build.py checks the sandbox in both.
dist: $(STAMP)
	$(BIN)/python -m toolfoundry.sandbox.js.guest.build
	node jsbuild/build.mjs --install
	rm -rf dist
	$(BIN)/uv build --out-dir dist

jslibs:
	node jsbuild/build.mjs --install

clean:
	rm -rf $(VENV) .toolfoundry .pytest_cache .mypy_cache .ruff_cache dist
