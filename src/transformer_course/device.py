"""Where to run and in which precision.

The package runs on whatever is present: a CUDA GPU with mixed precision, or the CPU in float32.
On a GPU, matrix products run in bfloat16 where the chip computes it natively (compute capability
8.0 and newer, Ampere on: the same exponent range as float32, no loss scaling needed) and in
float16 with a gradient scaler otherwise (e.g. Colab's T4, compute capability 7.5).
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

import torch

BFLOAT16_MIN_CAPABILITY = 8  # Ampere (sm80) and newer have bfloat16 tensor cores


def default_device() -> torch.device:
    """The first CUDA GPU if there is one, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """The device that a setting names: ``"auto"`` (or ``None``) is :func:`default_device`.

    Every command's ``--device`` and every ``device=`` setting goes through here, so that ``"auto"``
    means the same everywhere. ``"cpu"``, ``"cuda"``, ``"cuda:1"`` and :class:`torch.device` objects
    are taken as they are.

    Raises:
        ValueError: ``device`` names no device PyTorch knows, or a CUDA device on a machine where
            PyTorch sees no GPU (the error would otherwise come later, from deep inside a layer).
    """
    if device is None or device == "auto":
        return default_device()
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"unknown device {device!r}: use auto, cpu, cuda or cuda:N") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but PyTorch sees no CUDA GPU here: use auto or cpu")
    return resolved


def device_option(text: str) -> str:
    """The ``type`` of every ``--device`` option: the setting as given (``"auto"`` stays ``"auto"``,
    so that a checkpoint keeps what was asked for), checked by :func:`resolve_device` when parsed.

    Raises:
        argparse.ArgumentTypeError: the device does not exist here; argparse prints it as one line.
    """
    try:
        resolve_device(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def autocast_dtype(device: torch.device | str) -> torch.dtype | None:
    """The mixed-precision dtype for ``device``: bfloat16 or float16 on CUDA, None (float32) on the CPU.

    The choice follows the compute capability of ``device`` itself (not of the current GPU):
    ``torch.cuda.is_bf16_supported()`` also answers True on older GPUs that only emulate bfloat16,
    slowly, and a T4 must train in float16 with a gradient scaler instead.
    """
    device = torch.device(device)
    if device.type != "cuda":
        return None
    major, _minor = torch.cuda.get_device_capability(device)
    return torch.bfloat16 if major >= BFLOAT16_MIN_CAPABILITY else torch.float16


def describe_machine(device: torch.device | str = "cpu") -> str:
    """The machine in a few words, for records of measurements: ``"AMD EPYC, 2 cores"``, or the GPU's name."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"
