# The course's two entry points (see README.md):
#   make book   install the pinned environment into .venv, then build the book into _build/html
#   make test   run the test suite in that environment
VENV ?= .venv
PYTHON := $(VENV)/bin/python

.PHONY: book test clean

book: $(VENV)/.installed
	$(VENV)/bin/jupyter-book build .

test: $(VENV)/.installed
	$(PYTHON) -m pytest -n 2 --dist loadfile

$(VENV)/.installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -r requirements.txt
	touch $@

clean:
	rm -rf _build
