"""Table 2's recurrent baseline: a GRU encoder-decoder with additive attention (Bahdanau et al., 2015).

The models the paper beat in Table 2 (GNMT, ByteNet, ConvS2S...) read a sentence one position at a
time. This is the smallest of that family, written as the Transformer is, so that the two can be
trained on the same data with the same loop and decoded with the same search:

    h_1 … h_n = BiGRU(Embed(x))                                   # memory (batch, L_src, d_model)
    s_0 = tanh(W_init · mean_j h_j)                               # the decoder's first state
    e_tj = vᵀ tanh(W_s s_{t-1} + W_h h_j)                         # additive attention scores
    α_t = softmax_j(e_tj),  c_t = Σ_j α_tj h_j                    # (batch, L_src), (batch, d_model)
    s_t = GRU(s_{t-1}, [Embed(y_{t-1}); c_t])
    o_t = tanh(W_o [s_t; c_t])                                    # hidden (batch, d_model)
    logits_t = o_t Eᵀ                                             # the output layer, tied to Embed

It has the Transformer's interface (``encode``, ``decode``, ``next_token_logits``, ``forward`` and a
``decoder.new_cache()`` whose entries ``reorder`` for beam search), so greedy decoding, beam search,
the training loop and evaluation take it as they are. The difference the paper measures is inside
``decode``: a loop over target positions, each waiting for the last, where the Transformer's decoder
computes every position of a teacher-forced sentence at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .masks import additive_mask


@dataclass
class RecurrentCache:
    """The decoder's state between calls of ``decode`` (incremental decoding): ``(layers, batch, d_model)``."""

    state: Tensor | None = None

    def reorder(self, index: Tensor) -> None:
        """Keep the rows ``index`` (beam search's surviving hypotheses), in that order."""
        if self.state is not None:
            self.state = self.state.index_select(1, index)


