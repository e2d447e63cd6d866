"""Time multi-head self-attention, forward + backward: ours against PyTorch's, in one run.

Three implementations get identical weights and identical inputs:

* ``reference``: ``MultiHeadAttention(fused_attention=False)``, softmax(QKᵀ/√d_k)V written out, weights kept;
* ``fused``: ``MultiHeadAttention(fused_attention=True)``, PyTorch's ``scaled_dot_product_attention`` kernel;
* ``pytorch``: ``nn.MultiheadAttention(batch_first=True)`` called with ``need_weights=False``, so
  that it too uses the fused kernel.

One step is ``out = attention(x, x, x)`` then ``out.backward(grad)``. Each is timed with
``torch.utils.benchmark.Timer`` in interleaved rounds (see ``harness.py``); the table gives each
one's median and the ratios to PyTorch's module. On a CUDA GPU the step runs under autocast
(bfloat16 where supported, else float16), as training does.

Usage::

    PYTHONPATH=src python benchmarks/attention.py
    PYTHONPATH=src python benchmarks/attention.py --sizes 8x256x512 1x1024x512 --rounds 20 --device cpu --threads 1
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from contextlib import nullcontext

import torch
from harness import copy_attention, header, load_average, time_interleaved
from torch import Tensor, nn

from transformer_course import MultiHeadAttention, autocast_dtype

DEFAULT_SIZES = ["32x64x512", "8x256x512", "1x1024x512"]


def parse_size(text: str) -> tuple[int, int, int]:
    """``"8x256x512"`` → ``(batch, length, d_model)``."""
    try:
        batch, length, d_model = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a size is BATCHxLENGTHxD_MODEL, e.g. 8x256x512; got {text!r}") from None
    return batch, length, d_model


def make_steps(
    batch: int, length: int, d_model: int, num_heads: int, device: torch.device
) -> dict[str, Callable[[], None]]:
    """One forward + backward step per implementation, all on the same weights and input."""
    torch.manual_seed(0)
    reference = MultiHeadAttention(d_model, num_heads, fused_attention=False).to(device)
    fused = MultiHeadAttention(d_model, num_heads, fused_attention=True).to(device)
    fused.load_state_dict(reference.state_dict())
    pytorch = nn.MultiheadAttention(d_model, num_heads, batch_first=True).to(device)
    copy_attention(reference, pytorch)

    x = torch.randn(batch, length, d_model, device=device, requires_grad=True)  # (batch, L, d_model)
    grad = torch.randn(batch, length, d_model, device=device)
    dtype = autocast_dtype(device)
    autocast = (lambda: torch.autocast(device.type, dtype=dtype)) if dtype is not None else nullcontext

    forwards = {
        "reference": (reference, lambda: reference(x, x, x)),
        "fused": (fused, lambda: fused(x, x, x)),
        "pytorch": (pytorch, lambda: pytorch(x, x, x, need_weights=False)[0]),
    }
    with torch.no_grad(), autocast():  # the three must compute the same function before being timed
        outputs = {name: forward().float() for name, (_, forward) in forwards.items()}
    tolerance = 1e-4 if dtype is None else 5e-2
    for name in ("reference", "fused"):
        torch.testing.assert_close(
            outputs[name], outputs["pytorch"], atol=tolerance, rtol=tolerance, msg=f"{name} differs"
        )

    def step(module: nn.Module, forward: Callable[[], Tensor]) -> Callable[[], None]:
        def run() -> None:
            module.zero_grad(set_to_none=True)
            x.grad = None
            with autocast():
                out = forward()
            out.backward(grad.to(out.dtype))

        return run

    return {name: step(module, forward) for name, (module, forward) in forwards.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        nargs="+",
        type=parse_size,
        default=[parse_size(s) for s in DEFAULT_SIZES],
        help=f"BATCHxLENGTHxD_MODEL (default: {' '.join(DEFAULT_SIZES)})",
    )
    parser.add_argument("--heads", type=int, default=8, help="attention heads (default: 8)")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds per implementation (default: 10)")
    parser.add_argument("--min-run-time", type=float, default=0.2, help="seconds of timing per round (default: 0.2)")
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda", "all"],
        default="all",
        help="where to run (default: the CPU, and the GPU when there is one)",
    )
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="CPU threads (default: torch's)")
    args = parser.parse_args()

    devices = [torch.device("cpu")] if args.device in ("cpu", "all") else []
    if args.device in ("cuda", "all") and torch.cuda.is_available():
        devices.append(torch.device("cuda"))
    if not devices:
        parser.error("--device cuda needs a CUDA GPU")

    for device in devices:
        precision = autocast_dtype(device) or torch.float32
        print(f"## {device.type}, {str(precision).removeprefix('torch.')}\n\n{header(args.threads, device)}\n")
        print(
            "| batch | length | d_model | heads | reference ms | fused ms | PyTorch ms | fused / PyTorch | reference "
            "/ PyTorch |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for batch, length, d_model in args.sizes:
            steps = make_steps(batch, length, d_model, args.heads, device)
            ms = {
                name: 1000 * measurement.median
                for name, measurement in time_interleaved(steps, args.threads, args.rounds, args.min_run_time).items()
            }
            print(
                f"| {batch} | {length} | {d_model} | {args.heads} | {ms['reference']:.2f} | {ms['fused']:.2f} | "
                f"{ms['pytorch']:.2f} | {ms['fused'] / ms['pytorch']:.2f} | {ms['reference'] / ms['pytorch']:.2f} |",
                flush=True,
            )
        print(f"\nload average after the run: {load_average()}\n")


if __name__ == "__main__":
    main()
