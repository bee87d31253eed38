"""report: a self-contained HTML page, checked as text and in a real headless browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import SAMPLE, run_cli

PENGUINS = str(SAMPLE / "penguins.csv")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# a closed network refuses Chromium's background connections; these keep it quiet
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


def _page(
    tmp_path: Path, learner: str, *options: str, data: str = PENGUINS, target: str = "species", baseline: bool = True
) -> str:
    model = tmp_path / f"{learner}.json"
    assert run_cli(learner, data, "-y", target, "-q", "-o", str(model), *options).code == 0
    page = tmp_path / f"{learner}.html"
    made = run_cli("report", str(model), data, "-o", str(page), "--baseline" if baseline else "-q")
    assert made.code == 0, made.stderr
    return page.read_text()


@pytest.mark.parametrize(
    ("learner", "options", "expect"),
    [
        ("ripper", (), ['id="rules"', "Rules against their training statistics", "Confusion matrix"]),
        ("aq", (), ['id="rules"', "Per class"]),
        ("tree", ("--max-depth", "3"), ['id="rules"', "The tree (first 5 levels)", 'aria-label="the tree"']),
        (
            "forest",
            ("-B", "5"),
            ["Feature importance", "Partial dependence", "P(Adelie) by bill_length_mm", "Out-of-bag accuracy 0.9"],
        ),
    ],
)
def test_every_kind_of_model_gets_a_page(tmp_path: Path, learner: str, options: tuple[str, ...], expect: list[str]):
    page = _page(tmp_path, learner, *options, baseline=learner != "forest")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    for text in expect:
        assert text in page, text
    assert "<svg" in page
    assert "<script" not in page and not re.search(r"(src|href)=\"(https?:)?//", page)  # no code, no network


def test_a_regression_tree_page(tmp_path: Path):
    data = tmp_path / "numbers.csv"
    pl.DataFrame({"x": [float(i) for i in range(40)], "y": [2.0 * i + (i % 3) for i in range(40)]}).write_csv(data)
    page = _page(tmp_path, "tree", "--max-depth", "3", data=str(data), target="y", baseline=False)
    assert "rmse" in page and 'aria-label="the tree"' in page


def test_values_never_become_markup(tmp_path: Path):
    data = tmp_path / "hostile.csv"
    evil = "<script>alert(1)</script>"
    pl.DataFrame(
        {
            f'x"{evil}': [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] * 5,
            "c": [evil, "b", "a'", evil, "b", "&amp;"] * 5,
            "y": ["<b>yes</b>", "no", "<b>yes</b>", "no", "no", "<b>yes</b>"] * 5,
        }
    ).write_csv(data)
    for learner in ("ripper", "tree"):
        page = _page(tmp_path, learner, data=str(data), target="y")
        assert "<script" not in page and "<b>yes</b>" not in page
        assert "&lt;b&gt;yes&lt;/b&gt;" in page


def test_bad_output_is_refused_before_any_work(tmp_path: Path):
    model = tmp_path / "m.json"
    assert run_cli("oner", PENGUINS, "-y", "species", "-q", "-o", str(model)).code == 0
    refused = run_cli("report", str(model), PENGUINS, "-o", str(tmp_path / "r.txt"))
    assert refused.code == 2 and "a report is written as .html" in refused.stderr
    assert not (tmp_path / "r.txt").exists()
    forest = tmp_path / "f.json"
    assert run_cli("forest", PENGUINS, "-y", "species", "-B", "2", "-q", "-o", str(forest)).code == 0
    no_rules = run_cli("report", str(forest), PENGUINS, "--baseline", "-o", str(tmp_path / "f.html"))
    assert no_rules.code == 2 and "a forest has no such rules" in no_rules.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_the_page_renders_in_a_headless_browser(tmp_path: Path):
    _page(tmp_path, "ripper")
    page = tmp_path / "ripper.html"

    def chromium(*args: str) -> subprocess.CompletedProcess[str]:
        profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
        cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    # the check for console errors can fail: a page that throws is seen
    broken = tmp_path / "broken.html"
    broken.write_text('<html><body><script>throw new Error("boom")</script></body></html>')
    assert "Uncaught Error: boom" in chromium("--dump-dom", broken.as_uri()).stderr
    dom = chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "CONSOLE" not in dom.stderr, dom.stderr
    assert '<table class="rules" id="rules">' in dom.stdout and dom.stdout.count("<svg") >= 5
    shot = tmp_path / "shot.png"
    taken = chromium("--window-size=1280,800", f"--screenshot={shot}", page.as_uri())
    assert taken.returncode == 0 and shot.exists()
    png = shot.read_bytes()
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1280, 800)


def test_a_page_shows_rule_intervals_and_the_columns_against_a_reference(tmp_path: Path):
    model = tmp_path / "r.json"
    assert run_cli("ripper", PENGUINS, "-y", "species", "-q", "-o", str(model)).code == 0
    shifted = tmp_path / "shifted.csv"
    pl.read_csv(PENGUINS).with_columns(pl.col("flipper_length_mm") + 15).write_csv(shifted)
    page = tmp_path / "r.html"
    made = run_cli("report", str(model), str(shifted), "--reference", PENGUINS, "-o", str(page))
    assert made.code == 0, made.stderr
    html = page.read_text()
    assert "<th>95 % interval</th>" in html and "Columns against the reference table" in html
    assert re.search(r"<td>flipper_length_mm</td><td class=num>\d+\.\d{3}</td>.*?drifted", html)
