"""What people are shown: counts in words ('1 rule', '3 leaves'), and data made visible."""

from __future__ import annotations

import functools
import re

IRREGULAR = {"leaf": "leaves", "class": "classes"}


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless n is 1."""
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {IRREGULAR.get(noun, noun + 's')}"


# What a terminal or a browser acts on instead of showing: C0 and C1 controls (ESC starts a
# screen clear, a window title, a hidden hyperlink), DEL, line and paragraph separators, and
# the bidirectional controls that show a rule reversed ("Trojan Source").
UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def escape_unseen(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every character a terminal or browser would act on, rather than show,
    written as its escape (``\\x1b``, ``\\u202e``): for everything shown to people."""
    return UNSEEN.sub(escape_unseen, text)


_UNSEEN_IN_LINES = re.compile(UNSEEN.pattern.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f"))


def visible_lines(text: str) -> str:
    """:func:`visible`, keeping line breaks and tabs: for source code and JSON at a terminal."""
    return _UNSEEN_IN_LINES.sub(escape_unseen, text)


@functools.cache
def unseen_characters() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every character :data:`UNSEEN` matches and its escape, for replacing them in a whole
    column at once (Polars' ``str.replace_many``)."""
    found = tuple(chr(c) for c in range(0x2070) if UNSEEN.match(chr(c)))
    return found, tuple(visible(c) for c in found)
