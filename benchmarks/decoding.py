"""Greedy decoding with the key/value cache vs recomputing the whole prefix at every step.

    PYTHONPATH=src python benchmarks/decoding.py [--threads 1] [--lengths 16 32 64]

Three decoders produce the same number of tokens from the same source batch, with the same weights:

* ours with the cache (``greedy_decode``): each step feeds only the newest token;
* ours without it (``greedy_decode_without_cache``): each step reruns the decoder over the prefix;
* PyTorch's ``nn.Transformer`` holding our weights (``TorchTransformer``), which has no cache and
  recomputes likewise.

Before timing, the script checks that ours and the peer give the same logits. ``<eos>`` is set to
an id the model never produces, so every run generates exactly ``length`` tokens; the encoder is
included in every time. Each decoder is timed with ``torch.utils.benchmark.Timer`` in interleaved
rounds (see ``harness.py``); the table gives the medians and the ratios to the cached run.
"""

from __future__ import annotations

import argparse

import torch
from harness import TorchTransformer, header, load_average, time_interleaved

from transformer_course import Transformer
from transformer_course.decoding import greedy_decode, greedy_decode_without_cache

VOCAB_SIZE = 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 32, 64], help="tokens to generate")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--source-length", type=int, default=32)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3, help="layers in each stack")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per decoder (default: 3)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="CPU threads (default: torch's)")
    arguments = parser.parse_args()

    torch.manual_seed(0)
    ours = Transformer(
        VOCAB_SIZE,
        VOCAB_SIZE,
        d_model=arguments.d_model,
        num_heads=8,
        num_layers=arguments.layers,
        d_ff=4 * arguments.d_model,
        shared_vocabulary=True,  # one table, as TorchTransformer has
    ).eval()
    theirs = TorchTransformer(ours).eval()
    source = torch.randint(4, VOCAB_SIZE, (arguments.batch, arguments.source_length))  # (batch, L_src), no padding
    prefix = torch.randint(4, VOCAB_SIZE, (arguments.batch, 8))
    with torch.no_grad():  # the two models must compute the same function before being timed
        torch.testing.assert_close(
            ours(source, prefix), theirs(source, prefix, source == 0), atol=1e-4, rtol=1e-4, msg="logits differ"
        )
    never = VOCAB_SIZE  # an <eos> id the model cannot produce: every run decodes the full length

    print(
        f"# greedy decoding, batch {arguments.batch}, source length {arguments.source_length}, d_model "
        f"{arguments.d_model}, {arguments.layers}+{arguments.layers} layers, 8 heads, d_ff {4 * arguments.d_model}\n\n"
        f"{header(arguments.threads)}\n"
    )
    print(
        "| output length | ours, KV cache (ms) | ours, recomputing (ms) | nn.Transformer, recomputing (ms) | "
        "recomputing / cache | nn.Transformer / cache |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for length in arguments.lengths:
        decoders = {
            "cache": lambda length=length: greedy_decode(ours, source, length, eos_id=never),
            "recomputing": lambda length=length: greedy_decode_without_cache(ours, source, length, eos_id=never),
            "nn.Transformer": lambda length=length: theirs.greedy_decode(source, length),
        }
        measurements = time_interleaved(decoders, arguments.threads, arguments.rounds, min_run_time=0.5)
        ms = {name: 1000 * measurement.median for name, measurement in measurements.items()}
        print(
            f"| {length} | {ms['cache']:.0f} | {ms['recomputing']:.0f} | {ms['nn.Transformer']:.0f} | "
            f"{ms['recomputing'] / ms['cache']:.2f}× | {ms['nn.Transformer'] / ms['cache']:.2f}× |",
            flush=True,
        )
    print(f"\nload average after the run: {load_average()}")


if __name__ == "__main__":
    main()
