"""What the attention viewer is given: every weight of a model on one sentence, by kind, with its tokens."""

from __future__ import annotations

import json
import re

import pytest
import torch

from transformer_course import Transformer
from transformer_course.book_programs.attention_viewer import (
    CROSS,
    DECODER_SELF,
    ENCODER_SELF,
    AttentionViewer,
    sentence_attention,
)


def test_sentence_attention_gives_every_layer_and_head_of_each_kind_with_rows_that_sum_to_one():
    torch.manual_seed(0)
    model = Transformer(source_vocab_size=12, target_vocab_size=12, d_model=16, num_heads=2, num_layers=2, d_ff=32)
    source, target = torch.tensor([5, 6, 7, 2]), torch.tensor([1, 8, 9])
    sources, targets, weights = sentence_attention(model, source, target, list("abcd"), list("xyz"))
    layers, heads = len(model.encoder.layers), model.encoder.layers[0].self_attention.num_heads
    assert weights[ENCODER_SELF].shape == (layers, heads, 4, 4)
    assert weights[DECODER_SELF].shape == (len(model.decoder.layers), heads, 3, 3)
    assert weights[CROSS].shape == (len(model.decoder.layers), heads, 3, 4)
    for kind, tensor in weights.items():
        torch.testing.assert_close(tensor.sum(-1), torch.ones(tensor.shape[:-1]), msg=kind)
    assert torch.all(weights[DECODER_SELF].triu(diagonal=1) == 0), "the decoder's self-attention looks ahead"


def test_the_viewer_refuses_weights_that_do_not_fit_its_tokens():
    with pytest.raises(ValueError, match=r"cross-attention.*\(layers, heads, 2, 3\)"):
        AttentionViewer(["a", "b", "c"], ["x", "y"], {CROSS: torch.ones(1, 1, 3, 2)})


def test_the_viewers_html_holds_its_data_inline_and_asks_for_nothing_outside():
    viewer = AttentionViewer(["</script>", "b"], ["x"], {CROSS: torch.full((1, 2, 1, 2), 0.5)})
    page = viewer._repr_html_()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "the viewer loads something from outside"
    assert "</script>" not in page.split("<script", 2)[1].split(">", 1)[1].rsplit("</script>", 1)[0]
    data = json.loads(page.split('type="application/json"', 1)[1].split(">", 1)[1].split("</script>", 1)[0])
    assert data["kinds"][0]["keys"] == ["</script>", "b"] and data["kinds"][0]["weights"] == [[[[0.5, 0.5]]] * 2]
