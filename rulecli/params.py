"""Learner parameters, declared once: a default, a help text and declarative constraints.

A learner's parameters are a frozen dataclass whose fields are made with :func:`param`.
The same declaration gives the Python API its keyword arguments and checks, the command
line its options (flag, help, range, choices; see ``rulecli.cli.options``) and the model
file its recorded ``params``. Constraints follow scikit-learn's ``_parameter_constraints``
idea — data, not code — so every learner reports a bad value the same way, naming the
parameter; the command line names the flag instead.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True, kw_only=True)
... class Demo(Params):
...     folds: int = param(3, "Folds.", ge=2)
>>> Demo(folds=1)
Traceback (most recent call last):
...
rulecli.errors.ParamError: `folds` must be at least 2, got 1
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from rulecli.errors import ParamError

_KEY = "rulecli"


@dataclass(frozen=True)
class Spec:
    """What a field declares beyond its type and default.

    ``flag``: the option's long name without dashes (default: the field name with dashes);
    ``short``: a one-letter alias; ``negative``: for a boolean, the name of its off switch
    (``no-pruning``), otherwise it is an on-only flag; ``ge``/``gt``/``le``/``lt``: bounds;
    ``choices``: allowed values; ``switches``: of two ``choices``, the command line takes one
    flag for each (``--regression/--classification``) instead of a value; ``record``: kept in
    the model's ``params`` (``False`` for what changes how a model is computed but not what
    it is, such as worker counts). A field typed ``tuple[str, ...]`` takes several values
    (on the command line: repeated, or comma-separated).
    """

    help: str
    flag: str | None = None
    short: str | None = None
    negative: str | None = None
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple[str, ...] | None = None
    switches: bool = False
    panel: str | None = None
    metavar: str | None = None
    record: bool = True


def param(default: Any, help: str, **spec: Any) -> Any:
    """A parameter field: ``default``, its ``help`` and the :class:`Spec` keywords."""
    return dataclasses.field(default=default, metadata={_KEY: Spec(help, **spec)})


def spec_of(field: dataclasses.Field[Any]) -> Spec | None:
    return field.metadata.get(_KEY)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _range_text(s: Spec) -> str | None:
    """How a bounded parameter's rule reads: 'at least 2', 'positive', 'in (0, 1]'."""
    low = s.ge if s.ge is not None else s.gt
    high = s.le if s.le is not None else s.lt
    if low is None and high is None:
        return None
    if high is None:
        assert low is not None
        if s.gt == 0:
            return "positive"
        return f"at least {_number(low)}" if s.ge is not None else f"greater than {_number(low)}"
    if low is None:
        return f"at most {_number(high)}" if s.le is not None else f"less than {_number(high)}"
    left = "[" if s.ge is not None else "("
    right = "]" if s.le is not None else ")"
    return f"in {left}{_number(low)}, {_number(high)}{right}"


def _in_range(value: float, s: Spec) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False
    return (
        (s.ge is None or value >= s.ge)
        and (s.gt is None or value > s.gt)
        and (s.le is None or value <= s.le)
        and (s.lt is None or value < s.lt)
    )


