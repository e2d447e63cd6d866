"""Each sandbox reads matplotlib's font list made once by its worker, instead of scanning the fonts again."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

import transformer_course  # noqa: E402
from transformer_course.grading.execute import started  # noqa: E402
from transformer_course.grading.limits import GradingLimits  # noqa: E402
from transformer_course.grading.sandbox import SandboxSpec, matplotlib_font_list, runner_launch  # noqa: E402

pytestmark = [pytest.mark.needs_nbgrader, pytest.mark.needs_bwrap]

PACKAGE_ROOT = Path(transformer_course.__file__).resolve().parents[1]

# matplotlib logs "generated new fontManager" (INFO) when it scans the fonts rather than reading a list.
FONT_PROBE = """
import logging, os
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
logging.getLogger("matplotlib").addHandler(Keep())
logging.getLogger("matplotlib").setLevel(logging.INFO)
import matplotlib.font_manager as font_manager
listed = [name for name in os.listdir(os.environ["MPLCONFIGDIR"]) if name.startswith("fontlist")]
writable = [os.access(os.path.join(os.environ["MPLCONFIGDIR"], name), os.W_OK) for name in listed]
print(json.dumps({"listed": listed, "writable": writable, "fonts": len(font_manager.fontManager.ttflist),
                  "scanned": any("generated new fontManager" in message for message in records)}))
"""


def _probe(tmp_path: Path, font_list: Path | None) -> dict:
    notebook = tmp_path / "empty.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    limits = GradingLimits()
    spec = SandboxSpec(PACKAGE_ROOT, notebook, (), (), limits, True, font_list)
    with started(runner_launch(spec, tmp_path / "scratch"), limits) as session:
        assert session.start_problem() is None
        reply = session.runner.execute("import json\n" + FONT_PROBE, 120, 2**16)
    printed = "".join(output.get("text", "") for output in reply.outputs)
    assert reply.problem is None and printed, f"the probe did not run: {reply.problem} {reply.outputs}"
    return json.loads(printed)


@pytest.fixture(scope="module")
def font_list(tmp_path_factory) -> Path:
    made = matplotlib_font_list(tmp_path_factory.mktemp("fonts"))
    assert made is not None, "the course's interpreter could not make matplotlib's font list"
    return made


def test_the_font_list_is_matplotlibs_json_of_the_installed_fonts(font_list):
    listed = json.loads(font_list.read_text(encoding="utf-8"))
    assert font_list.name.startswith("fontlist-v") and listed["ttflist"], f"not a font list: {font_list}"


def test_a_sandbox_reads_the_workers_font_list_read_only_and_scans_nothing(tmp_path, font_list):
    probe = _probe(tmp_path, font_list)
    assert probe["listed"] == [font_list.name] and probe["writable"] == [False], probe
    assert not probe["scanned"], f"matplotlib scanned the fonts in the sandbox: {probe}"
    assert probe["fonts"] == len(json.loads(font_list.read_text(encoding="utf-8"))["ttflist"]), probe


def test_without_a_font_list_the_sandbox_scans_the_fonts_itself(tmp_path):
    """The cost the list saves: an empty MPLCONFIGDIR makes matplotlib scan and write its own."""
    probe = _probe(tmp_path, None)
    assert probe["scanned"] and probe["writable"] == [True], probe
