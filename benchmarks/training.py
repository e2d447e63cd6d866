"""Training throughput: our Transformer vs PyTorch's ``nn.Transformer`` holding the same weights.

    PYTHONPATH=src python benchmarks/training.py [--threads 1] [--steps 8] [--rounds 5]

Our model is built with one embedding table for the source, the target and the output layer
(``shared_vocabulary=True``; the vocabulary is the larger of the two sides); ``TorchTransformer``
(``harness.py``) wraps ``nn.Transformer`` around copies of that table and of our positional
encoding, with our weights in its stacks. Before timing, the script checks that the two give the
same logits. Both then train with the same dropout, label-smoothed loss, Adam and warmup schedule
on the same batches of the numbers task, bucketed by length as training buckets them.

The timed statement is one pass of ``--steps`` training steps over a fixed list of batches (the
same list for both models); ``torch.utils.benchmark.Timer`` times it in interleaved rounds. The
table gives target tokens per second (padding excluded) from the median pass, and the ratio.
"""

from __future__ import annotations

import argparse
import statistics

import torch
from harness import TorchTransformer, header, load_average, time_interleaved

from transformer_course.data import PAD_ID, bucketed_batches, make_batch, numbers_task
from transformer_course.masks import padding_mask
from transformer_course.training import LabelSmoothingLoss, ModelConfig, transformer_optimizer, warmup_scheduler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2, help="layers in each stack")
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=4096, help="token budget of a batch")
    parser.add_argument("--steps", type=int, default=8, help="training steps in the timed statement")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per model (default: 5)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="CPU threads (default: torch's)")
    arguments = parser.parse_args()

    task = numbers_task(seed=0, train_size=20_000)
    pairs = task.encode("train")
    batch_indices = bucketed_batches(pairs.longer_side_lengths(), arguments.max_tokens, seed=0)[: arguments.steps]
    batches = [make_batch(pairs, indices) for indices in batch_indices]
    tokens_per_pass = sum(batch.num_target_tokens for batch in batches)
    vocab_size = max(len(task.source_tokenizer), len(task.target_tokenizer))
    config = ModelConfig(
        d_model=arguments.d_model,
        num_heads=arguments.heads,
        num_layers=arguments.layers,
        d_ff=4 * arguments.d_model,
        shared_vocabulary=True,  # one table for source, target and output layer, as TorchTransformer has
    )
    torch.manual_seed(0)
    ours = config.build(vocab_size, vocab_size)
    theirs = TorchTransformer(ours)
    logits_of = {
        "ours": lambda batch: ours(batch.source, batch.target_input, padding_mask(batch.source, PAD_ID)),
        "nn.Transformer": lambda batch: theirs(batch.source, batch.target_input, batch.source == PAD_ID),
    }
    models = {"ours": ours, "nn.Transformer": theirs}
    with torch.no_grad():  # the two must compute the same function (dropout off) before being timed
        for model in models.values():
            model.eval()
        torch.testing.assert_close(
            logits_of["ours"](batches[0]), logits_of["nn.Transformer"](batches[0]), atol=1e-4, rtol=1e-4
        )
        for model in models.values():
            model.train()

    criterion = LabelSmoothingLoss(0.1, ignore_index=PAD_ID)

    def training_pass(name: str):
        optimizer = transformer_optimizer(models[name])
        scheduler = warmup_scheduler(optimizer, arguments.d_model, warmup_steps=400)

        def run() -> None:
            for batch in batches:
                loss = criterion(logits_of[name](batch), batch.target_output)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                scheduler.step()

        return run

    print(
        f"# training throughput, numbers task, d_model {arguments.d_model}, {arguments.layers}+{arguments.layers} "
        f"layers, {arguments.heads} heads, d_ff {4 * arguments.d_model}, batches of {arguments.max_tokens} tokens, "
        f"{arguments.steps} steps ({tokens_per_pass:,} target tokens) per timed pass, {arguments.rounds} rounds\n\n"
        f"{header(arguments.threads)}\n"
    )
    measurements = time_interleaved(
        {name: training_pass(name) for name in models}, arguments.threads, arguments.rounds, min_run_time=1.0
    )
    rates = {name: tokens_per_pass / measurement.median for name, measurement in measurements.items()}
    parameters = {name: sum(p.numel() for p in model.parameters()) for name, model in models.items()}
    print("| model | parameters | passes timed | median target tokens/s | interquartile range |")
    print("|---|---:|---:|---:|---:|")
    for name, measurement in measurements.items():
        slow, _, fast = statistics.quantiles(measurement.times, n=4)  # seconds per pass
        print(
            f"| {name} | {parameters[name]:,} | {len(measurement.times)} | {rates[name]:,.0f} | "
            f"{tokens_per_pass / fast:,.0f}–{tokens_per_pass / slow:,.0f} |"
        )
    print(f"\nnn.Transformer / ours (tokens/s): {rates['nn.Transformer'] / rates['ours']:.2f}×")
    print(f"load average after the run: {load_average()}")


if __name__ == "__main__":
    main()
