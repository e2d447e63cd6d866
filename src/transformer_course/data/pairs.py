"""A sentence pair, the unit every task is made of: ``(source text, target text)``."""

Pair = tuple[str, str]


def check_split_sizes(train_size: int, validation_size: int, test_size: int) -> None:
    """Refuse sizes a generated task cannot be made with: no training pair, or a negative split."""
    if train_size < 1:
        raise ValueError(f"train_size must be at least 1, got {train_size}")
    for name, size in (("validation_size", validation_size), ("test_size", test_size)):
        if size < 0:
            raise ValueError(f"{name} must be 0 or more, got {size}")
