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

It is read without a mouse too: every control is a button that says whether it is pressed, every
query is reached with Tab and shows its lines when focused (the focus drawn around it), a live
region says what is shown and what the focused query attends to most, and the same numbers are a
table below the drawing.
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
            f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
            f"<body>\n{self._repr_html_()}\n</body></html>\n",
            encoding="utf-8",
        )
        return path


# Its own colours on its own background: the page's dark mode must not leave dark text on a dark page.
_STYLE = "font-family: sans-serif; font-size: 14px; margin: 1em 0; padding: 0.5em; background: #fff; color: #111;"

# Plain JavaScript, run once per viewer: the data is read from the JSON script beside the viewer's element.
# The viewer is built to be read without a mouse or eyes: every control is a button (aria-pressed), every
# query a focusable control that shows its lines on focus as on hover, a live region says what is shown,
# and the same numbers are a table below the drawing.
_SCRIPT = r"""
function drawAttentionViewer(id) {
  var root = document.getElementById(id);
  var data = JSON.parse(document.getElementById(id + '-data').textContent);
  var state = {kind: 0, layer: 0, head: -1};  // head -1: the mean of the heads
  var svgNS = 'http://www.w3.org/2000/svg';
  var rowHeight = 22, width = 460, textWidth = 150;
  var focusStyle = document.createElement('style');
  focusStyle.textContent = '#' + id + ' button:focus-visible, #' + id + ' text:focus-visible, #' + id +
    ' summary:focus-visible { outline: 3px solid #b45309; outline-offset: 2px; }' +
    ' #' + id + ' table { border-collapse: collapse; margin: 0.5em 0; }' +
    ' #' + id + ' th, #' + id + ' td { border: 1px solid #999; padding: 2px 6px; text-align: right; }';
  root.setAttribute('lang', 'en');
  root.appendChild(focusStyle);
  var title = document.createElement('div');
  title.textContent = data.title;
  title.style.fontWeight = 'bold';
  if (data.title) { root.appendChild(title); }
  var controls = document.createElement('div');
  var drawing = document.createElement('div');
  var note = document.createElement('div');
  note.style.color = '#444';
  note.textContent = 'Queries on the left, keys on the right; hover or focus (Tab) a query to see what it attends to.';
  var status = document.createElement('div');
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');
  status.className = 'attention-viewer-status';
  var details = document.createElement('details');
  var summary = document.createElement('summary');
  summary.textContent = 'The weights as a table';
  var tableHolder = document.createElement('div');
  details.appendChild(summary);
  details.appendChild(tableHolder);
  [controls, drawing, note, status, details].forEach(function (part) { root.appendChild(part); });

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

  function shownNow() {
    var kind = data.kinds[state.kind];
    var head = state.head < 0 ? 'mean of the ' + kind.weights[0].length + ' heads' : 'head ' + (state.head + 1);
    return kind.name + ', layer ' + (state.layer + 1) + ', ' + head;
  }

  function strongest(row, keys, count) {
    return row.map(function (w, k) { return [w, k]; })
      .sort(function (a, b) { return b[0] - a[0]; })
      .slice(0, count)
      .map(function (pair) { return '\u201c' + keys[pair[1]] + '\u201d ' + pair[0].toFixed(2); }).join(', ');
  }

  function button(label, active, focusKey, onClick) {
    var b = document.createElement('button');
    b.type = 'button';
    b.textContent = label;
    b.className = 'attention-viewer-button' + (active ? ' active' : '');
    b.setAttribute('aria-pressed', active ? 'true' : 'false');
    b.setAttribute('data-focus-key', focusKey);
    b.style.cssText = 'margin: 2px; padding: 2px 8px; border: 1px solid #555; border-radius: 3px; cursor: pointer;' +
      (active ? 'background: #1d4ed8; color: white;' : 'background: white; color: black;');
    b.addEventListener('click', function () { onClick(); render(focusKey); });
    return b;
  }

  function renderControls(kind) {
    controls.innerHTML = '';
    var groups = [['attention', data.kinds.map(function (k, i) {
      return button(k.name, i === state.kind, 'kind-' + i, function () { state.kind = i; state.layer = 0; });
    })], ['layer', kind.weights.map(function (_, i) {
      return button(String(i + 1), i === state.layer, 'layer-' + i, function () { state.layer = i; });
    })], ['head', [button('mean', state.head < 0, 'head-mean', function () { state.head = -1; })].concat(
      kind.weights[0].map(function (_, i) {
        return button(String(i + 1), i === state.head, 'head-' + i, function () { state.head = i; });
      }))]];
    groups.forEach(function (group, index) {
      var line = document.createElement('div');
      line.setAttribute('role', 'group');
      line.setAttribute('aria-label', group[0]);
      if (index > 0) {
        var label = document.createElement('span');
        label.textContent = group[0] + ': ';
        line.appendChild(label);
      }
      group[1].forEach(function (b) { line.appendChild(b); });
      controls.appendChild(line);
    });
  }

  function renderTable(kind, weights) {
    var table = document.createElement('table');
    var caption = table.createCaption();
    caption.textContent = shownNow() + ': one row per query, one column per key';
    var head = table.createTHead().insertRow();
    var corner = document.createElement('th');
    corner.setAttribute('scope', 'col');
    corner.textContent = 'query \\ key';
    head.appendChild(corner);
    kind.keys.forEach(function (key) {
      var th = document.createElement('th');
      th.setAttribute('scope', 'col');
      th.textContent = key;
      head.appendChild(th);
    });
    var body = table.createTBody();
    kind.queries.forEach(function (query, q) {
      var row = body.insertRow();
      var th = document.createElement('th');
      th.setAttribute('scope', 'row');
      th.textContent = query;
      row.appendChild(th);
      weights[q].forEach(function (w) { row.insertCell().textContent = w.toFixed(2); });
    });
    tableHolder.innerHTML = '';
    tableHolder.appendChild(table);
  }

  function renderDrawing(kind, weights) {
    drawing.innerHTML = '';
    var height = Math.max(kind.queries.length, kind.keys.length) * rowHeight + 10;
    var svg = document.createElementNS(svgNS, 'svg');
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('class', 'attention-viewer-graph');
    svg.setAttribute('role', 'group');
    svg.setAttribute('aria-label', 'lines from each query to each key, as strong as its weight');
    var lines = [];
    kind.queries.forEach(function (_, q) {
      kind.keys.forEach(function (_, k) {
        var line = document.createElementNS(svgNS, 'line');
        line.setAttribute('x1', textWidth + 5);
        line.setAttribute('y1', q * rowHeight + 15);
        line.setAttribute('x2', width - textWidth - 5);
        line.setAttribute('y2', k * rowHeight + 15);
        line.setAttribute('stroke', '#2563eb');
        line.setAttribute('stroke-width', 2);
        line.setAttribute('stroke-opacity', weights[q][k]);
        line.setAttribute('data-query', q);
        line.setAttribute('data-key', k);
        svg.appendChild(line);
        lines.push(line);
      });
    });
    function box(x, y, cls, fill) {
      var rect = document.createElementNS(svgNS, 'rect');
      rect.setAttribute('x', x);
      rect.setAttribute('y', y);
      rect.setAttribute('width', textWidth);
      rect.setAttribute('height', rowHeight - 4);
      rect.setAttribute('fill', fill);
      rect.setAttribute('fill-opacity', 0);
      rect.setAttribute('class', cls);
      svg.appendChild(rect);
      return rect;
    }
    function token(text, x, y, anchor, cls, index) {
      var t = document.createElementNS(svgNS, 'text');
      t.textContent = text;
      t.setAttribute('x', x);
      t.setAttribute('y', y);
      t.setAttribute('text-anchor', anchor);
      t.setAttribute('class', cls);
      t.setAttribute('data-index', index);
      t.setAttribute('fill', '#111');
      t.style.cursor = 'default';
      svg.appendChild(t);
      return t;
    }
    var keyBoxes = kind.keys.map(function (text, k) {
      var keyBox = box(width - textWidth, k * rowHeight + 2, 'attention-viewer-key-box', '#f59e0b');
      token(text, width - textWidth + 4, k * rowHeight + 16, 'start', 'attention-viewer-key', k);
      return keyBox;
    });
    kind.queries.forEach(function (text, q) {
      var queryBox = box(0, q * rowHeight + 2, 'attention-viewer-query-box', 'none');
      var t = token(text, textWidth, q * rowHeight + 16, 'end', 'attention-viewer-query', q);
      t.setAttribute('tabindex', '0');
      t.setAttribute('focusable', 'true');
      t.setAttribute('role', 'button');
      t.setAttribute('aria-label', 'query ' + (q + 1) + ' of ' + kind.queries.length + ': ' + text);
      function show() {
        lines.forEach(function (line) {
          line.style.display = Number(line.getAttribute('data-query')) === q ? '' : 'none';
        });
        keyBoxes.forEach(function (keyBox, k) { keyBox.setAttribute('fill-opacity', weights[q][k]); });
        t.style.fontWeight = 'bold';
        queryBox.setAttribute('stroke', '#b45309');
        queryBox.setAttribute('stroke-width', 2);
      }
      function hide() {
        lines.forEach(function (line) { line.style.display = ''; });
        keyBoxes.forEach(function (keyBox) { keyBox.setAttribute('fill-opacity', 0); });
        t.style.fontWeight = '';
        queryBox.removeAttribute('stroke');
      }
      t.addEventListener('mouseover', show);
      t.addEventListener('mouseout', hide);
      t.addEventListener('focus', function () {
        show();
        status.textContent = '\u201c' + text + '\u201d attends most to ' + strongest(weights[q], kind.keys, 3) + '.';
      });
      t.addEventListener('blur', hide);
    });
    drawing.appendChild(svg);
  }

  function render(focusKey) {
    var kind = data.kinds[state.kind];
    var weights = weightsNow();
    renderControls(kind);
    renderDrawing(kind, weights);
    renderTable(kind, weights);
    if (focusKey) {
      var again = controls.querySelector('[data-focus-key="' + focusKey + '"]');
      if (again) { again.focus(); }
      var best = [0, 0, -1];
      weights.forEach(function (row, q) { row.forEach(function (w, k) { if (w > best[2]) { best = [q, k, w]; } }); });
      status.textContent = shownNow() + '. Strongest: \u201c' + kind.queries[best[0]] + '\u201d to \u201c' +
        kind.keys[best[1]] + '\u201d, ' + best[2].toFixed(2) + '.';
    }
  }
  render();
}
"""
