"""What the tests compare with PyTorch's own modules: the tolerance, and the helpers of
:mod:`transformer_course.pytorch_reference` that copy our weights into them."""

from transformer_course.pytorch_reference import (
    copy_attention,
    copy_decoder_layer,
    copy_encoder_layer,
    copy_feed_forward,
    copy_transformer,
    pytorch_attention_like,
)

# float32 comparisons with PyTorch's modules hold to this absolute and relative tolerance.
TOLERANCE = {"atol": 1e-5, "rtol": 1e-5}

__all__ = [
    "TOLERANCE",
    "copy_attention",
    "copy_decoder_layer",
    "copy_encoder_layer",
    "copy_feed_forward",
    "copy_transformer",
    "pytorch_attention_like",
]
