"""Training the encoder-decoder: label smoothing, the warmup schedule, the training loop with checkpoints."""
