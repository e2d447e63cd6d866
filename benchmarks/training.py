"""Training throughput: our Transformer vs the same model built from PyTorch's ``nn.Transformer``.

    PYTHONPATH=src python benchmarks/training.py [--threads 1] [--steps 30] [--rounds 5]

Both models have the same sizes, the same embeddings (× √d_model), sinusoidal positions, dropout,
label-smoothed loss, Adam and token budget, and train on the same batches of the numbers task
(bucketed by length, as training does). Both use one embedding table for the source, the target
and the output layer: ``TorchTransformer`` always does, ours with ``shared_vocabulary=True``
(the vocabulary is the larger of the two sides). The two alternate in rounds of ``--steps`` steps
so that a change in the machine's load hits both; the table gives the median tokens per second
(target tokens, padding excluded) and the ratio. The reference model is ``TorchTransformer`` of
``benchmarks/decoding.py``; it has 4·d_model more parameters (the γ and β of two LayerNorms),
since ``nn.Transformer`` ends both stacks with a LayerNorm even in the Post-LN arrangement.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
from decoding import TorchTransformer  # noqa: E402

from transformer_course.data import PAD_ID, bucketed_batches, make_batch, numbers_task  # noqa: E402
from transformer_course.masks import padding_mask  # noqa: E402
from transformer_course.training import (  # noqa: E402
    LabelSmoothingLoss,
    ModelConfig,
    transformer_optimizer,
    warmup_scheduler,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=30, help="steps per round and model")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    arguments = parser.parse_args()
    if arguments.threads:
        torch.set_num_threads(arguments.threads)

    task = numbers_task(seed=0, train_size=50_000)
    pairs = task.encode("train")
    batches = [
        make_batch(pairs, indices)
        for indices in bucketed_batches(pairs.longer_side_lengths(), arguments.max_tokens, seed=0)
    ]
    vocab = max(len(task.source_tokenizer), len(task.target_tokenizer))
    config = ModelConfig(
        d_model=arguments.d_model,
        num_heads=arguments.heads,
        num_layers=arguments.layers,
        d_ff=4 * arguments.d_model,
        shared_vocabulary=True,  # one table for source, target and output layer, as in TorchTransformer
    )
    torch.manual_seed(0)
    ours = config.build(vocab, vocab)
    theirs = TorchTransformer(vocab, arguments.d_model, arguments.heads, arguments.layers, 4 * arguments.d_model)
    criterion = LabelSmoothingLoss(0.1, ignore_index=PAD_ID)

    def our_logits(batch):
        return ours(batch.source, batch.target_input, padding_mask(batch.source, PAD_ID))

    def their_logits(batch):
        return theirs(batch.source, batch.target_input, batch.source == PAD_ID)

    runs = {"ours": (ours, our_logits), "nn.Transformer": (theirs, their_logits)}
    optimizers = {name: transformer_optimizer(model) for name, (model, _) in runs.items()}
    schedulers = {
        name: warmup_scheduler(optimizer, arguments.d_model, warmup_steps=400) for name, optimizer in optimizers.items()
    }
    rates: dict[str, list[float]] = {name: [] for name in runs}
    position = 0
    for round_index in range(arguments.rounds + 1):  # round 0 warms up and is not counted
        round_batches = [batches[(position + step) % len(batches)] for step in range(arguments.steps)]
        position += arguments.steps
        for name, (model, logits_of) in runs.items():
            model.train()
            tokens, started = 0, time.perf_counter()
            for batch in round_batches:
                loss = criterion(logits_of(batch), batch.target_output)
                optimizers[name].zero_grad(set_to_none=True)
                loss.backward()
                optimizers[name].step()
                schedulers[name].step()
                tokens += batch.num_target_tokens
            if round_index > 0:
                rates[name].append(tokens / (time.perf_counter() - started))

    parameters = {name: sum(p.numel() for p in model.parameters()) for name, (model, _) in runs.items()}
    assert parameters["nn.Transformer"] - parameters["ours"] == 4 * arguments.d_model, (
        parameters
    )  # its two final LayerNorms
    print(f"# training throughput, numbers task, d_model {arguments.d_model}, {arguments.layers}+{arguments.layers} "
          "layers, "
          f"{arguments.heads} heads, max_tokens {arguments.max_tokens}, {arguments.rounds} rounds × {arguments.steps} "
          "steps, "
          f"CPU threads {torch.get_num_threads()}, torch {torch.__version__}, {platform.machine()}")  # fmt: skip
    print("| model | parameters | median target tokens/s | min | max |")
    print("|---|---:|---:|---:|---:|")
    for name, values in rates.items():
        print(
            f"| {name} | {parameters[name]:,} | {statistics.median(values):,.0f} | {min(values):,.0f} | "
            f"{max(values):,.0f} |"
        )
    ratio = statistics.median(rates["nn.Transformer"]) / statistics.median(rates["ours"])
    print(f"\nnn.Transformer / ours (tokens/s): {ratio:.2f}×  (target: ≤ 1.15×)")


if __name__ == "__main__":
    main()
