"""Where the runs take place: a pool of worker processes that keeps ``jobs`` runs going and gives each run's result
back, outliving a worker that dies; a cluster asked for without Dask's ``distributed`` is one error naming the extra."""

from __future__ import annotations

import os
import sys
from concurrent.futures.process import BrokenProcessPool

import pytest

from transformer_course.grading.workers import Workers


def test_a_worker_gives_back_what_the_function_returned():
    with Workers(jobs=1) as workers:
        assert workers.submit(abs, -3).result() == 3


def test_jobs_are_the_runs_kept_going_and_the_cores_by_default():
    with Workers(jobs=3) as three, Workers() as default:
        assert (three.slots, default.slots) == (3, os.cpu_count())


def test_a_worker_that_dies_fails_its_own_run_and_the_next_run_goes_on_in_a_new_pool():
    with Workers(jobs=1) as workers:
        with pytest.raises(BrokenProcessPool):
            workers.submit(os._exit, 1).result()
        assert workers.submit(abs, -2).result() == 2


def test_a_cluster_without_dasks_distributed_is_one_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    with pytest.raises(ModuleNotFoundError, match=r"--scheduler needs Dask's distributed package: .*\[cluster\]"):
        Workers(jobs=1, scheduler="tcp://127.0.0.1:8786")
