"""nbgrader's notebook executor, made to finish a notebook whose kernel is lost.

nbgrader interrupts a cell that runs past the time limit and goes on, but when the kernel *dies*
(``exit()``, ``os._exit``, a crash, memory exhausted) or stops answering, its executor raises and
nbgrader records no grade at all, not even for the tests that passed before. This executor writes
the failure into the cell where it happened, marks every later cell as not run, and lets nbgrader
grade what there is. ``nbgrader_config.py`` puts it in place of nbgrader's ``Execute``; its
settings (``Execute.timeout`` …) still apply, since it is a subclass.
"""

from __future__ import annotations

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute

KERNEL_DIED = "DeadKernelError"
KERNEL_UNRESPONSIVE = "KernelUnresponsiveError"
NOT_RUN = "KernelLostError"


class ResilientExecute(Execute):
    """Execute every cell; after the kernel is lost, record the loss instead of raising."""

    def preprocess(self, nb, resources=None, km=None):
        self.kernel_lost_at: int | None = None
        return super().preprocess(nb, resources, km)

    def preprocess_cell(self, cell: NotebookNode, resources, index: int):
        if cell.cell_type != "code":
            return super().preprocess_cell(cell, resources, index)
        if self.kernel_lost_at is not None:
            cell.outputs = [_error(NOT_RUN, f"not run: the kernel was lost in cell {self.kernel_lost_at}")]
            return cell, self.resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            failure = _error(KERNEL_DIED, "the kernel died while this cell ran (exit(), a crash or the memory limit)")
        except CellTimeoutError:
            failure = _error(KERNEL_UNRESPONSIVE, "the kernel stopped responding while this cell ran")
        self.log.error("Kernel lost in cell %d", index)
        self.kernel_lost_at = index
        cell.outputs.append(failure)
        return cell, self.resources


def _error(name: str, message: str) -> NotebookNode:
    return new_output("error", ename=name, evalue=message, traceback=[f"{name}: {message}"])
