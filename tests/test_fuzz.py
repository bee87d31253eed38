"""Bounded fuzzing of what reads untrusted bytes: the table reader and the model loaders.

Whatever the input, the only way out is a result or a :class:`RuleCliError` (one line for
the user, exit 2) — never another exception. `make test` runs the CI profile's examples;
`make test-slow` the thorough profile's 2,000 per property.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulecli import io
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.errors import RuleCliError
from rulecli.learners.forest import ForestParams, fit_forest
from rulecli.learners.oner import OneRParams, fit_oner
from rulecli.learners.tree import TreeParams, fit_tree
from rulecli.model.compile import check_data, prediction_frame
from rulecli.model.serde import dumps, loads
from rulecli.model.text import parse_text, render_text
from tests.conftest import SAMPLE

HOUSE = pl.read_csv(SAMPLE / "house.csv")
CSV_ALPHABET = st.sampled_from(list(',;"\n\r\t 0123456789.-+eEnaNIf?xyé\x00'))
FILES = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _read(path: Path) -> None:
    try:
        frame = io.collect(io.scan_table(str(path)), str(path))
        prepare_dataset(frame, DataSpec(), source=str(path))
    except RuleCliError:
        pass


@FILES
@given(st.binary(max_size=400))
def test_any_bytes_as_a_csv_file(tmp_path_factory, data: bytes):
    path = tmp_path_factory.mktemp("fuzz") / "data.csv"
    path.write_bytes(data)
    _read(path)


@FILES
@given(st.text(CSV_ALPHABET, max_size=300))
def test_csv_like_text(tmp_path_factory, text: str):
    path = tmp_path_factory.mktemp("fuzz") / "data.csv"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _read(path)


def _models() -> list[str]:
    ds = prepare_dataset(HOUSE, DataSpec(target="value"))
    return [
        dumps(fit_oner(ds, OneRParams())),
        dumps(fit_tree(ds, TreeParams())),
        dumps(fit_forest(ds, ForestParams(trees=2))),
    ]


MODELS = _models()
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 50) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)


def _paths(obj: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for key, value in obj.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj[:4]):
            out += _paths(value, (*prefix, i))
    return out


def _use(text: str) -> None:
    """Load a model and, if it loads, predict with it: both may only fail with a RuleCliError."""
    try:
        model = loads(text, "m.json") if text.lstrip().startswith("{") else parse_text(text, "m.txt")
        check_data(model, HOUSE.collect_schema(), "house.csv")
        prediction_frame(model, HOUSE.lazy(), proba=False).collect()
    except RuleCliError:
        pass
    except pl.exceptions.PolarsError:
        pass  # a data/model mismatch Polars reports; the CLI turns it into one line (exit 2)


@given(st.integers(0, len(MODELS) - 1), st.data(), JSON_VALUES)
def test_mutated_json_models(which: int, data: st.DataObject, value: object):
    body = json.loads(MODELS[which])
    path = data.draw(st.sampled_from(_paths(body)[1:]))
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    _use(json.dumps(body))


@given(st.integers(0, len(MODELS) - 1), st.integers(0, 20_000))
def test_truncated_json_models(which: int, cut: int):
    _use(MODELS[which][: cut % max(len(MODELS[which]), 1)])


TEXT = render_text(fit_oner(prepare_dataset(HOUSE, DataSpec(target="value")), OneRParams()))


@given(
    st.integers(0, len(TEXT)),
    st.text(st.sampled_from(list("IFTHENELSEAND =<>!{}()[],'`#\n.-0123456789size")), max_size=12),
)
def test_mutated_text_rules(at: int, inserted: str):
    _use(TEXT[:at] + inserted + TEXT[at:])
