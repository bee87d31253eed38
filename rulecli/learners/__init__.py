"""The learner registry: one entry per learner makes it a command, an API name and a test subject.

Each learner is one module defining ``LEARNER``, a :class:`Learner`: its parameters (a
:class:`rulecli.params.Params` dataclass), ``fit(data, params, *, progress=None)`` and
what to tell a person afterwards. The registry names the module and the learner's
one-line description, so listing the commands imports no learner (nor NumPy or Polars).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rulecli.display import counted
from rulecli.search.progress import Progress

__all__ = ["REGISTRY", "Learner", "Progress", "get", "names", "rules_summary"]

if TYPE_CHECKING:
    from rulecli.params import Params


# name: (module, one-line description). A new learner adds one line here.
REGISTRY: dict[str, tuple[str, str]] = {
    "oner": ("rulecli.learners.oner", "OneR: one rule per value of the single best feature."),
    "ripper": ("rulecli.learners.ripper", "RIPPER rules as Weka's JRip learns them: an ordered rule list."),
    "cn2": ("rulecli.learners.cn2", "CN2 rules by beam search: a decision list or an unordered rule set."),
    "aq": ("rulecli.learners.aq", "AQ rules by seed-and-star covering: a voting rule set."),
    "tree": ("rulecli.learners.tree", "A CART tree for classes or numbers, saved as one rule per leaf."),
    "forest": ("rulecli.learners.forest", "A random forest: bootstrap trees, OOB error, importances."),
    "reduct": ("rulecli.learners.reduct", "Rough-set reducts, core, approximations and rules from reducts."),
    "brl": ("rulecli.learners.brl", "A Bayesian Rule List mined from frequent patterns by MCMC."),
    "m5rules": ("rulecli.learners.m5rules", "Model rules: rules that predict a number with a formula each."),
}


@dataclass(frozen=True)
class Learner:
    """A learner as the rest of rulecli sees it.

    ``fit(data, params, *, progress=None)`` returns the model. ``steps(params)``: the
    total work ``progress`` counts towards (trees, iterations), or ``None`` when it counts
    rules as they grow. ``numeric_target``: a numeric target is predicted as a number
    instead of being refused; ``class_target``: classes are learned (not refused).
    ``engines``: the engines it learns classes on (``rulecli.engines``), ``number_engines``
    those it learns numbers on; elsewhere it learns from the engine's sample. ``summary(model)``: one
    line for a person; ``warnings(model)``: what a person should know about the result.
    ``examples``: command lines for the help.
    """

    name: str
    params: type[Params]
    fit: Callable[..., Any]
    summary: Callable[[Any], str]
    help: str
    examples: tuple[str, ...] = ()
    steps: Callable[[Any], int] | None = None
    unit: str = "rules"
    numeric_target: bool = False
    class_target: bool = True  # False: it predicts numbers only, and refuses classes
    engines: tuple[str, ...] = ("memory",)  # where it can count: rulecli.engines
    number_engines: tuple[str, ...] = ("memory",)

    def counts_on(self, engine: str, regression: bool) -> bool:
        """Whether it learns a target of this kind from the counts of ``engine``."""
        return engine in (self.number_engines if regression else self.engines)

    warnings: Callable[[Any], list[str]] = field(default=lambda model: [])


def names(takes: str | None = None) -> list[str]:
    """The learners' names; with ``takes`` ("classes" or "numbers"), those that learn such a
    target (their modules are imported to ask)."""
    if takes is None:
        return list(REGISTRY)
    return [n for n in REGISTRY if (get(n).class_target if takes == "classes" else get(n).numeric_target)]


def get(name: str) -> Learner:
    """The learner called ``name`` (its module is imported on first use)."""
    from rulecli.errors import ParamError

    if name not in REGISTRY:
        raise ParamError(f"unknown learner '{name}' (choose from {', '.join(REGISTRY)})")
    module = importlib.import_module(REGISTRY[name][0])
    learner = module.LEARNER
    assert isinstance(learner, Learner) and learner.name == name
    return learner


def rules_summary(name: str) -> Callable[[Any], str]:
    """The summary line of a rule learner: how many rules it learned."""

    def summary(model: Any) -> str:
        return f"{name}: {counted(len(model.rules), 'rule')}"

    return summary
