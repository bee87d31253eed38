"""report: a self-contained HTML page, checked as text and in a real headless browser."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import ROOT, SAMPLE, run_cli

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
        ("tree", ("--max-depth", "3"), ['id="rules"', "<h2>The tree</h2>", 'aria-label="the tree"']),
        (
            "forest",
            ("-B", "5"),
            ["Feature importance", "Partial dependence", "P(class) by bill_length_mm", "Out-of-bag accuracy 0.9"],
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


needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
ARTEFACTS = ROOT / "build" / "test-artifacts"  # the screenshots, kept for people to look at

# Run in the browser on a copy of a page: every text inside its drawing, no two tree boxes
# overlapping, every box's text inside its box, and no edge through a box. The findings go
# into the page, which --dump-dom prints.
PROBE = """<script>
const found = [];
const inside = (r, box) => r.left >= box.left - 0.5 && r.right <= box.right + 0.5
  && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5;
const texts = document.querySelectorAll('svg.chart text');
for (const svg of document.querySelectorAll('svg.chart')) {
  const box = svg.getBoundingClientRect();
  for (const t of svg.querySelectorAll('text')) {
    if (!inside(t.getBoundingClientRect(), box)) found.push('clipped: ' + t.textContent);
  }
}
const nodes = [...document.querySelectorAll('svg.tree g.node')]
  .map(g => g.querySelector('rect').getBoundingClientRect());
document.querySelectorAll('svg.tree g.node').forEach((g, k) => {
  for (const t of g.querySelectorAll('text')) {
    if (!inside(t.getBoundingClientRect(), nodes[k])) found.push('outside its box: ' + t.textContent);
  }
});
nodes.forEach((a, i) => nodes.slice(i + 1).forEach(b => {
  if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) found.push('overlap');
}));
for (const line of document.querySelectorAll('svg.tree line')) {
  const r = line.getBoundingClientRect();
  for (const n of nodes) {
    const crosses = r.top + 1 < n.bottom && n.top < r.bottom - 1 && r.left < n.right && n.left < r.right;
    if (crosses) found.push('edge through a box');
  }
}
const summary = JSON.stringify({texts: texts.length, nodes: nodes.length, found});
document.body.insertAdjacentHTML('beforeend', '<pre id="probe">' + summary + '</pre>');
</script>"""


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    cmd = [CHROMIUM or "chromium", *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _probed(tmp_path: Path, page: Path) -> dict[str, object]:
    probed = page.with_suffix(".probe.html")
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = _chromium(tmp_path, "--dump-dom", probed.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.findall(r'<pre id="probe">(\{.*?)</pre>', dom.stdout)
    assert found, dom.stderr[-2000:]
    return json.loads(html.unescape(found[-1]))


def _screenshot(tmp_path: Path, page: Path, name: str) -> Path:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / f"report-{name}.png"
    taken = _chromium(tmp_path, "--window-size=1280,1600", f"--screenshot={shot}", page.as_uri())
    assert taken.returncode == 0 and shot.exists(), taken.stderr[-2000:]
    png = shot.read_bytes()
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (1280, 1600)
    return shot


@needs_chromium
def test_the_page_renders_in_a_headless_browser(tmp_path: Path):
    _page(tmp_path, "ripper")
    page = tmp_path / "ripper.html"
    # the check for console errors can fail: a page that throws is seen
    broken = tmp_path / "broken.html"
    broken.write_text('<html><body><script>throw new Error("boom")</script></body></html>')
    assert "Uncaught Error: boom" in _chromium(tmp_path, "--dump-dom", broken.as_uri()).stderr
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "CONSOLE" not in dom.stderr, dom.stderr
    assert '<table class="rules" id="rules">' in dom.stdout and dom.stdout.count("<svg") >= 5
    _screenshot(tmp_path, page, "ripper")


def _big_table(path: Path) -> None:
    """Three classes on six long-named measurements with noise: a tree of hundreds of leaves."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6000, 6))
    score = x[:, 0] + np.sin(2 * x[:, 1]) + x[:, 2] * x[:, 3] + rng.normal(scale=0.7, size=6000)
    grade = np.where(score > 0.8, "high", np.where(score < -0.5, "low", "middle"))
    frame = pl.DataFrame({f"measurement_{i}_of_the_instrument": x[:, i] for i in range(6)})
    frame.with_columns(pl.Series("grade", grade)).write_csv(path)


