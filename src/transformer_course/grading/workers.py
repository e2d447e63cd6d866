"""Where the sandboxed runs take place: a pool of worker processes on this machine, or a Dask cluster.

The grader process alone reads submissions, writes the gradebook, ``grades.csv`` and feedback; it
hands each submission's :class:`~transformer_course.grading.submission_run.SubmissionRun` (plain
data) to a worker, which runs it in a fresh sandbox and sends back the executed notebook and
verdicts. A worker is a long-lived process that has imported torch and the judging code once; it
runs one submission at a time, each in its own sandbox, and nothing of one run is left for the next.

* **Locally** (the default): ``jobs`` processes of a :class:`~concurrent.futures.ProcessPoolExecutor`
  (spawned, not forked from the grader and its threads, so that each starts with the grader's
  environment of the moment: its PATH finds the same bubblewrap).
* **On a cluster**: ``scheduler="tcp://HOST:PORT"`` sends the runs to the workers of a running Dask
  scheduler (``distributed``). Each worker machine needs bubblewrap and the course's Python
  environment at the same path; start the workers with one thread each
  (``dask worker tcp://HOST:PORT --nworkers N --nthreads 1``): hidden tests are judged one at a
  time per worker process.

A worker process that dies (killed by the machine, say) fails the submission it was running, with
a message saying so; the pool is started again for the others.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool


class Workers:
    """Runs ``function(argument)`` in a worker and gives a :class:`~concurrent.futures.Future`; ``slots`` is how
    many runs to keep going at once so that no worker waits."""

    def __init__(self, jobs: int | None = None, scheduler: str | None = None):
        self.scheduler = scheduler
        self._client = None
        self._pool: ProcessPoolExecutor | None = None
        if scheduler is None:
            self.slots = max(1, jobs or os.cpu_count() or 1)
            self._pool = self._new_pool()
        else:
            try:
                from distributed import Client
            except ModuleNotFoundError:
                raise ModuleNotFoundError(
                    "--scheduler needs Dask's distributed package: pip install 'transformer-course[cluster]'",
                    name="distributed",
                ) from None
            self._client = Client(scheduler)
            self._executor = self._client.get_executor(pure=False)
            self.slots = max(1, jobs or sum(self._client.nthreads().values()))

    def submit(self, function: Callable, argument) -> Future:
        if self._client is not None:
            return self._executor.submit(function, argument)
        try:
            return self._pool.submit(function, argument)
        except BrokenProcessPool:  # a worker died earlier: the others' runs go on in a new pool
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            return self._pool.submit(function, argument)

    def warm_up(self, module: str) -> None:
        """Have every local worker import ``module`` now (what it runs), while the grader prepares the class;
        Dask's workers are long-lived, and import it at their first run."""
        if self._pool is not None:
            for _ in range(self.slots):
                self._pool.submit(importlib.import_module, module)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exception) -> None:
        self.close()

    def _new_pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        return ProcessPoolExecutor(max_workers=self.slots, mp_context=context)
