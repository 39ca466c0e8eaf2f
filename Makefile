# The two commands: `make run` (the demo on http://127.0.0.1:8000) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
STAMP := $(VENV)/.installed
# The official TypeScript MCP SDKs the tests drive (tests/mcp_bridge/test_typescript_sdk.py).
NODE_CLIENTS := tests/mcp_bridge/typescript
NODE_STAMP := $(NODE_CLIENTS)/node_modules/.installed
# axe-core, which the browser tests inject into every page they visit (tests/a11y.py).
A11Y := tests/a11y
A11Y_STAMP := $(A11Y)/node_modules/.installed

.PHONY: run test lint format typecheck check ci bench worker beat install clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Evergreen needs Python 3.11 or newer")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	@touch $(STAMP)

install: $(STAMP)

# npm ci only when the lockfile changed (npm keeps its download cache in ~/.npm); without npm the
# TypeScript SDK tests skip with a reason (EVERGREEN_REQUIRE_SERVICES=1 makes that a failure).
$(NODE_STAMP): $(NODE_CLIENTS)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(NODE_CLIENTS) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the TypeScript MCP SDK tests will skip (apt-get install nodejs npm)"; fi

$(A11Y_STAMP): $(A11Y)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(A11Y) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the accessibility checks of the browser tests will skip (apt-get install nodejs npm)"; fi

# With REDIS_URL set, releases after a publish are built by a Celery worker: say so, since nothing else will.
WORKER_HINT := REDIS_URL is set: publishing builds releases on a Celery worker; run `make worker` in another shell.

run: $(STAMP)
	@mkdir -p var
	$(BIN)/python manage.py migrate --noinput -v 0
	$(BIN)/python manage.py load_demo --base-url http://127.0.0.1:$(PORT)
	@echo "Evergreen demo: http://127.0.0.1:$(PORT)/  (admin: http://127.0.0.1:$(PORT)/admin/)"
	@if [ -n "$$REDIS_URL$$CELERY_BROKER_URL" ]; then echo "$(WORKER_HINT)"; fi
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# Debian's nginx runs deploy/nginx/nginx.conf in front of gunicorn in tests/gateway/test_proxy.py
# (openssl makes its certificate); installed when missing and apt-get is there, else those tests skip.
test: $(STAMP) $(NODE_STAMP) $(A11Y_STAMP)
	@mkdir -p var
	@command -v nginx >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || \
		apt-get install -y -q nginx openssl >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q nginx openssl) || \
		echo "could not install nginx: the proxy tests will skip (apt-get install nginx openssl)"
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(STAMP)
	$(BIN)/mypy .

check: $(STAMP)
	@mkdir -p var
	$(BIN)/python manage.py check
	$(BIN)/python manage.py makemigrations --check --dry-run

ci: lint typecheck check test

# wrk drives the HTTP benchmarks; installed from Debian's packages when missing (the bench skips them without it).
bench: $(STAMP)
	@command -v wrk >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || \
		apt-get install -y -q wrk >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q wrk) || \
		echo "could not install wrk: the HTTP benchmarks will be skipped"
	$(BIN)/python -m bench

# A worker and beat need a broker: without REDIS_URL (embedded mode) tasks already run in-process.
BROKER_MISSING := needs REDIS_URL (or CELERY_BROKER_URL), e.g. REDIS_URL=redis://127.0.0.1:6379/0; without one, tasks run in-process and no worker is needed.

worker: $(STAMP)
	@if [ -z "$$REDIS_URL$$CELERY_BROKER_URL" ]; then echo "make worker $(BROKER_MISSING)" >&2; exit 2; fi
	$(BIN)/celery -A evergreen_site worker --loglevel INFO

beat: $(STAMP)
	@if [ -z "$$REDIS_URL$$CELERY_BROKER_URL" ]; then echo "make beat $(BROKER_MISSING)" >&2; exit 2; fi
	@mkdir -p var
	$(BIN)/celery -A evergreen_site beat --loglevel INFO --schedule var/celerybeat-schedule

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache $(NODE_CLIENTS)/node_modules $(A11Y)/node_modules