def check_value(name: str, value: Any, s: Spec) -> None:
    """Raise :class:`ParamError` naming ``name`` when ``value`` breaks its declared constraints."""
    if value is None:
        return
    if s.choices is not None and str(value) not in s.choices:
        raise ParamError(f"must be one of {', '.join(s.choices)}, got '{value}'", param=name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    if not _in_range(value, s):
        raise ParamError(f"must be {_range_text(s)}, got {_number(value)}", param=name)


@dataclass(frozen=True, kw_only=True)
class Params:
    """Base of every learner's parameters: checked on construction, recorded in the model."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            s = spec_of(field)
            if s is None:
                continue
            value = getattr(self, field.name)
            if isinstance(field.default, tuple) and not isinstance(value, tuple):
                # several values: any sequence is kept as a tuple, a lone string as one value
                object.__setattr__(self, field.name, (value,) if isinstance(value, str) else tuple(value))
            check_value(field.name, value, s)
        self.check()

    def check(self) -> None:
        """Constraints between parameters (one field's own are declared on it)."""

    def keywords(self) -> dict[str, Any]:
        """Every declared parameter as the keyword that makes it."""
        return {f.name: getattr(self, f.name) for f in fields_of(type(self))}

    def record(self) -> dict[str, object]:
        """The parameters a model file keeps (all but those declared ``record=False``)."""
        return {
            f.name: getattr(self, f.name) for f in dataclasses.fields(self) if (s := spec_of(f)) is None or s.record
        }


def fields_of(cls: type) -> list[dataclasses.Field[Any]]:
    """The declared parameter fields of a params class, in declaration order."""
    return [f for f in dataclasses.fields(cls) if spec_of(f) is not None]


# The help panels options are grouped in: the data, engine and tuning ones are folded
# behind --help-all (rulecli.cli.app)
DATA_PANEL = "Data"
ENGINE_PANEL = "Engine"
TUNING_PANEL = "Chosen by cross-validation unless given"

# Declarations several learners share, so a flag reads the same wherever it appears.
DISCRETIZERS = ("equal-width", "equal-frequency", "mdlp", "min-bucket")


def discretize_param(default: str) -> Any:
    return param(default, "Numeric features: equal-frequency, equal-width, mdlp or min-bucket.", choices=DISCRETIZERS)


def bins_param(default: int) -> Any:
    return param(default, "Intervals for equal-width / equal-frequency.", ge=1)


def beam_width_param(default: int) -> Any:
    return param(default, "Candidates kept at each step of the search (CN2's beam, AQ's star).", ge=1)


MIN_BUCKET_HELP = (
    "Minimum rows of an interval's class for min-bucket intervals (Weka's -B); "
    "default: 6, Weka's, up to about 1,000 rows, then the square root of the rows over 5."
)


def min_bucket_param() -> Any:
    return param(None, MIN_BUCKET_HELP, ge=1)


def max_rules_param(default: int | None = None, help: str = "At most this many rules.", ge: int = 0) -> Any:
    return param(default, help, ge=ge)


def learn_rows_param(default: int) -> Any:
    return param(
        default,
        "Learn from a hashed sample of this many rows (statistics counted on every row); 0: every row.",
        ge=0,
    )


def min_share_param() -> Any:
    return param(
        None,
        "Keep rules covering at least this share of their class's rows.",
        ge=0.0,
        lt=1.0,
        panel=TUNING_PANEL,
    )


def majority_rules_param() -> Any:
    return param(
        None,
        "Rules of the majority class: keep, or drop for the default.",
        choices=("keep", "drop"),
        panel=TUNING_PANEL,
    )


def rules_per_class_param() -> Any:
    return param(
        None,
        "At most this many rules per class, the most right first.",
        ge=1,
        panel=TUNING_PANEL,
    )


def max_rule_length_param(default: int | None = None) -> Any:
    return param(default, "At most this many conditions per rule.", ge=1)


def average_param() -> Any:
    return param(
        "mean",
        "A numeric target: each rule predicts the mean or the median of the training rows it decides.",
        choices=("mean", "median"),
    )


def seed_param() -> Any:
    return param(0, "Random seed, recorded in the model.")


def monotone_param(refused: str | None = None) -> Any:
    """``--monotone``; a learner whose search cannot honour it declares it ``refused``
    (why), so that asking for it says why instead of "no such option"."""
    help = (
        "Constraints such as 'age:+,debt:-': the prediction (a numeric target's value, or the share of the "
        "second of two classes) never falls as age rises, nor rises as debt does."
    )
    return param(None, help if refused is None else f"Refused: {refused}.", metavar="COLUMN:+/-,…", panel=DATA_PANEL)


def jobs_param() -> Any:
    return param(
        None,
        "Worker processes (default: every core; the same model for any).",
        short="j",
        ge=1,
        record=False,
    )
