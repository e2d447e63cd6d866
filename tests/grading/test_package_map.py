"""The grading package's docstring is its map: it names every module, so that a module added is placed on it."""

from __future__ import annotations

import pkgutil

import transformer_course.grading as grading


def test_the_grading_packages_docstring_names_every_module():
    modules = {module.name for module in pkgutil.iter_modules(grading.__path__)}
    unnamed = sorted(name for name in modules if f":mod:`.{name}`" not in grading.__doc__)
    assert unnamed == [], f"the map in grading/__init__.py leaves out {unnamed}"
