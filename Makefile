# felab: every set-up step of a fresh machine lives here; see README.md.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
PRACTICE_PORT ?= 8001
# A throwaway database on the local PostgreSQL for the second test run.
PG_ADMIN_URL ?= postgresql://postgres@127.0.0.1:5432/test
PG_TEST_DB ?= felab_ci
PG_TEST_URL ?= postgresql://postgres@127.0.0.1:5432/$(PG_TEST_DB)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run serve setup test test-sqlite test-postgres lint chromium bench clean

$(VENV)/.runtime: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt $(VENV)/.runtime
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

setup: $(VENV)/.runtime
	$(PY) manage.py migrate --noinput
	$(PY) manage.py import_lessons
	$(PY) manage.py collectstatic --noinput --verbosity 0

# The site and, beside it, the practice server that /sim/ measures; Ctrl-C stops both.
run: setup
	@echo "felab on http://$(HOST):$(PORT)/ ; practice server on http://127.0.0.1:$(PRACTICE_PORT)/v1"
	@trap 'kill 0' INT TERM EXIT; \
	FELAB_PRACTICE_URL=http://127.0.0.1:$(PRACTICE_PORT)/v1 $(PY) manage.py practice_server --port $(PRACTICE_PORT) & \
	FELAB_PRACTICE_URL=http://127.0.0.1:$(PRACTICE_PORT)/v1 $(PY) manage.py runserver $(HOST):$(PORT)

# Production settings under gunicorn. Needs SECRET_KEY and ALLOWED_HOSTS; on a machine without
# TLS in front, DJANGO_INSECURE_HTTP=1 serves plain HTTP (no HTTPS redirect, no secure cookies).
serve: $(VENV)/.runtime
	DJANGO_ENV=production $(PY) manage.py migrate --noinput
	DJANGO_ENV=production $(PY) manage.py import_lessons
	DJANGO_ENV=production $(PY) manage.py collectstatic --noinput --verbosity 0
	DJANGO_ENV=production $(VENV)/bin/gunicorn --config config/gunicorn.conf.py

chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "Installing Debian's chromium for the browser tests"; \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; \
	fi

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run
	DJANGO_ENV=production SECRET_KEY=check-deploy-$$(date +%s)-a-long-enough-random-looking-secret-key-value \
		ALLOWED_HOSTS=felab.example.org $(PY) manage.py check --deploy --fail-level WARNING

test-sqlite: $(VENV)/.dev chromium
	$(VENV)/bin/pytest

test: lint test-sqlite

test-postgres: $(VENV)/.dev chromium
	$(PY) -c "import psycopg; \
		conn = psycopg.connect('$(PG_ADMIN_URL)', autocommit=True); \
		conn.execute('DROP DATABASE IF EXISTS $(PG_TEST_DB) WITH (FORCE)'); \
		conn.execute('CREATE DATABASE $(PG_TEST_DB)')"
	DATABASE_URL=$(PG_TEST_URL) $(VENV)/bin/pytest

# Every benchmark, each printing its table (a missed target does not stop the others);
# the README keeps the latest figures.
# Lighthouse, pinned in bench/lighthouse/package-lock.json, for bench_lighthouse.py.
bench/lighthouse/node_modules/.bin/lighthouse: bench/lighthouse/package-lock.json
	cd bench/lighthouse && npm ci --no-audit --no-fund
	touch $@

bench: $(VENV)/.dev chromium bench/lighthouse/node_modules/.bin/lighthouse
	@command -v wrk >/dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y wrk)
	-$(PY) bench/bench_model.py
	-$(PY) bench/bench_pages.py
	-$(PY) bench/bench_http.py
	-$(PY) bench/bench_load.py
	-$(PY) bench/bench_practice.py --capacity-levels 64,128,256
	-$(PY) bench/bench_lighthouse.py

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .hypothesis
