"""Control and bidirectional characters in names, values and labels never reach a person's
terminal or the report as themselves: every human output shows them as escapes (``\\x1b``),
and the text model, which writes them so, still predicts what its JSON twin predicts."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rulecli import learners
from tests.conftest import QUICK, run_at_a_terminal, run_cli

# a screen clear, a window title that swallows what follows, a hidden hyperlink, a bell,
# C1's CSI, and the right-to-left override that shows a rule reversed
ESCAPES = ["\x1b[2JX", "\x1b]0;title\x07y", "\x1b]8;;http://evil.example\x07z", "\x9b31m", "ab\u202ecd"]
ACTED_ON = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def ansi(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(2)
    n = 150
    x = rng.normal(size=n).round(2)
    level = rng.choice(ESCAPES[:3], n)
    label = np.where(x > 0.3, "\x1b[31mred\u202e", np.where(level == ESCAPES[0], "p\x07", "q"))
    path = tmp_path_factory.mktemp("ansi") / "ansi.csv"
    pl.DataFrame({"\x1b]0;COL\x07c": x, "lvl\u202e": level, "t": label}).write_csv(path)
    return path


def _seen(text: str) -> list[str]:
    return sorted({repr(c) for c in ACTED_ON.findall(text)})


@pytest.mark.parametrize("learner", learners.names("classes"))
def test_no_control_character_reaches_the_terminal(ansi: Path, tmp_path: Path, learner: str):
    options = [*QUICK.get(learner, []), "--target", "t"]
    learned = run_cli(learner, str(ansi), *options, "--cv", "2", cwd=tmp_path)
    assert learned.code == 0, learned.stderr
    assert _seen(learned.stdout + learned.stderr) == [], "the printed model or the CV table"
    assert run_cli(learner, str(ansi), *options, "-q", "-o", "m.json", cwd=tmp_path).code == 0
    text = learner != "forest"  # a forest is saved as JSON only
    if text:
        assert run_cli(learner, str(ansi), *options, "-q", "-o", "m.txt", cwd=tmp_path).code == 0
        assert _seen((tmp_path / "m.txt").read_text()) == [], "the text model"
    for args in (
        ["show", "m.json"],
        ["show", "m.txt" if text else "m.json", "--logic"],
        ["evaluate", "m.json", str(ansi)],
        ["report", "m.json", str(ansi), "-o", "r.html"],
    ):
        shown = run_cli(*args, cwd=tmp_path)
        assert shown.code == 0, (args, shown.stderr)
        assert _seen(shown.stdout + shown.stderr) == [], args
    assert _seen((tmp_path / "r.html").read_text()) == [], "the report"
    if text:
        from_text = run_cli("predict", "m.txt", str(ansi), cwd=tmp_path)
        assert from_text.code == 0, from_text.stderr
        assert from_text.stdout == run_cli("predict", "m.json", str(ansi), cwd=tmp_path).stdout


def test_errors_and_warnings_show_control_characters_as_escapes(ansi: Path, tmp_path: Path):
    missing = run_cli("oner", str(ansi), "--target", "\x1b[2Jnope\u202e", cwd=tmp_path)
    assert missing.code == 2 and "\\x1b[2Jnope\\u202e" in missing.stderr, missing.stderr
    assert _seen(missing.stderr) == []
    assert run_cli("oner", str(ansi), "-y", "t", "-q", "-o", "a.json", cwd=tmp_path).code == 0
    assert run_cli("ripper", str(ansi), "-y", "t", "-q", "-o", "b.json", cwd=tmp_path).code == 0
    changed = run_cli("diff", "a.json", "b.json", str(ansi), cwd=tmp_path)  # with the rows that change
    assert changed.code in (0, 1) and "on the data" in changed.stdout, changed.stdout + changed.stderr
    assert _seen(changed.stdout + changed.stderr) == []


def test_tables_and_source_at_a_terminal_show_escapes_and_stay_data_in_a_pipe(ansi: Path, tmp_path: Path):
    assert run_cli("oner", str(ansi), "-y", "t", "-q", "-o", "m.json", cwd=tmp_path).code == 0
    for args in (["predict", "m.json", str(ansi), "--keep-all"], ["export", "m.json", "--to", "sql"]):
        shown = run_at_a_terminal(*args, cwd=tmp_path)
        assert "\\x1b" in shown and _seen(shown.replace("\r\n", "\n")) == [], args
        piped = run_cli(*args, cwd=tmp_path)
        assert piped.code == 0 and "\x1b" in piped.stdout, args  # a file or a pipe gets the values as they are
