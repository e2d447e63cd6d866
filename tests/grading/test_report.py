"""The class's rows, made from a gradebook and a run record written here by hand (no notebook is run): every point
from the gradebook, the bonus apart from the core's maximum, the written answers that wait, the late penalty after
the extension, and a row for whoever the roster names and nobody graded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from scratch_course import ASSIGNMENT, gradebook, graded, write_course
from suite_layers import NBGRADER_MISSING

pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)

from transformer_course.grading.context import GradingContext  # noqa: E402
from transformer_course.grading.course import Course  # noqa: E402
from transformer_course.grading.report import class_rows, student_row  # noqa: E402
from transformer_course.grading.roster import Student  # noqa: E402
from transformer_course.grading.run_record import RunRecord  # noqa: E402
from transformer_course.grading.status import Status  # noqa: E402
from transformer_course.grading.submission import Submission  # noqa: E402

pytestmark = pytest.mark.needs_nbgrader

DUE = datetime(2026, 11, 20, 12, tzinfo=UTC)
POLICY = (
    "bonus: [bonus]\n"
    f"due: {DUE.isoformat()}\n"
    "late_policy: {deduct: 0.1, per: day, cap: 0.5}\n"  # a tenth of the maximum per day started, half at most
)


def _ended(student_id: str, status: Status, **fields) -> Submission:
    submission = Submission(student_id, ASSIGNMENT, **fields)
    return submission.end(status, "" if status == Status.GRADED else status.meaning)


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> GradingContext:
    root = write_course(tmp_path_factory.mktemp("course"), POLICY)
    context = GradingContext.of(Course(root), ASSIGNMENT, f"sqlite:///{root / 'gradebook.db'}")
    with gradebook(context.db_url) as book:
        graded(book, "all-points", {"core": 4.0, "written": 2.0, "bonus": 1.0})
        graded(book, "waits", {"core": 3.0, "written": None, "bonus": 0.0})
        graded(book, "late", {"core": 4.0, "written": 2.0, "bonus": 0.0})
        graded(book, "late-with-extension", {"core": 4.0, "written": 2.0, "bonus": 0.0})
        graded(book, "broke", {"core": 4.0, "written": 2.0, "bonus": 0.0})
    late = DUE + timedelta(days=1, hours=12)
    RunRecord.read(root, ASSIGNMENT).keep(
        _ended("all-points", Status.GRADED, findings=["cell core: meta-programming (exec)"]),
        _ended("waits", Status.TESTS_RESTORED),
        _ended("late", Status.GRADED, submitted_at=late),
        _ended("late-with-extension", Status.GRADED, submitted_at=late, extension_days=2.0),
        _ended("broke", Status.ERROR),
        _ended("never-came", Status.MISSING),
    )
    RunRecord.read(root, ASSIGNMENT).keep_similarity({"all-points": ["73% of the code is like late's"]})
    return context


@pytest.fixture(scope="module")
def rows(context) -> dict:
    roster = {student: Student(student) for student in ("all-points", "on-the-roster-only")}
    return {row.student_id: row for row in class_rows(context, roster=roster)}


def test_every_point_counts_and_the_maximum_is_the_cores(rows):
    row = rows["all-points"]
    assert (row.score, row.max_score, row.bonus_score, row.pending_manual_points) == (7.0, 6.0, 1.0, 0.0), row


def test_a_written_answer_nobody_graded_is_pending_and_earns_nothing_yet(rows):
    row = rows["waits"]
    assert (row.score, row.pending_manual_points, row.status) == (3.0, 2.0, "tests_restored"), row


def test_a_late_submission_loses_a_tenth_of_the_maximum_per_day_started(rows):
    row = rows["late"]
    assert (row.late_by, row.penalty, row.score) == (36.0, pytest.approx(1.2), pytest.approx(4.8)), row


def test_an_extension_moves_the_due_date(rows):
    row = rows["late-with-extension"]
    assert (row.late_by, row.penalty, row.score) == (0.0, 0.0, 6.0), row


def test_a_due_date_given_to_the_command_wins_over_grading_yml(context):
    (row,) = [row for row in class_rows(context, due=DUE + timedelta(days=2)) if row.student_id == "late"]
    assert (row.late_by, row.penalty, row.score) == (0.0, 0.0, 6.0), row


def test_a_submission_the_grader_could_not_grade_has_no_score_whatever_the_gradebook_holds(rows):
    row = rows["broke"]
    assert (row.score, row.status, row.bonus_score) == (None, "error", None), row


def test_a_student_who_handed_in_nothing_scores_zero(rows):
    assert (rows["never-came"].score, rows["never-came"].status) == (0.0, "missing"), rows["never-came"]


def test_a_student_on_the_roster_whom_no_run_graded_gets_a_missing_row(rows):
    row = rows["on-the-roster-only"]
    assert (row.score, row.max_score, row.status, row.message) == (0.0, 6.0, "missing", "nothing was handed in"), row


def test_the_review_holds_the_runs_findings_then_the_similarity_reports(rows):
    assert rows["all-points"].review == "cell core: meta-programming (exec); 73% of the code is like late's"


def test_the_rows_are_sorted_by_student_id(context):
    ids = [row.student_id for row in class_rows(context, roster={"aaa": Student("aaa")})]
    assert ids == sorted(ids) and ids[0] == "aaa", ids


def test_a_students_row_is_their_row_of_the_class(context, rows):
    assert student_row(context, "late") == rows["late"]
    assert student_row(context, "nobody") is None
