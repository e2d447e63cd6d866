"""One vocabulary for how a submission ended: each status says what it means, and the worst problem of a run wins."""

from __future__ import annotations

from transformer_course.grading.status import GRADED_STATUSES, WORST_FIRST, Problem, Status, worst


def test_every_status_is_the_csvs_word_and_says_what_it_means():
    for status in Status:
        assert status.value == str(status) and status.meaning, status


def test_the_worst_problem_wins_whatever_came_first():
    timeout = Problem(Status.TIMEOUT, "cell 3 was interrupted")
    memory = Problem(Status.MEMORY_LIMIT, "cell 5 ran out of memory")
    assert worst([timeout, memory]) == memory


def test_of_two_problems_alike_the_first_is_told():
    first, second = Problem(Status.TIMEOUT, "cell 3"), Problem(Status.TIMEOUT, "cell 5")
    assert worst([first, second]) is first


def test_a_run_without_problems_has_none():
    assert worst([]) is None


def test_every_problem_a_run_can_have_keeps_the_points_earned():
    assert set(WORST_FIRST) <= set(GRADED_STATUSES)
