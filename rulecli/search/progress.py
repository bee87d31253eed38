"""How a learner reports progress without printing: a callback the CLI may render."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int], None]
"""Called with the work done so far: rules grown, or steps (trees, iterations) out of a known total."""
