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
# Every recipe here lets Python cache each module's bytecode, even where the environment turns that
# off: the suite starts hundreds of Python processes (its workers, manage.py commands, gunicorn
# hosts, practice servers), and without the cache each compiles every module it imports again;
# collecting the tests alone takes 12 s of CPU against 5 s. The caches live in __pycache__
# folders, which git ignores.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run serve release worker setup check test test-sqlite test-under-load test-postgres lint chromium nginx bench cluster clean

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

# The site, a task worker for the sweeps started from /sim/, and the practice server they
# measure; Ctrl-C stops all three. SQLite and in-memory caches: no Redis, no nginx needed.
# The shell stops the practice server and the worker by their process ids when it exits: `kill 0`
# would signal the shell itself and re-enter the trap.
run: setup
	@echo "felab on http://$(HOST):$(PORT)/ ; practice server on http://127.0.0.1:$(PRACTICE_PORT)/v1"
	@FELAB_PRACTICE_URL=http://127.0.0.1:$(PRACTICE_PORT)/v1 $(PY) manage.py practice_server --port $(PRACTICE_PORT) & \
	practice=$$!; \
	FELAB_PRACTICE_URL=http://127.0.0.1:$(PRACTICE_PORT)/v1 $(PY) manage.py db_worker --no-reload --verbosity 0 & \
	worker=$$!; \
	trap 'kill $$practice $$worker 2>/dev/null; wait $$practice $$worker 2>/dev/null' EXIT; \
	trap 'exit 0' INT TERM; \
	FELAB_PRACTICE_URL=http://127.0.0.1:$(PRACTICE_PORT)/v1 $(PY) manage.py runserver $(HOST):$(PORT)

# Once per deploy, from one machine, before any host starts the new code: the schema, the
# bundled lessons and the static files. Hosts never migrate on start (they would race).
release: $(VENV)/.runtime
	DJANGO_ENV=production $(PY) manage.py migrate --noinput
	DJANGO_ENV=production $(PY) manage.py import_lessons
	DJANGO_ENV=production $(PY) manage.py collectstatic --noinput --verbosity 0

# One app host: production settings under gunicorn, behind nginx (docs/deploy.md). Needs
# SECRET_KEY and ALLOWED_HOSTS; it refuses to start while `make release` has not run.
# On a machine without TLS in front, DJANGO_INSECURE_HTTP=1 serves plain HTTP.
serve: $(VENV)/.runtime
	DJANGO_ENV=production $(PY) manage.py migrate --check
	DJANGO_ENV=production $(VENV)/bin/gunicorn --config config/gunicorn.conf.py

# A task worker (any number, on any host): takes queued sweeps from the database.
worker: $(VENV)/.runtime
	DJANGO_ENV=production $(PY) manage.py db_worker --no-reload

chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "Installing Debian's chromium for the browser tests"; \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; \
	fi

# Debian's nginx, for the proxy in front of the app hosts and the cluster tests.
nginx:
	@if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then \
		echo "Installing Debian's nginx"; \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y nginx; \
	fi

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run
	DJANGO_ENV=production SECRET_KEY=check-deploy-$$(date +%s)-a-long-enough-random-looking-secret-key-value \
		ALLOWED_HOSTS=felab.example.org $(PY) manage.py check --deploy --fail-level WARNING

# The tests run in lanes (tests/support/lanes.py marks them): `check` is the quick one, without
# a browser, a server or a process of its own. The rest runs on four pytest-xdist workers, each
# with its own database, practice server and Chromium: most of a browser or process test is
# waiting on another process, so four keep two cores busy where two left them half idle. The
# cluster lane runs beside them as one more process, its output printed once it ends: its tests
# start several gunicorn hosts, nginx, and PostgreSQL and Redis databases of fixed names, which
# nothing else in the suite uses; within the lane they run one test at a time.
PYTEST := $(VENV)/bin/pytest
XDIST ?= -n 4 --dist worksteal
QUICK_LANE := not browser and not process and not cluster
# Both lanes, the cluster lane in the background; fails when either fails.
define both_lanes
	@cluster_log=$$(mktemp); \
	$(1) $(PYTEST) -p no:cacheprovider -m cluster > $$cluster_log 2>&1 & cluster=$$!; \
	trap 'kill $$cluster 2>/dev/null; exit 130' INT TERM; \
	$(1) $(PYTEST) $(XDIST) -m "not cluster"; main=$$?; \
	wait $$cluster; lane=$$?; \
	echo "--- the cluster lane:"; cat $$cluster_log; rm -f $$cluster_log; \
	[ $$main -eq 0 ] && [ $$lane -eq 0 ]
endef

check: lint
	$(PYTEST) $(XDIST) -m "$(QUICK_LANE)"

test-sqlite: $(VENV)/.dev chromium nginx
	$(call both_lanes,)

test: lint test-sqlite

# No test may lean on wall-clock luck: the whole suite, twice in a row, beside a CPU hog that
# keeps both cores busy. Not part of CI: it takes about three suites' time.
test-under-load: $(VENV)/.dev chromium nginx
	@command -v stress >/dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y stress)
	stress --cpu 2 --quiet & hog=$$!; trap "kill $$hog" EXIT; \
		for run in 1 2; do \
			$(PYTEST) -p no:cacheprovider $(XDIST) -m "not cluster" && $(PYTEST) -p no:cacheprovider -m cluster || exit 1; \
		done

test-postgres: $(VENV)/.dev chromium nginx
	$(PY) -c "import psycopg; \
		conn = psycopg.connect('$(PG_ADMIN_URL)', autocommit=True); \
		conn.execute('DROP DATABASE IF EXISTS $(PG_TEST_DB) WITH (FORCE)'); \
		conn.execute('CREATE DATABASE $(PG_TEST_DB)')"
	$(call both_lanes,DATABASE_URL=$(PG_TEST_URL))

# Every benchmark, each printing its table (a missed target does not stop the others);
# docs/benchmarks.md keeps the latest results.
# Lighthouse, pinned in bench/lighthouse/package-lock.json, for bench_lighthouse.py.
bench/lighthouse/node_modules/.bin/lighthouse: bench/lighthouse/package-lock.json
	cd bench/lighthouse && npm ci --no-audit --no-fund
	touch $@

bench: $(VENV)/.dev chromium nginx bench/lighthouse/node_modules/.bin/lighthouse
	@command -v wrk >/dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y wrk)
	-$(PY) bench/bench_model.py --pages
	-$(PY) bench/bench_calc.py
	-$(PY) bench/bench_pages.py
	-$(PY) bench/bench_http.py
	-$(PY) bench/bench_signed_in.py
	-$(PY) bench/bench_server_cpu.py
	-$(PY) bench/bench_gc_pauses.py
	-$(PY) bench/bench_load.py
	-$(PY) bench/bench_practice.py --capacity-levels 64,128,256
	-$(PY) bench/bench_prefix_cache.py
	-$(PY) bench/bench_engine.py
	-$(PY) bench/bench_engine_web.py
	-$(PY) bench/bench_engine_web.py --pages
	-$(PY) bench/bench_flood.py
	-$(PY) bench/bench_cluster.py
	-$(PY) bench/bench_study.py
	-$(PY) bench/bench_drill.py
	-$(PY) bench/bench_learning.py
	-$(PY) bench/bench_lighthouse.py

# The cluster proof: nginx, two app hosts, a task worker, PostgreSQL and Redis on this machine.
cluster: $(VENV)/.dev nginx
	$(PY) bench/bench_cluster.py

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .hypothesis
