"""A record of a trained run, small enough to commit: what the book shows of a run it cannot repeat.

    transformer-course record runs/multi30k --out book/records/multi30k-cpu.json --beam 4 --alpha 0.6

Training Multi30k for half an hour at every build of the book would make the book slow to build,
so chapter 8 reads this record instead: how the run was made (its command lines, the machine, the
date, the model and recipe), its learning curves, its test scores with greedy decoding and with
beam search (the three BLEU scores of :mod:`transformer_course.metrics`), a dozen test sentences
with the model's translations beside the references, and the cross-attention of one of them. All
of it is computed here, from the checkpoint; the page draws and quotes only what the file holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..atomic_files import write_text_atomically
from ..data import PAD_ID, bucketed_batches
from ..decoding import translate
from ..masks import padding_mask
from ..model import recording_attention
from ..training.checkpoint import Checkpoint, load_trained_model
from ..training.evaluation import evaluate


def make_record(
    checkpoint: str | Path, beam_size: int = 4, alpha: float = 0.6, examples: int = 12, device: str | None = None
) -> dict:
    """The record of the run whose checkpoint is ``checkpoint`` (see the module docstring)."""
    model, task, saved = load_trained_model(checkpoint, device)
    test = task.splits["test"]
    greedy = evaluate(model, task, "test")
    beam = evaluate(model, task, "test", beam_size=beam_size, alpha=alpha)
    chosen = [test[index] for index in range(0, len(test), max(1, len(test) // examples))][:examples]
    sources = [source for source, _ in chosen]
    greedy_translations = translate(model, sources, task.source_tokenizer, task.target_tokenizer)
    beam_translations = translate(model, sources, task.source_tokenizer, task.target_tokenizer, beam_size, alpha)
    return {
        "provenance": saved.provenance,
        "model": saved.model_config.to_dict(),
        "parameters": sum(parameter.numel() for parameter in model.parameters()),
        "training": saved.training_config.to_dict(),
        "steps": saved.progress.step,
        "epochs": round(_epochs(task, saved), 2),
        "minutes": round(saved.progress.seconds / 60, 2),
        "history": _rounded(saved.history),
        "test": {"greedy": _rounded(greedy), "beam": _rounded({**beam, "alpha": alpha})},
        "examples": [
            {"source": source, "reference": reference, "greedy": greedy_text, "beam": beam_text}
            for (source, reference), greedy_text, beam_text in zip(chosen, greedy_translations, beam_translations)
        ],
        "cross_attention": cross_attention(model, task, *chosen[0], beam_translations[0]),
    }


def cross_attention(model, task, source: str, reference: str, translation: str) -> dict:
    """The cross-attention of every decoder layer and head while the model writes ``translation``.

    ``weights`` is the last layer's, averaged over its heads; ``layers[l][h]`` is head ``h`` of layer
    ``l``, the way the paper's appendix draws single heads. Row t is the decoder position that
    writes target piece t (the last row writes ``<eos>``); column s is source piece s (the last
    column is the source's ``<eos>``).
    """
    device = next(model.parameters()).device
    source_ids = task.source_tokenizer.encode(source) + [task.source_tokenizer.eos_id]
    target_ids = task.target_tokenizer.encode(translation)
    source_tensor = torch.tensor([source_ids], device=device)  # (1, L_src)
    decoder_input = torch.tensor([[task.target_tokenizer.bos_id] + target_ids], device=device)  # (1, L_tgt)
    with recording_attention(model), torch.no_grad():
        model(source_tensor, decoder_input, padding_mask(source_tensor, PAD_ID))
    layers = [
        layer.cross_attention.attention_weights[0].cpu() for layer in model.decoder.layers
    ]  # each (heads, L_tgt, L_src)
    return {
        "source": source,
        "reference": reference,
        "translation": translation,
        "source_pieces": task.source_tokenizer.pieces(source_ids),
        "target_pieces": task.target_tokenizer.pieces(target_ids + [task.target_tokenizer.eos_id]),
        "weights": _matrix(layers[-1].mean(dim=0)),
        "layers": [[_matrix(head) for head in layer] for layer in layers],
    }


def _matrix(weights: torch.Tensor) -> list[list[float]]:
    return [[round(float(weight), 3) for weight in row] for row in weights]


def _epochs(task, saved: Checkpoint) -> float:
    """Epochs done, with the fraction of the current one."""
    progress, training = saved.progress, saved.training_config
    batches = bucketed_batches(
        task.encode("train").longer_side_lengths(), training.max_tokens, training.seed, progress.epoch
    )
    per_process = max(1, len(batches) // saved.provenance.get("processes", 1))
    return progress.epoch + progress.batch_in_epoch / per_process


def _rounded(value):
    """Floats to 5 significant digits, so that the record stays small enough to keep in the repository."""
    if isinstance(value, float):
        return float(f"{value:.5g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def write_record(record: dict, path: str | Path) -> Path:
    """Write ``record`` as JSON to ``path`` atomically (an interruption leaves the previous record whole)."""
    return write_text_atomically(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
