"""Attention to explore: every layer and head of a trained model on one sentence, in the page itself.

    from transformer_course.book_programs.attention_viewer import AttentionViewer, sentence_attention

    viewer = AttentionViewer(*sentence_attention(model, source_ids, target_ids, source_tokens, target_tokens))
    viewer                      # in the book, Jupyter or Colab: drawn by the browser, no kernel needed
    viewer.save("attention.html")

The viewer is one ``<div>`` with its data inline (JSON) and a short script in plain JavaScript: no
CDN, no library, no kernel, no network, so the same output works in the built book, in Jupyter,
on Colab and in a saved file. It shows one attention at a time, chosen with buttons: the encoder's
self-attention, the decoder's masked self-attention or its cross-attention, one layer, one head or
the mean of the heads. Queries are listed on the left, keys on the right, and a line joins each
pair with an opacity that is the weight. Hovering a query keeps only its lines and shades each key
by the weight it gets.
"""

from __future__ import annotations

import html
import json
import uuid
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import Tensor, nn

from ..masks import padding_and_causal_mask, padding_mask
from ..model import recording_attention

# The three attentions of the encoder-decoder, as the viewer names them.
ENCODER_SELF, DECODER_SELF, CROSS = "encoder self-attention", "decoder self-attention", "cross-attention"


@torch.no_grad()
def sentence_attention(
    model: nn.Module,
    source_ids: Tensor,
    target_ids: Tensor,
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    pad_id: int = 0,
) -> tuple[list[str], list[str], dict[str, Tensor]]:
    """Every attention weight of ``model`` on one sentence pair, by kind: ``(layers, heads, L_q, L_k)`` each.

    ``source_ids`` ``(L_src,)`` is the source sentence, ``target_ids`` ``(L_tgt,)`` the decoder's input
    (``<bos>`` and the translation so far, teacher-forced); the tokens label them.
    """
    model.eval()
    src, tgt = source_ids.unsqueeze(0), target_ids.unsqueeze(0)  # (1, L_src), (1, L_tgt)
    with recording_attention(model):
        model(src, tgt, padding_mask(src, pad_id), padding_and_causal_mask(tgt, pad_id))
    encoder, decoder = model.encoder.layers, model.decoder.layers
    attentions = {
        ENCODER_SELF: torch.stack([layer.self_attention.attention_weights[0] for layer in encoder]),
        DECODER_SELF: torch.stack([layer.self_attention.attention_weights[0] for layer in decoder]),
        CROSS: torch.stack([layer.cross_attention.attention_weights[0] for layer in decoder]),
    }
    return list(source_tokens), list(target_tokens), {kind: weights.cpu() for kind, weights in attentions.items()}


class AttentionViewer:
    """The attention of one sentence pair, drawn by the browser (see the module docstring).

    Args:
        source_tokens: the source sentence's tokens (the encoder's queries and keys, cross-attention's keys).
        target_tokens: the decoder input's tokens (the decoder's queries, and its self-attention's keys).
        attentions: kind -> weights ``(layers, heads, L_q, L_k)``; kinds :data:`ENCODER_SELF`,
            :data:`DECODER_SELF`, :data:`CROSS`, any of them.
        title: a line above the viewer.
    """

    def __init__(
        self,
        source_tokens: Sequence[str],
        target_tokens: Sequence[str],
        attentions: dict[str, Tensor],
        title: str = "",
    ):
        sides = {ENCODER_SELF: (source_tokens, source_tokens), DECODER_SELF: (target_tokens, target_tokens)}
        sides[CROSS] = (target_tokens, source_tokens)
        self.data = {"title": title, "kinds": []}
        for kind, weights in attentions.items():
            queries, keys = sides[kind]
            if weights.dim() != 4 or tuple(weights.shape[2:]) != (len(queries), len(keys)):
                raise ValueError(
                    f"{kind}: weights of shape {tuple(weights.shape)}, expected (layers, heads, {len(queries)}, "
                    f"{len(keys)}) for {len(queries)} queries and {len(keys)} keys"
                )
            rounded = [[[[round(float(w), 4) for w in row] for row in head] for head in layer] for layer in weights]
            self.data["kinds"].append({"name": kind, "queries": list(queries), "keys": list(keys), "weights": rounded})

    def _repr_html_(self) -> str:
        element = f"attention-viewer-{uuid.uuid4().hex[:12]}"
        data = json.dumps(self.data, ensure_ascii=False).replace("</", "<\\/")  # no "</script>" inside the script
        return (
            f'<div class="attention-viewer" id="{element}" style="{_STYLE}"></div>\n'
            f'<script type="application/json" id="{element}-data">{data}</script>\n'
            f"<script>{_SCRIPT}\n(function () {{ drawAttentionViewer('{element}'); }})();</script>"
        )

    def save(self, path: Path | str) -> Path:
        """A standalone HTML page of the viewer, readable offline."""
        path = Path(path)
        title = html.escape(self.data["title"] or "Attention")
        path.write_text(
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>'
            f"<body>\n{self._repr_html_()}\n</body></html>\n",
            encoding="utf-8",
        )
        return path


_STYLE = "font-family: sans-serif; font-size: 14px; margin: 1em 0;"

