"""Data-parallel training on several GPUs (or CPU processes) with ``torchrun``.

    torchrun --nproc_per_node=2 -m transformer_course.cli train --task multi30k ...

``torchrun`` starts one process per device and tells each its ``RANK`` and the ``WORLD_SIZE``
through environment variables. Every process holds a full copy of the model and trains on its own
share of the batches; ``DistributedDataParallel`` averages the gradients across processes during
``backward()``, so all copies take the same step and stay identical. GPUs talk over NCCL; CPU
processes over gloo.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class ProcessGroup:
    """This process's place among ``world_size`` processes; rank 0 writes files and prints."""

    rank: int = 0
    world_size: int = 1
    owns_group: bool = False  # True if we started the process group and must end it

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    def close(self) -> None:
        if self.owns_group and dist.is_initialized():
            dist.destroy_process_group()


def join_process_group(device: torch.device) -> ProcessGroup:
    """Join the process group that ``torchrun`` (or a test) describes in the environment.

    Without ``WORLD_SIZE`` > 1 this is a single process and nothing happens.
    """
    if dist.is_initialized():
        return ProcessGroup(dist.get_rank(), dist.get_world_size())
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return ProcessGroup()
    dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return ProcessGroup(dist.get_rank(), dist.get_world_size(), owns_group=True)


def local_device(device: torch.device) -> torch.device:
    """With several GPUs on one machine, process ``LOCAL_RANK`` uses GPU number ``LOCAL_RANK``."""
    if device.type == "cuda" and device.index is None and "LOCAL_RANK" in os.environ:
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    return device
