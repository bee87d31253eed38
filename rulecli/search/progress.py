"""How a learner reports progress without printing: a callback the CLI may render."""

from __future__ import annotations

from collections.abc import Callable

OnRule = Callable[[int], None]
"""Called with the number of rules learned so far, each time a rule is added."""