@needs_chromium
def test_a_300_leaf_tree_is_drawn_without_overlap_or_clipping(tmp_path: Path):
    data = tmp_path / "big.csv"
    _big_table(data)
    page = _page(tmp_path, "tree", "--max-leaf-nodes", "300", "--ccp-alpha", "0", data=str(data), target="grade")
    assert "<h2>The whole tree (300 leaves)</h2>" in page and page.count('<div class="leaf">') == 300
    probe = _probed(tmp_path, tmp_path / "tree.html")
    assert probe["found"] == [] and probe["nodes"] >= 15, probe
    # the drawing keeps the levels that fit a wide screen or two, full tests and all
    assert re.search(r"<h2>The tree \(first [2-5] levels\)</h2>", page)
    assert int(re.search(r'class="chart tree" width="(\d+)"', page).group(1)) <= 2700
    assert "measurement_0_of_the_instrument" in page and "…" not in page
    _screenshot(tmp_path, tmp_path / "tree.html", "tree-300-leaves")


@needs_chromium
def test_every_class_gets_a_partial_dependence_curve_and_no_label_is_clipped(tmp_path: Path):
    page = _page(tmp_path, "forest", "-B", "10", baseline=False)
    for curve in ("bill_length_mm", "flipper_length_mm"):
        chart = re.search(rf'aria-label="partial dependence on {curve}">(.*?)</svg>', page).group(1)
        assert chart.count("<polyline") == 3  # Adelie, Chinstrap, Gentoo
    assert '<p class="legend">' in page and page.count('<span class="key">') == 3
    probe = _probed(tmp_path, tmp_path / "forest.html")
    assert probe["found"] == [] and probe["texts"] >= 40, probe
    _screenshot(tmp_path, tmp_path / "forest.html", "forest")
    # a categorical feature with long level names: points, their names turned, none cut off
    data = tmp_path / "regions.csv"
    regions = ["north-east coastal district", "south-west uplands", "the islands", "central plain (urban)"]
    rng = np.random.default_rng(3)
    region = rng.choice(regions, size=600)
    spend = rng.normal(size=600)
    bought = np.where((region == "the islands") ^ (spend > 1.0), "yes", "no")
    pl.DataFrame({"region": region, "spend": spend, "bought": bought}).write_csv(data)
    page = _page(tmp_path, "forest", "-B", "10", data=str(data), target="bought", baseline=False)
    chart = re.search(r'aria-label="partial dependence on region">(.*?)</svg>', page).group(1)
    assert chart.count("<circle") == 2 * len(regions) and "central plain (urban)" in chart
    assert _probed(tmp_path, tmp_path / "forest.html")["found"] == []
    _screenshot(tmp_path, tmp_path / "forest.html", "forest-categorical")


@needs_chromium
def test_the_browser_check_sees_clipping_and_overlap(tmp_path: Path):
    page = tmp_path / "bad.html"
    page.write_text(
        '<html><body><svg class="chart" width="60" height="30"><text x="10" y="20">far too long a label</text></svg>'
        '<svg class="chart tree" width="300" height="100"><g class="node"><rect x="0" y="0" width="100" height="40"/>'
        '<text x="5" y="15">a box</text></g><g class="node"><rect x="50" y="20" width="100" height="40"/></g>'
        '<line x1="10" y1="0" x2="10" y2="90"/></svg></body></html>'
    )
    found = _probed(tmp_path, page)["found"]
    assert "clipped: far too long a label" in found and "overlap" in found and "edge through a box" in found


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
