"""A time budget that returns a model: learners look at the clock between steps and, once
the budget is spent, finish with what they have (a rule list so far and its default, the
trees grown, the best rule list sampled, a tree grown so far) and say what they cut.

The budget is set for a block of work (:func:`spending`); a learner asks :func:`ran_out`
where stopping leaves a sound model, naming what stopping there cuts. Where no budget
is set, :func:`spent` is always False and nothing changes. A model cut short depends on the
machine's speed, so two runs need not give the same file; the model records the budget and
what was cut (``training.time_budget``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Budget:
    seconds: float
    deadline: float
    cuts: list[str] = field(default_factory=list)

    def record(self) -> dict[str, object]:
        """What a model cut short carries in ``training.time_budget``."""
        return {"seconds": self.seconds, "cut": list(self.cuts)}


_CURRENT: ContextVar[Budget | None] = ContextVar("rulecli_budget", default=None)


@contextlib.contextmanager
def spending(seconds: float | None, start: float | None = None) -> Iterator[Budget | None]:
    """Spend at most ``seconds`` from ``start`` (a :func:`time.monotonic` reading; default:
    now) in the block; None: no budget."""
    if seconds is None:
        yield None
        return
    budget = Budget(seconds, (time.monotonic() if start is None else start) + seconds)
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


def active() -> bool:
    """Whether a budget is set (a learner may then work in smaller steps, to stop between them)."""
    return _CURRENT.get() is not None


def spent() -> bool:
    """Whether a budget is set and has run out."""
    budget = _CURRENT.get()
    return budget is not None and time.monotonic() >= budget.deadline


def ran_out(what: str) -> bool:
    """Whether a budget is set and has run out; if so, ``what`` (the cut it makes) is noted."""
    if spent():
        cut(what)
        return True
    return False


def cut(what: str) -> None:
    """Note what the learner left out when the budget ran out (once each)."""
    budget = _CURRENT.get()
    if budget is not None and what not in budget.cuts:
        budget.cuts.append(what)
