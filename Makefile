# Two commands do everything on a fresh Debian machine: `make run` and `make test`.
SHELL := /bin/bash
PY := .venv/bin/python
PIP := .venv/bin/pip
# Debian packages: WeasyPrint's Pango stack, HarfBuzz-Subset (fast CJK font
# subsetting), the CJK and Latin fonts the PDF embeds, gettext for the
# translations, poppler-utils (pdftotext/pdftoppm) and Chromium for the tests.
SYSTEM_PACKAGES := libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-noto-cjk \
	fonts-dejavu-core gettext poppler-utils chromium
HOST ?= 127.0.0.1
PORT ?= 8000
# The address links in notifications and e-mails point at (settings.SITE_URL): by default the
# address `make run` serves on; set it to the address users reach when that differs (a proxy,
# HOST=0.0.0.0).
SITE_URL ?= http://$(HOST):$(PORT)
PYTEST_ARGS ?= -n 2 --dist loadfile

.PHONY: run test test-fast system-deps venv setup bench lint screenshots clean

system-deps:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "Installing system packages: $$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else \
			echo "Missing system packages (run as root: apt-get install $$missing)"; exit 1; \
		fi; \
	fi

.venv/bin/python:
	python3 -m venv .venv

.venv/.installed: requirements.txt requirements-dev.txt | .venv/bin/python
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements-dev.txt
	touch $@

venv: .venv/.installed

locale/zh_Hans/LC_MESSAGES/django.mo: locale/zh_Hans/LC_MESSAGES/django.po | .venv/.installed
	$(PY) manage.py compilemessages -l zh_Hans >/dev/null

# Refresh the Chinese catalog: extract every marked string, fill the msgstrs from
# locale/zh_Hans/*.tsv (fill.py lists what is still untranslated), then compile.
.PHONY: messages
messages: venv
	$(PY) manage.py makemessages -l zh_Hans --ignore=.venv --ignore=tests --ignore=bench --ignore=scripts -v0
	$(PY) locale/zh_Hans/fill.py
	$(PY) manage.py compilemessages -l zh_Hans --ignore=.venv >/dev/null

setup: system-deps venv locale/zh_Hans/LC_MESSAGES/django.mo

run: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_catalog
	$(PY) manage.py create_demo_users
	SITE_URL='$(SITE_URL)' $(PY) manage.py runserver $(HOST):$(PORT)

test: setup
	$(PY) manage.py makemigrations --check --dry-run >/dev/null || { echo "Model changes without migrations: run manage.py makemigrations"; exit 1; }
	$(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

# The engine and drawing tests alone: seconds, no database, no browser (the golden plans, which need the
# seeded catalog in a test database, are in tests/golden and run with `make test`).
test-fast: setup
	$(PY) -m pytest -q -p no:cacheprovider tests/engine tests/drawings

bench: setup
	$(PY) bench/run_all.py

lint: venv
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy

clean:
	rm -rf .venv db.sqlite3 staticfiles media
