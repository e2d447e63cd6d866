"""Where to run and in which precision.

The package runs on whatever is present: a CUDA GPU with mixed precision, or the CPU in float32.
On a GPU, matrix products run in bfloat16 where the chip supports it (Ampere and newer: same
exponent range as float32, no loss scaling needed) and in float16 with a gradient scaler
otherwise (e.g. Colab's T4).
"""

from __future__ import annotations

import torch


def default_device() -> torch.device:
    """The first CUDA GPU if there is one, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def autocast_dtype(device: torch.device | str) -> torch.dtype | None:
    """The mixed-precision dtype for ``device``: bfloat16 or float16 on CUDA, None (float32) on the CPU."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
