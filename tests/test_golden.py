"""Printed models, kept as golden files: a change in what any learner prints shows as a diff.

After an intended change, rewrite them with ``pytest tests/test_golden.py --update-golden``
and review the diff in git.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rulecli import learners
from tests.conftest import SAMPLE, run_cli

GOLDEN = Path(__file__).parent / "golden"
DATASETS = {"house": "value", "labor": "class", "penguins": "species"}
CASES = [(name, data) for name in learners.names("classes") for data in DATASETS]


@pytest.mark.parametrize(("learner", "dataset"), CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_printed_model_matches_its_golden_file(learner: str, dataset: str, request: pytest.FixtureRequest):
    result = run_cli(learner, str(SAMPLE / f"{dataset}.csv"), "-y", DATASETS[dataset])
    assert result.code == 0, result.stderr
    golden = GOLDEN / f"{learner}-{dataset}.txt"
    if request.config.getoption("--update-golden"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(result.stdout)
    assert golden.exists(), f"no golden file {golden.name}: run pytest {__file__} --update-golden"
    assert result.stdout == golden.read_text()
