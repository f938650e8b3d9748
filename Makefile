# The README's two commands: `make run` and `make test`. Everything else is a helper.
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
CHROMIUM ?= /usr/bin/chromium
PORT ?= 8000

.PHONY: run test lint setup setup-test chromium

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e .
	touch $@

## The test-only packages (pytest, Playwright, ruff, …) come with `make test`, not `make run`.
$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $@

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test

## Set up (virtualenv, dependencies, SQLite database, demo data) and serve on $(PORT)
## (`make run PORT=8080` for another port).
run: setup
	DEBUG=true $(PY) manage.py migrate --noinput
	DEBUG=true $(PY) manage.py seed_demo --base-url http://127.0.0.1:$(PORT)
	DEBUG=true $(PY) manage.py runserver 127.0.0.1:$(PORT)

## Browser tests need Chromium; install Debian's package when it is missing.
chromium:
	@test -x $(CHROMIUM) || { \
		echo "Installing Chromium for the browser tests (Debian package)…"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

lint: setup-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

## Test-only JavaScript tooling (axe-core for the accessibility scans); node runs the
## sampler's unit tests. Installs Debian's nodejs/npm when missing.
node_modules/.installed: package.json package-lock.json
	@command -v npm >/dev/null || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nodejs npm >/dev/null; }
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

## Set up and run the whole test suite, browser tests included.
test: setup-test chromium node_modules/.installed lint
	DJANGO_SETTINGS_MODULE=config.test_settings $(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/pytest $(PYTEST_ARGS)

## Benchmarks (not part of the test suite): CI coverage grid, estimates latency at 10k/1M.
.PHONY: bench-coverage bench-estimates
bench-coverage: setup
	$(PY) bench/coverage.py

bench-estimates: setup
	$(PY) bench/estimates.py

## Respondent page weight and the browser sampler's accuracy in real Chromium.
.PHONY: bench-respondent
bench-respondent: setup-test chromium
	$(PY) bench/respondent.py

## Classroom polling cost while 500 students submit (gunicorn, SQLite unless DATABASE_URL).
.PHONY: bench-poll
bench-poll: setup
	$(PY) bench/poll.py

## Submission throughput vs a no-op view under gunicorn (PostgreSQL, SQLite, two
## instances), then kill -9 mid-load; checks every acknowledged answer is stored.
.PHONY: bench-submit
bench-submit: setup
	$(PY) bench/submit.py

## Sealing an hour of 100 000 submissions while 64 clients submit (PostgreSQL, SQLite).
.PHONY: bench-seal
bench-seal: setup
	$(PY) bench/seal.py

## A large CSV import while respondents submit (SQLite, PostgreSQL): their longest wait.
.PHONY: bench-import
bench-import: setup
	$(PY) bench/import.py
