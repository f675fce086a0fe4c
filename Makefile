# Prob2Vec Studio: `make run` serves the demo course on http://127.0.0.1:8000, `make test` runs every test.
# Python 3.11: the offline CPU build of torch==2.13.0 on our machines is a cp311 wheel.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

# Tests always run against real services (see README, "Testing").
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/prob2vec
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15

.PHONY: run setup test test-fast bench clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed requirements-test.txt
	$(PY) -m pip install --quiet -r requirements-test.txt
	touch $@

setup: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo
	$(PY) manage.py extract_concepts
	$(PY) manage.py rebuild_embeddings --method prob2vec --source labels

# runserver and a Celery worker on the embedded filesystem broker (no Redis): jobs run in the background
# and their pages show progress. Ctrl-C stops both (prob2vec_site/devrun.py).
run: setup
	@echo "Serving Prob2Vec Studio on http://$(HOST):$(PORT)/ with a background worker (demo logins are printed above)"
	$(PY) -m prob2vec_site.devrun $(HOST):$(PORT)

test: $(VENV)/.installed-test
	DATABASE_URL=$(TEST_DATABASE_URL) TEST_REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest $(PYTEST_ARGS)

test-fast: $(VENV)/.installed-test
	DATABASE_URL=$(TEST_DATABASE_URL) TEST_REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest -m "not browser and not slow" $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) staticfiles db.sqlite3 .broker