class AdditiveAttention(nn.Module):
    """``e_j = vᵀ tanh(W_s s + W_h h_j)``, softmax over the source positions that may be attended to."""

    def __init__(self, d_model: int):
        super().__init__()
        self.query = nn.Linear(d_model, d_model, bias=False)
        self.key = nn.Linear(d_model, d_model)
        self.score = nn.Linear(d_model, 1, bias=False)

    def forward(self, state: Tensor, keys: Tensor, memory: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """``state`` (batch, d_model), ``keys`` = W_h h (batch, L_src, d_model), ``mask`` (batch, L_src) → the
        context (batch, d_model) and the weights (batch, L_src)."""
        scores = self.score(torch.tanh(self.query(state).unsqueeze(1) + keys)).squeeze(-1)  # (batch, L_src)
        weights = torch.softmax(scores + additive_mask(mask, scores.dtype), dim=-1)  # masks.py's additive form
        return torch.bmm(weights.unsqueeze(1), memory).squeeze(1), weights


class RecurrentDecoder(nn.Module):
    """The GRU decoder with attention: one target position per step."""

    def __init__(self, d_model: int, num_layers: int, dropout: float):
        super().__init__()
        self.num_layers = num_layers
        self.initial_state = nn.Linear(d_model, d_model)
        self.attention = AdditiveAttention(d_model)
        self.gru = nn.GRU(2 * d_model, d_model, num_layers, batch_first=True, dropout=dropout if num_layers > 1 else 0)
        self.output = nn.Linear(2 * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def new_cache(self) -> list[RecurrentCache]:
        """An empty cache for incremental decoding (a list, as the Transformer's decoder gives one per layer)."""
        return [RecurrentCache()]

    def forward(self, embedded: Tensor, memory: Tensor, mask: Tensor, cache: RecurrentCache | None) -> Tensor:
        """``embedded`` (batch, L_tgt, d_model), ``memory`` (batch, L_src, d_model), ``mask`` (batch, L_src) →
        hidden (batch, L_tgt, d_model); ``cache`` carries the state on from an earlier call."""
        state = cache.state if cache is not None else None
        if state is None:
            lengths = mask.sum(dim=1, keepdim=True).clamp(min=1)  # (batch, 1)
            mean = (memory * mask.unsqueeze(-1)).sum(dim=1) / lengths  # (batch, d_model)
            state = torch.tanh(self.initial_state(mean)).unsqueeze(0).repeat(self.num_layers, 1, 1)
        keys = self.attention.key(memory)  # W_h h, computed once: (batch, L_src, d_model)
        outputs = []
        for t in range(embedded.size(1)):  # each step waits for the one before: the recurrence
            context, _ = self.attention(state[-1], keys, memory, mask)  # (batch, d_model)
            step_input = torch.cat([embedded[:, t], context], dim=-1).unsqueeze(1)  # (batch, 1, 2·d_model)
            top, state = self.gru(step_input, state)  # top: (batch, 1, d_model)
            outputs.append(torch.tanh(self.output(torch.cat([top.squeeze(1), context], dim=-1))))
        if cache is not None:
            cache.state = state
        return self.dropout(torch.stack(outputs, dim=1))  # (batch, L_tgt, d_model)


class RecurrentEncoderDecoder(nn.Module):
    """A bidirectional GRU encoder and a GRU decoder with additive attention (see the module docstring).

    Args:
        source_vocab_size: number of source token ids.
        target_vocab_size: number of target token ids.
        d_model: the width of embeddings, states and memory (each direction of the encoder has half).
        num_layers: GRU layers in the encoder and in the decoder.
        dropout: dropout on embeddings and outputs, and between GRU layers.
        tie_embeddings: share the target embedding with the output layer, as the Transformer does.
        pad_id: the padding id, whose embedding stays zero.
    """

    def __init__(
        self,
        source_vocab_size: int,
        target_vocab_size: int,
        d_model: int = 128,
        num_layers: int = 1,
        dropout: float = 0.1,
        tie_embeddings: bool = True,
        pad_id: int = 0,
    ):
        super().__init__()
        if d_model % 2:
            raise ValueError(f"d_model must be even (each direction of the encoder has half), got {d_model}")
        self.d_model = d_model
        self.source_embedding = nn.Embedding(source_vocab_size, d_model, padding_idx=pad_id)
        self.target_embedding = nn.Embedding(target_vocab_size, d_model, padding_idx=pad_id)
        self.encoder = nn.GRU(
            d_model, d_model // 2, num_layers, batch_first=True, bidirectional=True, dropout=dropout * (num_layers > 1)
        )
        self.decoder = RecurrentDecoder(d_model, num_layers, dropout)
        self.output_projection = nn.Linear(d_model, target_vocab_size, bias=False)
        if tie_embeddings:
            self.output_projection.weight = self.target_embedding.weight
        self.dropout = nn.Dropout(dropout)

    def encode(self, src: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """Source ids ``(batch, L_src)`` → memory ``(batch, L_src, d_model)``; padding (``src_mask`` False) is
        skipped by the recurrence in both directions and left zero."""
        mask = _source_positions(src, src_mask)  # (batch, L_src)
        lengths = mask.sum(dim=1).clamp(min=1).cpu()
        packed = pack_padded_sequence(self.dropout(self.source_embedding(src)), lengths, True, enforce_sorted=False)
        memory, _ = self.encoder(packed)
        memory, _ = pad_packed_sequence(memory, batch_first=True, total_length=src.size(1))
        return memory  # (batch, L_src, d_model)

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: list[RecurrentCache] | None = None,
    ) -> Tensor:
        """Target ids ``(batch, L_tgt)`` starting with ``<bos>`` → hidden ``(batch, L_tgt, d_model)``.

        ``tgt_mask`` is accepted for the Transformer's interface and not needed: a recurrence never sees
        ahead, and the positions after a sentence's end are not scored. With ``cache`` only the new
        tokens are given, and the state goes on from the last call.
        """
        mask = _source_positions(memory[..., 0], src_mask)
        embedded = self.dropout(self.target_embedding(tgt))
        return self.decoder(embedded, memory, mask, cache[0] if cache is not None else None)

    def next_token_logits(self, hidden: Tensor) -> Tensor:
        """Hidden states ``(batch, L, d_model)`` → logits ``(batch, L, target_vocab_size)``."""
        return self.output_projection(hidden)

    def forward(
        self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None
    ) -> Tensor:
        """Teacher-forced logits ``(batch, L_tgt, target_vocab_size)``."""
        return self.next_token_logits(self.decode(tgt, self.encode(src, src_mask), src_mask))


def _source_positions(reference: Tensor, src_mask: Tensor | None) -> Tensor:
    """The source positions that may be attended to, ``(batch, L_src)``, from a padding mask ``(batch, 1, 1,
    L_src)`` (True: a token), or all of them when there is no mask."""
    if src_mask is None:
        return torch.ones(reference.shape[:2], dtype=torch.bool, device=reference.device)
    return src_mask.reshape(src_mask.size(0), -1)[:, -reference.size(1) :].bool()
