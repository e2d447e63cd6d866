"""A session reads what the runner says went wrong through one table: each problem's status, the error the cell
shows, and whether the cells after it run. A fake runner stands in for the sandbox's."""

from __future__ import annotations

from types import SimpleNamespace

import nbformat
import pytest

from transformer_course.grading.execute import PROBLEMS, Session, execute_notebook
from transformer_course.grading.limits import GradingLimits
from transformer_course.grading.pipe import Reply, RunnerProblem
from transformer_course.grading.status import Status


class FakeRunner:
    """Answers every request with the next of ``replies``; its process has ended with ``last_words``."""

    def __init__(self, *replies: Reply, last_words: str = ""):
        self.replies, self.codes = list(replies), []
        self.process = SimpleNamespace(poll=lambda: 0)
        self._last_words = last_words

    def execute(self, code, timeout, output_limit, answers=False, store_history=None) -> Reply:
        self.codes.append(code)
        return self.replies.pop(0) if self.replies else Reply()

    def stderr_tail(self) -> str:
        return self._last_words


def _ran(*replies: Reply, last_words: str = "") -> tuple[Session, list]:
    session = Session(FakeRunner(*replies, last_words=last_words), None, GradingLimits())
    cells = [nbformat.v4.new_code_cell(f"x = {index}") for index in range(2)]
    for index, cell in enumerate(cells):
        session.run_cell(cell, cell.source, f"cell {index}")
    return session, cells


def test_every_problem_of_the_runner_has_its_row_in_the_table():
    assert set(PROBLEMS) == set(RunnerProblem)


@pytest.mark.parametrize("problem", list(RunnerProblem))
def test_each_problem_gives_its_tables_status_and_error(problem):
    session, cells = _ran(Reply(problem=problem))
    shown = PROBLEMS[problem]
    assert session.problems[0].status == shown.status, session.problems
    assert cells[0].outputs[-1].ename == shown.error
    assert (session.lost_in == "cell 0") == shown.kernel_lost


def test_the_cells_after_a_lost_kernel_say_so_and_are_not_sent():
    session, cells = _ran(Reply(problem=RunnerProblem.KERNEL_DIED))
    assert len(session.runner.codes) == 1
    assert "the kernel was lost in cell 0" in cells[1].outputs[0].evalue


def test_a_cell_past_its_time_leaves_the_kernel_to_the_next_cell():
    session, cells = _ran(Reply(problem=RunnerProblem.TIMEOUT))
    assert session.runner.codes == ["x = 0", "x = 1"] and cells[1].outputs == []
    assert session.problems[0].message == "cell 0 was interrupted after the time limit"


def test_a_kernel_whose_last_words_say_memory_ran_out_ran_out_of_memory():
    session, _ = _ran(Reply(problem=RunnerProblem.KERNEL_DIED), last_words="RuntimeError: can't allocate memory")
    assert session.problems[0].status == Status.MEMORY_LIMIT, session.problems


def test_a_judge_is_asked_first_for_each_code_cell():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("judged"), nbformat.v4.new_code_cell("run")])
    runner = FakeRunner()
    execute_notebook(notebook, Session(runner, None, GradingLimits()), lambda cell, label: cell.source == "judged")
    assert runner.codes == ["run"]
