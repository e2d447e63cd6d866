"""The book's own programs: what the chapters run, record and draw, built on the package's library.

The model (``transformer_course``), the data (``.data``), decoding and the §5 training library
(``.training``) are what a reader reuses; this wing is what the book itself needs of them. Only the
command line imports it: ``training``, ``data`` and the model's modules never reach up here (a test
in ``tests/test_book_run.py`` reads their imports).

=======================  ==============================================================
``book_run``             the book's numbers model: trained by chapter 8, loaded by chapter 9
``record``               a trained run kept as a small JSON file (``record`` command)
``variations``           the paper's Table 3 at small scale, several seeds per variant (``variations`` command)
``commands``             the ``record`` and ``variations`` commands
``diagrams``             the paper's Figures 1 and 2, with the shapes of a real forward pass
``plots``                attention heat maps
``mechanisms``           pictures of the mechanisms, from the package's own tensors and functions
``figure_descriptions``  every figure in words, for the pages' text alternatives
``experiments``          the tables and pictures of chapter 8's last section, in every edition's language
=======================  ==============================================================

    from transformer_course.book_programs import book_numbers_run
    from transformer_course.book_programs.diagrams import draw_figure_1
    from transformer_course.book_programs.plots import attention_heatmap
"""

from .book_run import BOOK_RUN_DIRECTORY, BookRun, BookRunPlan, book_numbers_run
from .figure_descriptions import describe_every_figure_shown

# In a page's kernel every figure a cell shows carries its description in every edition's language,
# which the book writes as the image's text alternative (a figure without one fails the strict build).
describe_every_figure_shown()

__all__ = ["BOOK_RUN_DIRECTORY", "BookRun", "BookRunPlan", "book_numbers_run"]
