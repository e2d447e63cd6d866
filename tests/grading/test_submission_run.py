"""The redacted package travels to the workers as an archive, and is unpacked where no one else can write."""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path

import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from transformer_course.grading.redaction import redacted_package  # noqa: E402
from transformer_course.grading.submission_run import PackageArchive  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> PackageArchive:
    directory = redacted_package(
        ["transformer_course.attention.scaled_dot_product_attention"], tmp_path_factory.mktemp("package")
    )
    return PackageArchive.of(directory)


def test_the_unpacked_package_is_the_redacted_one_with_its_byte_code(archive):
    unpacked = archive.unpacked()
    attention = (unpacked / "transformer_course" / "attention.py").read_text(encoding="utf-8")
    assert "is what this assignment asks you to write" in attention
    assert list((unpacked / "transformer_course").glob("__pycache__/*.pyc")), "the byte code was not packed"


def test_a_package_planted_in_the_shared_temporary_folder_is_not_used(archive):
    """Another user of the grading machine can write to /tmp: a folder named by the archive's digest there (a
    package with the reference implementation back, say) must not become what the sandbox imports."""
    planted = Path(tempfile.gettempdir()) / "transformer-course-packages" / archive.digest
    planted.mkdir(parents=True, exist_ok=True)
    try:
        unpacked = archive.unpacked()
        assert unpacked.resolve() != planted.resolve()
        parent = unpacked.parent.stat()
        assert stat.S_IMODE(parent.st_mode) & 0o077 == 0, f"{unpacked.parent} is open to other users"
    finally:
        planted.rmdir()
