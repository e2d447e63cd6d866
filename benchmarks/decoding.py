"""Greedy decoding with the key/value cache vs recomputing the whole prefix at every step.

    PYTHONPATH=src python benchmarks/decoding.py [--threads 1] [--lengths 64 128]

Three decoders produce the same number of tokens from the same source batch:

* ours with the cache (``greedy_decode``): each step feeds only the newest token;
* ours without it (``greedy_decode_without_cache``): each step reruns the decoder over the prefix;
* PyTorch's ``nn.Transformer`` with the same sizes, which has no cache, recomputing likewise.

``<eos>`` is set to an id the model never produces, so every run generates exactly ``length``
tokens. Times are the best of ``--repeats`` runs; the table prints ratios against the cached run.
"""

from __future__ import annotations

import argparse
import math
import platform
import time
import warnings

import torch
from torch import nn

from transformer_course import Transformer, sinusoidal_positional_encoding
from transformer_course.decoding import greedy_decode, greedy_decode_without_cache


class TorchTransformer(nn.Module):
    """``nn.Transformer`` with embeddings (× √d_model), sinusoidal positions and an output layer."""

    def __init__(
        self, vocab_size: int, d_model: int, num_heads: int, num_layers: int, d_ff: int, max_positions: int = 512
    ):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.register_buffer("positions", sinusoidal_positional_encoding(max_positions, d_model))
        self.transformer = nn.Transformer(
            d_model, num_heads, num_layers, num_layers, d_ff, dropout=0.1, batch_first=True
        )
        self.output = nn.Linear(d_model, vocab_size, bias=False)
        self.output.weight = self.embedding.weight
        self.scale = math.sqrt(d_model)

    def embed(self, tokens):
        return self.embedding(tokens) * self.scale + self.positions[: tokens.size(1)]

    def forward(self, source, target, source_padding, target_padding=None):
        """``source_padding``/``target_padding``: True = padding (``nn.Transformer``'s convention)."""
        causal = nn.Transformer.generate_square_subsequent_mask(target.size(1))
        hidden = self.transformer(
            self.embed(source), self.embed(target), tgt_mask=causal, src_key_padding_mask=source_padding,
            tgt_key_padding_mask=target_padding, memory_key_padding_mask=source_padding, tgt_is_causal=True,
        )  # fmt: skip
        return self.output(hidden)

    @torch.no_grad()
    def greedy_decode(self, source, max_output_length, bos_id=1):
        """Recomputing greedy decoding: the whole prefix goes through the decoder at every step."""
        source_padding = source == 0
        memory = self.transformer.encoder(self.embed(source), src_key_padding_mask=source_padding)
        prefix = torch.full((source.size(0), 1), bos_id, dtype=torch.long)
        for _ in range(max_output_length):
            causal = nn.Transformer.generate_square_subsequent_mask(prefix.size(1))
            hidden = self.transformer.decoder(
                self.embed(prefix), memory, tgt_mask=causal, memory_key_padding_mask=source_padding, tgt_is_causal=True
            )
            token = self.output(hidden[:, -1]).argmax(dim=-1)
            prefix = torch.cat([prefix, token.unsqueeze(1)], dim=1)
        return prefix[:, 1:]


def best_time(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 128])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--source-length", type=int, default=32)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    arguments = parser.parse_args()
    warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")  # nn.Transformer's eval fast path
    if arguments.threads:
        torch.set_num_threads(arguments.threads)

    vocab = 1000
    sizes = dict(d_model=arguments.d_model, num_heads=8, num_layers=arguments.layers, d_ff=4 * arguments.d_model)
    torch.manual_seed(0)
    ours = Transformer(vocab, vocab, **sizes).eval()
    theirs = TorchTransformer(vocab, **sizes).eval()
    source = torch.randint(4, vocab, (arguments.batch, arguments.source_length))
    never = vocab  # an <eos> id the model cannot produce: every run decodes the full length

    print(f"# greedy decoding, batch {arguments.batch}, source length {arguments.source_length}, "
          f"d_model {arguments.d_model}, {arguments.layers}+{arguments.layers} layers, CPU threads "
          f"{torch.get_num_threads()}, "
          f"torch {torch.__version__}, {platform.processor() or platform.machine()}")  # fmt: skip
    print(
        "| output length | ours, KV cache (ms) | ours, recomputing (ms) | nn.Transformer, recomputing (ms) | "
        "recomputing / cache | nn.Transformer / cache |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for length in arguments.lengths:
        cached = best_time(lambda length=length: greedy_decode(ours, source, length, eos_id=never), arguments.repeats)
        recomputed = best_time(
            lambda length=length: greedy_decode_without_cache(ours, source, length, eos_id=never), arguments.repeats
        )
        reference = best_time(lambda length=length: theirs.greedy_decode(source, length), arguments.repeats)
        print(f"| {length} | {1000 * cached:.0f} | {1000 * recomputed:.0f} | {1000 * reference:.0f} | "
              f"{recomputed / cached:.2f}× | {reference / cached:.2f}× |")  # fmt: skip


if __name__ == "__main__":
    main()
