"""scikit-learn estimators over rulecli's learners (``pip install 'rulecli[sklearn]'``).

Each estimator takes its learner's parameters, with the names, defaults and checks of the
command's options and the API's keywords (they are read from the learner's declaration),
so ``get_params``, ``set_params``, ``clone``, ``Pipeline`` and ``GridSearchCV`` see them.
``X`` is a pandas or Polars frame (categorical and text columns stay categorical) or a
NumPy array; every column is a feature, as scikit-learn expects (rulecli's commands
leave out columns that look like row IDs or free text; here nothing is left out).
``model_`` is the fitted rulecli model: print it with ``rulecli.rules_text``, save it with
``rulecli.save`` and use it from the command line.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import numpy as np
import polars as pl
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from rulecli import api, learners
from rulecli.errors import RuleCliError
from rulecli.schema import plain_column

WEIGHT = "__rulecli_weight__"


class _Estimator(BaseEstimator):
    """What every rulecli estimator shares; a subclass names its learner and target kind."""

    _learner = ""
    _target_type = "classification"

    def _params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(learners.get(self._learner).params)}

    # a weak learner by design (OneR's one column): scikit-learn's checks then do not hold
    # it to their accuracy on blobs, as for its own DummyClassifier
    _poor_score = False

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value is a value rules test (is missing)
        return tags

    def _frame(self, X: Any, *, fitting: bool) -> pl.DataFrame:
        named = not isinstance(X, np.ndarray) and hasattr(X, "columns")
        if named:  # a Polars or pandas frame, a PyArrow table: as the API takes them
            frame = api.as_data(X)
        else:
            array = check_array(X, dtype=None, ensure_all_finite="allow-nan")
            frame = pl.DataFrame({f"x{j}": _column(array[:, j]) for j in range(array.shape[1])})
        frame = frame.rename({c: str(c) for c in frame.columns})
        if fitting:
            self.n_features_in_ = frame.width
            if named:
                self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        elif frame.width != self.n_features_in_:
            raise ValueError(
                f"X has {frame.width} features, but {type(self).__name__} is expecting {self.n_features_in_} "
                "features as input."
            )
        elif named and hasattr(self, "feature_names_in_") and list(frame.columns) != list(self.feature_names_in_):
            raise ValueError("The feature names should match those that were passed during fit")
        if frame.height == 0:
            raise ValueError(f"Found array with 0 sample(s) while a minimum of 1 is required by {type(self).__name__}")
        return frame  # an array's columns are x0, x1, … in fit and predict alike

    def _fit(self, X: Any, y: Any, target: pl.Series, sample_weight: Any) -> None:
        check_consistent_length(X, y)
        frame = self._frame(X, fitting=True)
        # the model's target: y's own name (a pandas or Polars series), else "target"
        name = getattr(y, "name", None)
        name = name if isinstance(name, str) and name else "target"
        while name in frame.columns:
            name = f"{name}_"
        frame = frame.with_columns(target.alias(name))
        if frame.height < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 samples; got 1 sample")
        options: dict[str, Any] = {"target": name, "target_type": self._target_type}
        if sample_weight is not None:
            frame = frame.with_columns(pl.Series(WEIGHT, sample_weight))
            options["weights"] = WEIGHT
        features = [c for c in frame.columns if c not in (name, WEIGHT)]
        try:
            self.model_ = api.fit(self._learner, frame, use=features, **options, **self._params())
        except RuleCliError as exc:  # scikit-learn's callers (searches, checks) expect a ValueError
            raise ValueError(str(exc)) from exc

    def _predicted(self, X: Any) -> pl.Series:
        check_is_fitted(self, "model_")
        return api.predict(self.model_, self._frame(X, fitting=False)).get_column("prediction")


def _required(estimator: Any, y: Any) -> Any:
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target y is None")
    return y


def _weights(sample_weight: Any, y: np.ndarray) -> np.ndarray:
    """Checked weights, one per row of ``y``; all of them zero is an error."""
    weights = _check_sample_weight(sample_weight, np.empty((len(y), 0)))
    if not (weights > 0).any():
        raise ValueError("every sample weight is zero: there is nothing to learn")
    return weights


def _column(values: np.ndarray) -> pl.Series:
    """One column of an array: numbers as floats; text (and None) as categories."""
    try:
        return pl.Series(values.astype(np.float64))
    except (TypeError, ValueError):
        odd = next((v for v in values if v is not None and not isinstance(v, str | int | float)), None)
        if odd is not None:
            raise TypeError(f"argument must be a string or a number, not '{type(odd).__name__}'") from None
        return pl.Series([None if v is None else str(v) for v in values], dtype=pl.String)


class _Classifier(ClassifierMixin, _Estimator):
    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # the classifier's tags are set by ClassifierMixin
        tags.classifier_tags.poor_score = self._poor_score
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> _Classifier:
        """Learn from ``X`` and the labels ``y`` (any labels: they come back as given)."""
        labels = column_or_1d(check_array(_required(self, y), ensure_2d=False, dtype=None), warn=True)
        check_classification_targets(labels)
        self.classes_, codes = np.unique(labels, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes; y has 1 class")
        if sample_weight is not None:
            sample_weight = _weights(sample_weight, labels)
            if np.unique(codes[sample_weight > 0]).size < 2:
                raise ValueError(f"{type(self).__name__} needs at least 2 classes of positive weight; y has 1 class")
        # the model's classes are the labels as text (1 and '1' would be one: then their numbers)
        texts = [str(c) for c in self.classes_]
        self._texts = texts if len(set(texts)) == len(texts) else [str(k) for k in range(len(texts))]
        # each row's label as its text, gathered by code (no loop over the rows)
        target = pl.Series(self._texts, dtype=pl.String).gather(codes)
        self._fit(X, y, target, sample_weight)
        self._fallback = self._texts[int(np.bincount(codes).argmax())]
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The class of each row (a rule set's row no rule covers: the training majority)."""
        predicted = self._predicted(X).fill_null(self._fallback)
        codes = predicted.replace_strict(self._texts, list(range(len(self._texts))), return_dtype=pl.Int64)
        return self.classes_[codes.to_numpy()]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Each row's class probabilities, in the order of ``classes_``."""
        check_is_fitted(self, "model_")
        table = api.predict(self.model_, self._frame(X, fitting=False), proba=True)
        columns = [f"proba_{text}" for text in self._texts]
        shares = np.column_stack(
            [
                plain_column(table, c).fill_null(0.0).to_numpy() if c in table.columns else np.zeros(table.height)
                for c in columns
            ]
        )
        totals = shares.sum(axis=1, keepdims=True)
        return np.divide(shares, totals, out=np.full_like(shares, 1.0 / shares.shape[1]), where=totals > 0)


