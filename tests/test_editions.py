"""The pages an edition has: every document of the table of contents, a chapter's sections included."""

from transformer_course.book_programs.editions import toc_pages

TOC = """\
format: jb-book
root: book/intro
parts:
  - caption: The whole model
    chapters:
      - file: book/07-encoder-decoder
      - file: book/08-training
        sections:
          - file: book/08-experiments
            sections:
              - file: book/08-more
      - file: book/09-decoding
  - caption: Reference
    chapters:
      - file: book/glossary
"""


def test_toc_pages_lists_each_chapters_sections_after_it_in_reading_order(tmp_path):
    (tmp_path / "_toc.yml").write_text(TOC, encoding="utf-8")
    assert toc_pages(tmp_path) == [
        "book/intro",
        "book/07-encoder-decoder",
        "book/08-training",
        "book/08-experiments",
        "book/08-more",
        "book/09-decoding",
        "book/glossary",
    ]
