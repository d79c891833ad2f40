# Two entry points (see README.md): `make run` and `make test`; `make serve` runs a real study (gunicorn).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: venv run serve worker test lint bench clean messages compiled-messages

$(BIN)/python:
	$(PY) -m venv $(VENV)

# The pinned requirements and the repository itself (editable: `import evaluation`, `diversity-eval` and a
# report's reproduce.sh work from any folder with .venv/bin/python); done again only when one of them changes.
$(VENV)/.installed: requirements.txt requirements-dev.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements-dev.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $@

venv: $(VENV)/.installed

# The participant pages' translations (locale/*/LC_MESSAGES/django.po, docs/annotator.md#languages) are
# compiled to .mo files (gettext's msgfmt when installed, else polib: make run needs nothing else); .mo files newer than their .po are kept.
compiled-messages: venv
	$(BIN)/python manage.py compile_translations

# After changing a participant text: bring the catalogues up to date, then translate what is new.
messages: venv
	$(BIN)/python manage.py makemessages -l zh_Hans -l ja --add-location file -i "tests/*" -i "benchmarks/*" -i "evaluation/*"
	@# nothing but the header's date changed: keep the committed catalogues as they are (a stable diff)
	@if git diff --quiet -I '^"POT-Creation-Date: ' -- locale/; then git checkout -- locale/; fi

run: venv compiled-messages
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo --base-url http://$(HOST):$(PORT)
	@echo "Open http://$(HOST):$(PORT)/ (annotator link and staff login above)"
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

# Production: DATABASE_URL, DJANGO_SECRET_KEY, DJANGO_ALLOWED_HOSTS from the environment; WEB_CONCURRENCY workers.
serve: venv compiled-messages
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	STUDYAPP_STATIC_FROM_APPS=0 $(BIN)/gunicorn -c gunicorn.conf.py studyapp.wsgi

# The job worker beside `make serve` (or `make run`): sends the review page's Apply (manage.py run_jobs).
worker: venv
	$(BIN)/python manage.py run_jobs

test: venv compiled-messages
	$(BIN)/python -m pytest -q --durations=30

# The repository's ruff configuration (ruff.toml); no hooks needed. CI runs the same two checks.
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: venv
	$(BIN)/python benchmarks/bench_metrics.py

clean:
	rm -rf $(VENV) .pytest_cache
