"""A sentence pair, the unit every task is made of: ``(source text, target text)``."""

Pair = tuple[str, str]
