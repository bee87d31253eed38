"""rulecli's Python API: everything a command does, callable from Python.

>>> import rulecli
>>> model = rulecli.fit("oner", "sample_data/house.csv", target="value")
>>> rulecli.predict(model, "sample_data/house.csv")["prediction"].to_list()[:3]
['low', 'high', 'high']
>>> round(rulecli.evaluate(model, "sample_data/house.csv")["accuracy"], 2)
0.7

Data may be a path (any format rulecli reads), a Polars ``DataFrame`` or a prepared
:class:`~rulecli.dataset.Dataset`; models are the objects ``fit`` and ``load`` return.
The commands are thin layers over these functions. The package is split by verb:
:mod:`~rulecli.api.data` (reading and typing tables), :mod:`~rulecli.api.learning`
(fitting, :func:`learn` end to end, distillation), :mod:`~rulecli.api.models` (loading,
saving, text, exports), :mod:`~rulecli.api.scoring` (predictions, metrics, gates, drift,
the HTML report) and :mod:`~rulecli.api.compare` (two models side by side).
"""

from __future__ import annotations

import importlib
from typing import Any

# each name's module, imported on first use: a command loads only the parts it calls
# (`rulecli predict` loaded the learners' machinery too: 0.73 -> 0.64 s of start-up)
_HOMES = {
    "compare": ("diff",),
    "data": (
        "DATA_KEYS",
        "ENGINE_KEYS",
        "READ_KEYS",
        "Data",
        "Discretized",
        "as_data",
        "discretize",
        "engine_options",
        "prepare",
        "read_table",
        "sorted_options",
        "source_label",
    ),
    "learning": (
        "BALANCE_GAP",
        "HINT",
        "HOLDOUT",
        "JITTER",
        "MAX_TIME_BUDGET",
        "PRIOR_COSTS",
        "SYNTHETIC",
        "TAUGHT",
        "Learned",
        "Training",
        "budget_warnings",
        "check_engine",
        "check_time_budget",
        "distill",
        "fit",
        "fit_model",
        "imbalance_warnings",
        "jittered",
        "learn",
        "make_params",
        "partial_dependence",
        "predicted_classes",
        "release",
        "target_note",
        "train",
        "with_budget_record",
        "with_cost_priors",
        "with_costs",
        "with_data_record",
    ),
    "models": (
        "check_model_path",
        "export",
        "load",
        "loads_model",
        "logic_text",
        "model_text",
        "rules_text",
        "save",
    ),
    "scoring": (
        "CURVE_POINTS",
        "CURVE_ROWS",
        "CURVES",
        "REGRESSION_GATES",
        "drift",
        "evaluate",
        "metrics_json",
        "predict",
        "prediction_plan",
        "read_costs",
        "read_for_both",
        "report",
        "scan_for",
        "weight_expr",
    ),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name == "Predictor":  # the type of every model the API returns
        from rulecli.model.compile import Predictor

        return Predictor
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'rulecli.api' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"rulecli.api.{module}"), name)
    globals()[name] = value
    return value


__all__ = sorted([*_HOME, "Predictor"])
