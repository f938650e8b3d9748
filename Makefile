# The README's two commands: `make run` and `make test`. Everything else is a helper.
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
CHROMIUM ?= /usr/bin/chromium

.PHONY: run test lint setup chromium

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $@

setup: $(VENV)/.installed

## Set up (virtualenv, dependencies, SQLite database, demo data) and serve on :8000.
run: setup
	DEBUG=true $(PY) manage.py migrate --noinput
	DEBUG=true $(PY) manage.py seed_demo
	DEBUG=true $(PY) manage.py runserver 127.0.0.1:8000

## Browser tests need Chromium; install Debian's package when it is missing.
chromium:
	@test -x $(CHROMIUM) || { \
		echo "Installing Chromium for the browser tests (Debian package)…"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

## Set up and run the whole test suite, browser tests included.
test: setup chromium lint
	$(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/pytest $(PYTEST_ARGS)

## Benchmarks (not part of the test suite): CI coverage grid, estimates latency at 10k/1M.
.PHONY: bench-coverage bench-estimates
bench-coverage: setup
	$(PY) bench/coverage.py

bench-estimates: setup
	$(PY) bench/estimates.py
