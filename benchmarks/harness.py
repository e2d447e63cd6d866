"""What the benchmarks share: the header that names the machine, interleaved timing, PyTorch's peer model.

Timing uses ``torch.utils.benchmark.Timer``: it warms the statement up, sets the number of CPU
threads for the measurement, synchronises a GPU around it, and ``blocked_autorange`` times blocks of
calls until ``min_run_time`` has passed. The implementations compared in one table are timed in
interleaved rounds (A, B, C, A, B, C, ...) and each one's rounds are merged into one measurement, so
that a change in the machine's load during the run slows all of them alike; the ratios in a table
are therefore taken in the same run.
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.utils.benchmark import Measurement, Timer

from transformer_course import Transformer
from transformer_course.data import BOS_ID, PAD_ID
from transformer_course.device import describe_machine
from transformer_course.pytorch_reference import copy_attention, copy_transformer

# nn.Transformer's inference fast path packs padded batches into nested tensors and warns each time.
warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")

__all__ = ["TorchTransformer", "copy_attention", "header", "load_average", "time_interleaved"]


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages: timings on a busy machine are slower and noisier."""
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def header(threads: int, device: torch.device | str = "cpu") -> str:
    """Machine, torch version, threads and load: what every table states about its run."""
    return (
        f"machine: {describe_machine(device)}; torch {torch.__version__}; {threads} CPU thread(s); "
        f"load average {load_average()}"
    )


def time_interleaved(
    statements: dict[str, Callable[[], object]], threads: int, rounds: int, min_run_time: float
) -> dict[str, Measurement]:
    """One ``Measurement`` per statement, from ``rounds`` interleaved ``blocked_autorange`` runs."""
    timers = {
        name: Timer("run()", globals={"run": run}, num_threads=threads, description=name)
        for name, run in statements.items()
    }
    rounds_of: dict[str, list[Measurement]] = {name: [] for name in timers}
    for _ in range(rounds):
        for name, timer in timers.items():
            rounds_of[name].append(timer.blocked_autorange(min_run_time=min_run_time))
    return {name: Measurement.merge(measurements)[0] for name, measurements in rounds_of.items()}


class TorchTransformer(nn.Module):
    """PyTorch's ``nn.Transformer`` between our embeddings and output layer, computing what ``ours`` computes.

    ``ours`` must have one table for the source and target embeddings and the output layer
    (``shared_vocabulary=True``, ``tie_embeddings=True``); Post-LN or Pre-LN, as ``ours`` is. The
    peer gets copies of our embedding (× √d_model) and positional encoding (with its dropout), so
    only the two stacks differ: PyTorch's holds our weights (for Post-LN, ``copy_transformer`` drops
    ``nn.Transformer``'s extra final LayerNorms, so the two models have the same parameters). Masks
    follow ``nn.Transformer``: True means padding.
    """

    def __init__(self, ours: Transformer):
        super().__init__()
        if not (ours.source_embedding.weight is ours.target_embedding.weight is ours.output_projection.weight):
            raise ValueError("the peer needs ours built with shared_vocabulary=True and tie_embeddings=True")
        first_layer = ours.encoder.layers[0]
        self.embedding = copy.deepcopy(ours.target_embedding)
        self.positions = copy.deepcopy(ours.target_positions)
        self.transformer = nn.Transformer(
            ours.d_model,
            first_layer.self_attention.num_heads,
            len(ours.encoder.layers),
            len(ours.decoder.layers),
            first_layer.feed_forward.w_1.out_features,
            dropout=self.positions.dropout.p,
            batch_first=True,
            norm_first=isinstance(ours.encoder.final_norm, nn.LayerNorm),  # only a Pre-LN stack ends with one
        )
        copy_transformer(ours, self.transformer)
        self.output = nn.Linear(ours.d_model, self.embedding.weight.size(0), bias=False)
        self.output.weight = self.embedding.weight

    def embed(self, tokens: Tensor) -> Tensor:
        """``(batch, L)`` ids → ``(batch, L, d_model)``: E[token]·√d_model + PE, then dropout."""
        return self.positions(self.embedding(tokens))

    def forward(self, source: Tensor, target: Tensor, source_padding: Tensor) -> Tensor:
        """Teacher-forced logits ``(batch, L_tgt, vocab)``; ``source_padding`` ``(batch, L_src)``, True = padding."""
        causal = nn.Transformer.generate_square_subsequent_mask(target.size(1), device=target.device)
        hidden = self.transformer(
            self.embed(source), self.embed(target), tgt_mask=causal, src_key_padding_mask=source_padding,
            memory_key_padding_mask=source_padding, tgt_is_causal=True,
        )  # fmt: skip
        return self.output(hidden)

    @torch.no_grad()
    def greedy_decode(
        self, source: Tensor, max_output_length: int, bos_id: int = BOS_ID, pad_id: int = PAD_ID
    ) -> Tensor:
        """Greedy decoding without a cache (``nn.Transformer`` has none): the whole prefix at every step."""
        source_padding = source == pad_id  # (batch, L_src)
        memory = self.transformer.encoder(self.embed(source), src_key_padding_mask=source_padding)
        prefix = torch.full((source.size(0), 1), bos_id, dtype=torch.long, device=source.device)  # (batch, t)
        for _ in range(max_output_length):
            causal = nn.Transformer.generate_square_subsequent_mask(prefix.size(1), device=source.device)
            hidden = self.transformer.decoder(
                self.embed(prefix), memory, tgt_mask=causal, memory_key_padding_mask=source_padding, tgt_is_causal=True
            )
            token = self.output(hidden[:, -1]).argmax(dim=-1)  # (batch,)
            prefix = torch.cat([prefix, token.unsqueeze(1)], dim=1)
        return prefix[:, 1:]
