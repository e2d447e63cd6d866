# The course's two entry points (see README.md):
#   make book       install the pinned environment into .venv, then build the book into _build/html
#                   (English; its pages executed two at a time first) and _build/html/zh_CN (Chinese,
#                   from the same source and execution)
#   make pdf        after make book: the book as PDF, _build/pdf/attention-is-all-you-need.pdf and
#                   ...-zh_CN.pdf, from the same execution (XeLaTeX: the Debian packages README names)
#   make test       run the test suite in that environment
#   make catalogs   after an English change: the translation catalogs follow the pages (README)
#   make grading    an instructor's grading machine: the grading environment alone (no book) into .venv,
#                   with PyTorch's CPU build (TORCH_INDEX= takes PyPI's default build, e.g. CUDA on Linux)
VENV ?= .venv
PYTHON := $(VENV)/bin/python
# PyTorch's own index of CPU-only builds: a sixth of the CUDA build's download, and what grading runs on.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: book pdf test catalogs grading clean

book: $(VENV)/.installed
	$(PYTHON) -m transformer_course.book_programs.editions execute
	$(VENV)/bin/jupyter-book build .
	$(PYTHON) -m transformer_course.book_programs.editions build

# `editions execute` runs nothing after make book; without it the LaTeX build would execute the pages itself.
pdf: $(VENV)/.installed
	$(PYTHON) -m transformer_course.book_programs.editions execute
	$(PYTHON) -m transformer_course.book_programs.pdf_editions

catalogs: $(VENV)/.installed
	$(PYTHON) -m transformer_course.book_programs.editions catalogs

test: $(VENV)/.installed
	$(PYTHON) -m pytest -n 2 --dist loadfile

$(VENV)/.installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -r requirements.txt
	touch $@

# The grading extra at requirements.txt's versions (its lines, without the editable package, as constraints).
grading:
	@command -v bwrap >/dev/null || { echo "error: bubblewrap is missing: sudo apt-get install bubblewrap (grading runs every submission in it)"; exit 1; }
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	grep -v '^-e' requirements.txt > $(VENV)/constraints.txt
	$(PYTHON) -m pip install --quiet "torch==$$(sed -n 's/^torch==//p' requirements.txt)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PYTHON) -m pip install --quiet -e ".[grading]" -c $(VENV)/constraints.txt
	$(VENV)/bin/transformer-course self-test

clean:
	rm -rf _build
