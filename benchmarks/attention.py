"""Time multi-head self-attention, forward + backward: ours against PyTorch's, in one run.

Three implementations get identical weights and identical inputs:

* ``reference``: ``MultiHeadAttention(fused_attention=False)``, softmax(QKᵀ/√d_k)V written out, weights kept;
* ``fused``: ``MultiHeadAttention(fused_attention=True)``, PyTorch's ``scaled_dot_product_attention`` kernel;
* ``pytorch``: ``nn.MultiheadAttention(batch_first=True)`` called with ``need_weights=False``, so
  that it too uses the fused kernel.

One step is ``out = attention(x, x, x)`` then ``out.backward(grad)``. The implementations are timed
in interleaved rounds (reference, fused, pytorch, reference, ...) after a warm-up, and each gets the
median of its rounds: a change in the machine's load during the run hits all three alike. On a CUDA
GPU the step runs under autocast (bfloat16 where supported, else float16), as training does.

Usage::

    PYTHONPATH=src python benchmarks/attention.py
    PYTHONPATH=src python benchmarks/attention.py --sizes 8x256x512 1x1024x512 --rounds 20 --device cpu
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from contextlib import nullcontext

import torch
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


def copy_weights(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Give PyTorch's module our W^Q, W^K, W^V (stacked in ``in_proj``) and W^O."""
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)


def make_steps(
    batch: int, length: int, d_model: int, num_heads: int, device: torch.device
) -> dict[str, Callable[[], None]]:
    """One forward + backward step per implementation, all on the same weights and input."""
    torch.manual_seed(0)
    reference = MultiHeadAttention(d_model, num_heads, fused_attention=False).to(device)
    fused = MultiHeadAttention(d_model, num_heads, fused_attention=True).to(device)
    fused.load_state_dict(reference.state_dict())
    pytorch = nn.MultiheadAttention(d_model, num_heads, batch_first=True).to(device)
    copy_weights(reference, pytorch)

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


def time_interleaved(
    steps: dict[str, Callable[[], None]], rounds: int, device: torch.device, min_round_s: float = 0.05
) -> dict[str, float]:
    """Median milliseconds per step of each implementation, over interleaved rounds."""
    synchronize = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    calls = {}
    for name, run in steps.items():  # warm up, and pick how many calls make a round long enough to time
        for _ in range(3):
            run()
        synchronize()
        start = time.perf_counter()
        run()
        synchronize()
        calls[name] = max(1, int(min_round_s / (time.perf_counter() - start)))
    samples: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(rounds):
        for name, run in steps.items():
            synchronize()
            start = time.perf_counter()
            for _ in range(calls[name]):
                run()
            synchronize()
            samples[name].append((time.perf_counter() - start) / calls[name] * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def describe_machine(device: torch.device) -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            cpu = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    lines = [
        f"CPU: {cpu}, {os.cpu_count()} cores; torch {torch.__version__}; torch threads: {torch.get_num_threads()}",
    ]
    if device.type == "cuda":
        lines.append(f"GPU: {torch.cuda.get_device_name(device)}, autocast {autocast_dtype(device)}")
    lines.append(f"load average before the run: {load_average()}")
    return "\n".join(lines)


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages: timings on a busy machine are slower and noisier."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


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
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds per implementation (default: 15)")
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda", "all"],
        default="all",
        help="where to run (default: the CPU, and the GPU when there is one)",
    )
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's choice)")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)

    devices = [torch.device("cpu")] if args.device in ("cpu", "all") else []
    if args.device in ("cuda", "all") and torch.cuda.is_available():
        devices.append(torch.device("cuda"))
    if not devices:
        parser.error("--device cuda needs a CUDA GPU")

    for device in devices:
        print(f"## {device.type}\n\n{describe_machine(device)}\n")
        print(
            "| batch | length | d_model | heads | reference ms | fused ms | PyTorch ms | fused / PyTorch | reference "
            "/ PyTorch |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for batch, length, d_model in args.sizes:
            ms = time_interleaved(make_steps(batch, length, d_model, args.heads, device), args.rounds, device)
            print(
                f"| {batch} | {length} | {d_model} | {args.heads} | {ms['reference']:.2f} | {ms['fused']:.2f} | "
                f"{ms['pytorch']:.2f} | {ms['fused'] / ms['pytorch']:.2f} | {ms['reference'] / ms['pytorch']:.2f} |",
                flush=True,
            )
        print(f"\nload average after the run: {load_average()}\n")


if __name__ == "__main__":
    main()
