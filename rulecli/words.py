"""Counts in messages: '1 rule', '2 rules', '1 leaf', '3 leaves'."""

from __future__ import annotations

IRREGULAR = {"leaf": "leaves", "class": "classes"}


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless n is 1."""
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {IRREGULAR.get(noun, noun + 's')}"
