# The course's two entry points (see README.md):
#   make book       install the pinned environment into .venv, then build the book into _build/html
#                   (English; its pages executed two at a time first) and _build/html/zh_CN (Chinese,
#                   from the same source and execution)
#   make test       run the test suite in that environment
#   make catalogs   after an English change: the translation catalogs follow the pages (README)
VENV ?= .venv
PYTHON := $(VENV)/bin/python

.PHONY: book test catalogs clean

book: $(VENV)/.installed
	$(PYTHON) -m transformer_course.book_programs.editions execute
	$(VENV)/bin/jupyter-book build .
	$(PYTHON) -m transformer_course.book_programs.editions build

catalogs: $(VENV)/.installed
	$(PYTHON) -m transformer_course.book_programs.editions catalogs

test: $(VENV)/.installed
	$(PYTHON) -m pytest -n 2 --dist loadfile

$(VENV)/.installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -r requirements.txt
	touch $@

clean:
	rm -rf _build