class _Regressor(RegressorMixin, _Estimator):
    _target_type = "regression"

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> _Regressor:
        """Learn from ``X`` and the numbers ``y``."""
        values = check_array(_required(self, y), ensure_2d=False, dtype=np.float64)
        if sample_weight is not None:
            sample_weight = _weights(sample_weight, values)
        self._fit(X, y, pl.Series(column_or_1d(values, warn=True)), sample_weight)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The number predicted for each row."""
        return self._predicted(X).cast(pl.Float64).to_numpy()


def _estimator(name: str, base: type, learner: str, *, poor_score: bool = False) -> type:
    """``base`` for ``learner``: an ``__init__`` that takes exactly the learner's parameters,
    with their defaults, as scikit-learn reads them from its signature."""
    fields = dataclasses.fields(learners.get(learner).params)
    names = {f.name for f in fields}

    def __init__(self: Any, **values: Any) -> None:
        unknown = sorted(set(values) - names)
        if unknown:
            raise TypeError(f"{name} has no parameter '{unknown[0]}' (it has: {', '.join(sorted(names))})")
        for field in fields:
            setattr(self, field.name, values.get(field.name, field.default))

    keyword = inspect.Parameter.KEYWORD_ONLY
    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(f.name, keyword, default=f.default) for f in fields]
    )
    doc = f"rulecli's ``{learner}`` learner as a scikit-learn estimator ({learners.REGISTRY[learner][1]})"
    namespace = {"__init__": __init__, "_learner": learner, "__doc__": doc, "__module__": __name__}
    return type(name, (base,), {**namespace, "_poor_score": poor_score})


OneRClassifier = _estimator("OneRClassifier", _Classifier, "oner", poor_score=True)
RipperClassifier = _estimator("RipperClassifier", _Classifier, "ripper")
RipperRegressor = _estimator("RipperRegressor", _Regressor, "ripper")
CN2Classifier = _estimator("CN2Classifier", _Classifier, "cn2")
CN2Regressor = _estimator("CN2Regressor", _Regressor, "cn2")
AQClassifier = _estimator("AQClassifier", _Classifier, "aq")
BRLClassifier = _estimator("BRLClassifier", _Classifier, "brl")
ReductClassifier = _estimator("ReductClassifier", _Classifier, "reduct")
TreeClassifier = _estimator("TreeClassifier", _Classifier, "tree")
TreeRegressor = _estimator("TreeRegressor", _Regressor, "tree")
ForestClassifier = _estimator("ForestClassifier", _Classifier, "forest")
ForestRegressor = _estimator("ForestRegressor", _Regressor, "forest")
M5RulesRegressor = _estimator("M5RulesRegressor", _Regressor, "m5rules")

ESTIMATORS = (
    OneRClassifier,
    RipperClassifier,
    RipperRegressor,
    CN2Classifier,
    CN2Regressor,
    AQClassifier,
    BRLClassifier,
    ReductClassifier,
    TreeClassifier,
    TreeRegressor,
    ForestClassifier,
    ForestRegressor,
    M5RulesRegressor,
)
