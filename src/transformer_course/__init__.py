"""transformer_course: a readable reference implementation of "Attention Is All You Need".

One module per idea of the paper:

========================  ==========================================================
``attention``             scaled dot-product attention (§3.2.1)
``multi_head_attention``  multi-head attention and its key/value cache (§3.2.2)
``positional_encoding``   sinusoidal and learned positions (§3.5)
``masks``                 padding, causal, block and local-window masks (§3.2.3); True = may attend
``sublayers``             residual connection + LayerNorm, Post-LN and Pre-LN (§3.1)
``feed_forward``          position-wise feed-forward network (§3.3)
``embeddings``            token embeddings scaled by √d_model (§3.4)
``encoder``, ``decoder``  the layer stacks (§3.1)
``model``                 the encoder-decoder Transformer (Figure 1)
``device``                CPU / CUDA and mixed precision
``decoding``              greedy decoding and beam search with the key/value cache (§6.1)
``metrics``               BLEU (sacreBLEU) and exact match
``data``                  the final project's tasks, tokenizers and bucketed batches
``training``              label smoothing, the warmup schedule, the training loop (§5)
``book_programs``         the book's own programs on top: its numbers run, records, Table 3, figures
``pytorch_reference``     our weights copied into PyTorch's own modules, to prove and time them alike
========================  ==========================================================

``data``, ``training``, ``book_programs``, ``decoding`` and ``metrics`` are imported on their own
(``from transformer_course.training import train``), so that the model needs nothing but torch.
"""

from importlib import metadata as _metadata

from .attention import scaled_dot_product_attention
from .decoder import Decoder, DecoderLayer, DecoderLayerCache
from .device import autocast_dtype, default_device
from .embeddings import TokenEmbedding
from .encoder import Encoder, EncoderLayer
from .feed_forward import PositionwiseFeedForward
from .masks import (
    additive_mask,
    block_diagonal_mask,
    causal_mask,
    local_window_mask,
    padding_and_causal_mask,
    padding_mask,
)
from .model import Transformer, recording_attention
from .multi_head_attention import KeyValueCache, MultiHeadAttention
from .positional_encoding import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    relative_position_map,
    sinusoidal_positional_encoding,
)
from .sublayers import SublayerConnection

try:
    __version__ = _metadata.version("transformer-course")  # set in pyproject.toml, its one home
except _metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "unknown"

__all__ = [
    "Decoder",
    "DecoderLayer",
    "DecoderLayerCache",
    "Encoder",
    "EncoderLayer",
    "KeyValueCache",
    "LearnedPositionalEmbedding",
    "MultiHeadAttention",
    "PositionwiseFeedForward",
    "SinusoidalPositionalEncoding",
    "SublayerConnection",
    "TokenEmbedding",
    "Transformer",
    "additive_mask",
    "autocast_dtype",
    "block_diagonal_mask",
    "causal_mask",
    "default_device",
    "local_window_mask",
    "padding_and_causal_mask",
    "padding_mask",
    "recording_attention",
    "relative_position_map",
    "scaled_dot_product_attention",
    "sinusoidal_positional_encoding",
]
