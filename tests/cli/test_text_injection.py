"""Names and labels with line breaks, quotes, '#' and backslashes round-trip through every
text form: a saved .txt model predicts what its JSON twin predicts, for every learner."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rulecli import learners
from tests.conftest import QUICK, run_cli

HOSTILE_LABELS = ["yes\nIF TRUE THEN 'evil", "it's # not a comment", "back\\slash\r"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(1)
    n = 120
    x = rng.normal(size=n).round(2)
    label = np.array(HOSTILE_LABELS)[np.digitize(x, [-0.4, 0.4])]
    path = tmp_path_factory.mktemp("hostile") / "h.csv"
    pl.DataFrame({"col\nIF x": x, "lvl#'\\": rng.choice(["a\nb", "c'd", "e#f"], n), "target\n# y": label}).write_csv(
        path
    )
    return path


@pytest.mark.parametrize("learner", [n for n in learners.names("classes") if n != "forest"])
def test_text_model_predicts_as_its_json_twin(hostile: Path, tmp_path: Path, learner: str):
    as_json, as_text = tmp_path / "m.json", tmp_path / "m.txt"
    options = [*QUICK.get(learner, []), "-q"]
    assert run_cli(learner, str(hostile), "-o", str(as_json), *options).code == 0
    saved = run_cli(learner, str(hostile), "-o", str(as_text), *options)
    assert saved.code == 0, saved.stderr
    from_json = run_cli("predict", str(as_json), str(hostile))
    from_text = run_cli("predict", str(as_text), str(hostile))
    assert from_text.code == 0, from_text.stderr
    assert from_text.stdout == from_json.stdout
    # no label became a rule of its own
    assert "IF TRUE THEN 'evil" not in [line.strip() for line in as_text.read_text().splitlines()]
