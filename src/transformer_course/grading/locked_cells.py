"""Which locked cells a notebook changed, by nbgrader's own checksums.

At release nbgrader records in each locked cell (a test cell, given code) a checksum of its type, source and nbgrader
metadata. Intake holds a submission to them, so that a test cell that was edited, retyped or deleted is restored
(``tests_restored``), and ``check`` tells the learner which test cells grading will restore.
"""

from __future__ import annotations

import nbformat
from nbgrader import utils

from .nbgrader_cells import cells_by_grade_id, nbgrader_metadata, source_text


def edited_locked_cells(notebook: dict, release: dict, *other_versions: dict) -> list[str]:
    """grade_ids of the locked cells of ``release`` (tests, given code) that ``notebook`` edited, retyped or deleted.

    A cell of ``notebook`` is unchanged when its type and source, under the released cell's metadata, give the
    released checksum or the checksum of the same cell in one of ``other_versions`` (the source notebook, whose test
    cells still hold the hidden tests). A learner's notebook serves as its own ``release``: its locked cells carry the
    checksums.
    """
    cells = cells_by_grade_id(notebook)
    versions = [cells_by_grade_id(version) for version in other_versions]
    edited = []
    for name, released in cells_by_grade_id(release).items():
        metadata = nbgrader_metadata(released)
        if not utils.is_locked(nbformat.from_dict(released)):
            continue
        accepted = {metadata.get("checksum") or _checksum(released, metadata)}
        accepted |= {_checksum(version[name], metadata) for version in versions if name in version}
        if name not in cells or _checksum(cells[name], metadata) not in accepted:
            edited.append(name)
    return edited


def _checksum(cell: dict, metadata: dict) -> str:
    """nbgrader's checksum of ``cell``'s type and source under the nbgrader ``metadata`` given."""
    plain = {"cell_type": cell.get("cell_type"), "source": source_text(cell), "metadata": {"nbgrader": metadata}}
    return utils.compute_checksum(nbformat.from_dict(plain))
