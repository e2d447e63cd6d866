"""The full encoder-decoder Transformer (paper §3, Figure 1).

    memory = Encoder(PE(Embed(src)))                              # (batch, L_src, d_model)
    hidden = Decoder(PE(Embed(tgt)), memory)                      # (batch, L_tgt, d_model)
    logits = hidden Eᵀ                                            # (batch, L_tgt, tgt_vocab)

The decoder's input is the target shifted right by one (it starts with ``<bos>``); its output at
position ``t`` predicts target token ``t``. The softmax over ``logits`` gives the next-token
distribution. With ``tie_embeddings`` the output layer reuses the target embedding table ``E``
(and, with ``shared_vocabulary=True``, the source embedding too: one vocabulary for both
languages, as a joint BPE gives), as in §3.4. Two vocabularies that merely have the same size keep
their own tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import Tensor, nn

from .decoder import Decoder, DecoderLayer, DecoderLayerCache
from .embeddings import TokenEmbedding
from .encoder import Encoder, EncoderLayer
from .multi_head_attention import MultiHeadAttention
from .positional_encoding import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

POSITIONAL_ENCODINGS = {"sinusoidal": SinusoidalPositionalEncoding, "learned": LearnedPositionalEmbedding}


class Transformer(nn.Module):
    """The encoder-decoder Transformer of "Attention Is All You Need".

    Args:
        source_vocab_size: number of source token ids.
        target_vocab_size: number of target token ids.
        d_model: model width (512 in the base model).
        num_heads: attention heads per layer (8).
        num_layers: layers in each of the encoder and decoder stacks (6).
        d_ff: inner width of the feed-forward networks (2048).
        dropout: dropout rate everywhere (0.1).
        norm_first: Pre-LN if True, Post-LN (the paper) if False.
        max_positions: longest sequence the positional encoding covers.
        tie_embeddings: share the target embedding with the output layer.
        positional: ``"sinusoidal"`` (the paper) or ``"learned"``.
        d_k: each head's query/key size (default ``d_model / num_heads``; Table 3 row B varies it).
        fused_attention: use PyTorch's fused attention kernel (faster; attention weights are not
            kept; see :func:`recording_attention`).
        shared_vocabulary: source and target use one vocabulary (e.g. a joint BPE); with
            ``tie_embeddings`` the source embedding then shares the table too, as in the paper.
    """

    def __init__(
        self,
        source_vocab_size: int,
        target_vocab_size: int,
        d_model: int = 512,
        num_heads: int = 8,
        num_layers: int = 6,
        d_ff: int = 2048,
        dropout: float = 0.1,
        norm_first: bool = False,
        max_positions: int = 5000,
        tie_embeddings: bool = True,
        *,
        positional: str = "sinusoidal",
        d_k: int | None = None,
        fused_attention: bool = True,
        shared_vocabulary: bool = False,
    ):
        super().__init__()
        if positional not in POSITIONAL_ENCODINGS:
            raise ValueError(f"positional must be one of {sorted(POSITIONAL_ENCODINGS)}, got {positional!r}")
        if shared_vocabulary and source_vocab_size != target_vocab_size:
            raise ValueError(
                f"a shared vocabulary needs source_vocab_size == target_vocab_size, got {source_vocab_size} and "
                f"{target_vocab_size}"
            )
        self.d_model = d_model
        self.source_embedding = TokenEmbedding(source_vocab_size, d_model)
        self.target_embedding = TokenEmbedding(target_vocab_size, d_model)
        self.source_positions = POSITIONAL_ENCODINGS[positional](d_model, max_positions, dropout)
        self.target_positions = POSITIONAL_ENCODINGS[positional](d_model, max_positions, dropout)
        layer_options = dict(dropout=dropout, norm_first=norm_first, d_k=d_k, fused_attention=fused_attention)
        # A Pre-LN stack's output is an un-normalised residual sum: each stack ends with a LayerNorm.
        self.encoder = Encoder(
            EncoderLayer(d_model, num_heads, d_ff, **layer_options),
            num_layers,
            nn.LayerNorm(d_model) if norm_first else None,
        )
        self.decoder = Decoder(
            DecoderLayer(d_model, num_heads, d_ff, **layer_options),
            num_layers,
            nn.LayerNorm(d_model) if norm_first else None,
        )
        self.output_projection = nn.Linear(d_model, target_vocab_size, bias=False)
        self._reset_parameters()
        if tie_embeddings:
            self.output_projection.weight = self.target_embedding.embedding.weight
            if shared_vocabulary:
                self.source_embedding.embedding.weight = self.target_embedding.embedding.weight

    def _reset_parameters(self) -> None:
        # Xavier/Glorot initialisation for every matrix but the embedding tables, which keep
        # TokenEmbedding's N(0, 1/d_model) (rows of length about 1, right for the tied output layer).
        embeddings = {id(self.source_embedding.weight), id(self.target_embedding.weight)}
        for parameter in self.parameters():
            if parameter.dim() > 1 and id(parameter) not in embeddings:
                nn.init.xavier_uniform_(parameter)

    def encode(self, src: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """Source token ids ``(batch, L_src)`` → memory ``(batch, L_src, d_model)``.

        ``src_mask``: bool, broadcastable to ``(batch, heads, L_src, L_src)``, usually
        ``padding_mask(src, pad_id)`` of shape ``(batch, 1, 1, L_src)``.
        """
        return self.encoder(self.source_positions(self.source_embedding(src)), src_mask)

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: list[DecoderLayerCache] | None = None,
    ) -> Tensor:
        """Target token ids ``(batch, L_tgt)`` and memory → hidden states ``(batch, L_tgt, d_model)``.

        Args:
            tgt: target ids, starting with ``<bos>`` (only the new tokens when ``cache`` is given).
            memory: the encoder output ``(batch, L_src, d_model)``.
            src_mask: bool, broadcastable to ``(batch, heads, L_tgt, L_src)``.
            tgt_mask: bool, broadcastable to ``(batch, heads, L_tgt, L_tgt)``. ``None`` means the
                causal mask alone; pass ``padding_and_causal_mask(tgt, pad_id)`` to hide padding too.
            cache: from ``self.decoder.new_cache()``; the positions of ``tgt`` then continue
                after those already cached.
        """
        start = 0
        if cache is not None and cache[0].self_attention.key is not None:
            start = cache[0].self_attention.key.size(2)
        if tgt_mask is None:
            length = tgt.size(1)
            # Position start + i may see positions 0 … start + i: (L_tgt, start + L_tgt).
            tgt_mask = torch.ones(length, start + length, dtype=torch.bool, device=tgt.device).tril(start)
        y = self.target_positions(self.target_embedding(tgt), start)
        return self.decoder(y, memory, src_mask, tgt_mask, cache)

    def next_token_logits(self, hidden: Tensor) -> Tensor:
        """Hidden states ``(batch, L, d_model)`` → logits ``(batch, L, target_vocab_size)``.

        The logits at position ``t`` score the token that follows it (the output layer of Figure 1,
        before its softmax)."""
        return self.output_projection(hidden)

    def forward(
        self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None
    ) -> Tensor:
        """Teacher-forced logits ``(batch, L_tgt, target_vocab_size)``.

        For source ids ``(batch, L_src)`` and target input ids ``(batch, L_tgt)``."""
        memory = self.encode(src, src_mask)
        return self.next_token_logits(self.decode(tgt, memory, src_mask, tgt_mask))


@contextmanager
def recording_attention(model: nn.Module) -> Iterator[nn.Module]:
    """Temporarily switch every attention of ``model`` to the reference path, which keeps
    ``attention_weights`` ``(batch, heads, L_q, L_k)`` after each call (for heat maps)."""
    attentions = [module for module in model.modules() if isinstance(module, MultiHeadAttention)]
    saved = [attention.fused_attention for attention in attentions]
    for attention in attentions:
        attention.fused_attention = False
    try:
        yield model
    finally:
        for attention, fused_attention in zip(attentions, saved):
            attention.fused_attention = fused_attention