# Plain JavaScript, run once per viewer: the data is read from the JSON script beside the viewer's element.
_SCRIPT = r"""
function drawAttentionViewer(id) {
  var root = document.getElementById(id);
  var data = JSON.parse(document.getElementById(id + '-data').textContent);
  var state = {kind: 0, layer: 0, head: -1};  // head -1: the mean of the heads
  var svgNS = 'http://www.w3.org/2000/svg';
  var rowHeight = 22, width = 460, textWidth = 150;

  function button(label, active, onClick) {
    var b = document.createElement('button');
    b.textContent = label;
    b.className = 'attention-viewer-button' + (active ? ' active' : '');
    b.style.cssText = 'margin: 2px; padding: 2px 8px; border: 1px solid #888; border-radius: 3px; cursor: pointer;' +
      (active ? 'background: #2563eb; color: white;' : 'background: white; color: black;');
    b.addEventListener('click', onClick);
    return b;
  }

  function weightsNow() {
    var layer = data.kinds[state.kind].weights[state.layer];
    if (state.head >= 0) { return layer[state.head]; }
    return layer[0].map(function (row, q) {
      return row.map(function (_, k) {
        var total = 0;
        for (var h = 0; h < layer.length; h++) { total += layer[h][q][k]; }
        return total / layer.length;
      });
    });
  }

  function render() {
    var kind = data.kinds[state.kind];
    root.innerHTML = '';
    if (data.title) {
      var title = document.createElement('div');
      title.textContent = data.title;
      title.style.fontWeight = 'bold';
      root.appendChild(title);
    }
    var rows = [['', data.kinds.map(function (k, i) {
      return button(k.name, i === state.kind, function () { state.kind = i; state.layer = 0; render(); });
    })], ['layer', kind.weights.map(function (_, i) {
      return button(String(i + 1), i === state.layer, function () { state.layer = i; render(); });
    })], ['head', [button('mean', state.head < 0, function () { state.head = -1; render(); })].concat(
      kind.weights[0].map(function (_, i) {
        return button(String(i + 1), i === state.head, function () { state.head = i; render(); });
      }))]];
    rows.forEach(function (row) {
      var line = document.createElement('div');
      if (row[0]) {
        var label = document.createElement('span');
        label.textContent = row[0] + ': ';
        line.appendChild(label);
      }
      row[1].forEach(function (b) { line.appendChild(b); });
      root.appendChild(line);
    });
    var weights = weightsNow();
    var height = Math.max(kind.queries.length, kind.keys.length) * rowHeight + 10;
    var svg = document.createElementNS(svgNS, 'svg');
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('class', 'attention-viewer-graph');
    var lines = [];
    kind.queries.forEach(function (_, q) {
      kind.keys.forEach(function (_, k) {
        var w = weights[q][k];
        var line = document.createElementNS(svgNS, 'line');
        line.setAttribute('x1', textWidth + 5);
        line.setAttribute('y1', q * rowHeight + 15);
        line.setAttribute('x2', width - textWidth - 5);
        line.setAttribute('y2', k * rowHeight + 15);
        line.setAttribute('stroke', '#2563eb');
        line.setAttribute('stroke-width', 2);
        line.setAttribute('stroke-opacity', w);
        line.setAttribute('data-query', q);
        line.setAttribute('data-key', k);
        svg.appendChild(line);
        lines.push(line);
      });
    });
    function token(text, x, y, anchor, cls, index) {
      var t = document.createElementNS(svgNS, 'text');
      t.textContent = text;
      t.setAttribute('x', x);
      t.setAttribute('y', y);
      t.setAttribute('text-anchor', anchor);
      t.setAttribute('class', cls);
      t.setAttribute('data-index', index);
      t.style.cursor = 'default';
      svg.appendChild(t);
      return t;
    }
    var keyBoxes = kind.keys.map(function (text, k) {
      var box = document.createElementNS(svgNS, 'rect');
      box.setAttribute('x', width - textWidth);
      box.setAttribute('y', k * rowHeight + 2);
      box.setAttribute('width', textWidth);
      box.setAttribute('height', rowHeight - 4);
      box.setAttribute('fill', '#f59e0b');
      box.setAttribute('fill-opacity', 0);
      box.setAttribute('class', 'attention-viewer-key-box');
      svg.appendChild(box);
      token(text, width - textWidth + 4, k * rowHeight + 16, 'start', 'attention-viewer-key', k);
      return box;
    });
    kind.queries.forEach(function (text, q) {
      var t = token(text, textWidth, q * rowHeight + 16, 'end', 'attention-viewer-query', q);
      t.addEventListener('mouseover', function () {
        lines.forEach(function (line) {
          line.style.display = Number(line.getAttribute('data-query')) === q ? '' : 'none';
        });
        keyBoxes.forEach(function (box, k) { box.setAttribute('fill-opacity', weights[q][k]); });
        t.style.fontWeight = 'bold';
      });
      t.addEventListener('mouseout', function () {
        lines.forEach(function (line) { line.style.display = ''; });
        keyBoxes.forEach(function (box) { box.setAttribute('fill-opacity', 0); });
        t.style.fontWeight = '';
      });
    });
    root.appendChild(svg);
    var note = document.createElement('div');
    note.style.color = '#555';
    note.textContent = 'Queries on the left, keys on the right; hover a query to see what it attends to.';
    root.appendChild(note);
  }
  render();
}
"""
