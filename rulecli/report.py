"""One self-contained HTML page about a model on a table: no scripts, no network.

The charts are inline SVG written here: bars for each rule's coverage and accuracy and
for per-class precision and recall, the confusion matrix as a heat map, a tree drawn node
by node, a forest's feature importance and partial-dependence curves, and the rule drift
table of ``evaluate --baseline``. Every text that comes from a model or a table is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rulecli.model.core import schema_units
from rulecli.model.text import render_condition
from rulecli.model.tree import Forest, Tree, single_test
from rulecli.words import visible

TREE_DEPTH = 5  # levels drawn; deeper subtrees are summarised in one box
BAR = 120


def _e(value: object) -> str:
    return html.escape(visible(str(value)), quote=True)


@dataclass(frozen=True)
class Curve:
    feature: str
    curve: str  # what the values are: f_<class> or mean_prediction
    grid: list[float | str]
    values: list[float]


def bar(share: float | None, color: str = "#3b7dd8") -> str:
    if share is None:
        return '<span class="none">—</span>'
    share = min(max(share, 0.0), 1.0)
    width = round(share * BAR, 1)
    return (
        f'<svg class="bar" width="{BAR}" height="12" role="img" aria-label="{share:.3f}">'
        f'<rect width="{BAR}" height="12" fill="#eee"/><rect width="{width}" height="12" fill="{color}"/></svg>'
        f" {share:.3f}"
    )


def heat_map(labels: Sequence[str], matrix: Sequence[Sequence[int]]) -> str:
    """Rows: truth, columns: prediction; each cell shaded by its share of its row."""
    cell, left, top = 44, 120, 90
    n = len(labels)
    width, height = left + cell * n + 10, top + cell * n + 10
    parts = [f'<svg class="chart" width="{width}" height="{height}" role="img" aria-label="confusion matrix">']
    for j, label in enumerate(labels):
        x = left + cell * j + cell / 2
        parts.append(
            f'<text x="{x}" y="{top - 6}" transform="rotate(-45 {x} {top - 6})" font-size="11">{_e(label)}</text>'
        )
    for i, (label, row) in enumerate(zip(labels, matrix, strict=True)):
        y = top + cell * i
        parts.append(f'<text x="{left - 6}" y="{y + cell / 2 + 4}" text-anchor="end" font-size="11">{_e(label)}</text>')
        total = sum(row) or 1
        for j, count in enumerate(row):
            share = count / total
            shade = round(255 - 200 * share)
            fill = f"rgb({shade},{shade + 20 if shade < 235 else 255},255)"
            ink = "#fff" if share > 0.6 else "#000"
            x = left + cell * j
            parts.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" stroke="#fff"/>')
            parts.append(
                f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" text-anchor="middle" font-size="11" '
                f'fill="{ink}">{count}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def horizontal_bars(values: dict[str, float], title: str) -> str:
    top = sorted(values.items(), key=lambda kv: -kv[1])[:20]
    peak = max((v for _, v in top), default=0.0) or 1.0
    row, left, span = 18, 200, 260
    height = row * len(top) + 10
    parts = [f'<svg class="chart" width="{left + span + 90}" height="{height}" role="img" aria-label="{_e(title)}">']
    for i, (name, value) in enumerate(top):
        y = 5 + row * i
        width = max(value, 0.0) / peak * span
        parts.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end" font-size="11">{_e(name)}</text>')
        parts.append(f'<rect x="{left}" y="{y + 2}" width="{width:.1f}" height="{row - 6}" fill="#3b7dd8"/>')
        parts.append(f'<text x="{left + width + 4:.1f}" y="{y + 12}" font-size="11">{value:.4f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _label(value: float | str) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def line_chart(curve: Curve) -> str:
    width, height, pad = 340, 180, 40
    values = curve.values
    low, high = min(values), max(values)
    spread = (high - low) or 1.0
    n = len(values)
    points = []
    for k, v in enumerate(values):
        x = pad + (width - 2 * pad) * (k / max(n - 1, 1))
        y = height - pad - (height - 2 * pad) * ((v - low) / spread)
        points.append(f"{x:.1f},{y:.1f}")
    first, last = curve.grid[0], curve.grid[-1]
    categories = isinstance(first, str)
    if categories:  # levels have no order between them: a point each, named
        marks = "".join(
            f'<circle cx="{p.split(",")[0]}" cy="{p.split(",")[1]}" r="4" fill="#d8573b"/>'
            f'<text x="{p.split(",")[0]}" y="{height - pad + 14}" font-size="10" text-anchor="end" '
            f'transform="rotate(-30 {p.split(",")[0]} {height - pad + 14})">{_e(_short(str(g), 14))}</text>'
            for p, g in zip(points, curve.grid, strict=True)
        )
    else:
        marks = f'<polyline fill="none" stroke="#d8573b" stroke-width="2" points="{" ".join(points)}"/>'
        marks += (
            f'<text x="{pad}" y="{height - pad + 16}" font-size="11">{_e(_label(first))}</text>'
            f'<text x="{width - pad}" y="{height - pad + 16}" font-size="11" text-anchor="end">'
            f"{_e(_label(last))}</text>"
        )
    return (
        f'<svg class="chart" width="{width}" height="{height}" role="img" aria-label="partial dependence on '
        f'{_e(curve.feature)}">'
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#888"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#888"/>'
        f"{marks}"
        f'<text x="{pad - 4}" y="{pad + 4}" font-size="11" text-anchor="end">{high:.3g}</text>'
        f'<text x="{pad - 4}" y="{height - pad}" font-size="11" text-anchor="end">{low:.3g}</text>'
        f'<text x="{width / 2}" y="16" font-size="12" text-anchor="middle">{_e(curve.curve)} by '
        f"{_e(curve.feature)}</text></svg>"
    )


def tree_drawing(tree: Tree) -> str:
    """The tree's first levels as boxes and edges, leaves left to right in depth-first order."""
    nodes = tree.nodes
    units = schema_units(tree.info.schema)
    box_w, box_h, gap_x, gap_y = 150, 40, 12, 34
    slots: dict[int, float] = {}
    depth: dict[int, int] = {}
    order: list[int] = []
    next_slot = [0.0]

    def place(node: int, level: int) -> float:
        depth[node] = level
        order.append(node)
        if nodes.feature[node] < 0 or level == TREE_DEPTH:
            slots[node] = next_slot[0]
            next_slot[0] += 1
            return slots[node]
        left = place(int(nodes.left[node]), level + 1)
        right = place(int(nodes.right[node]), level + 1)
        slots[node] = (left + right) / 2
        return slots[node]

    place(0, 0)
    width = int(next_slot[0] * (box_w + gap_x) + gap_x)
    height = int((max(depth.values()) + 1) * (box_h + gap_y) + gap_y)
    parts = [f'<svg class="chart tree" width="{width}" height="{height}" role="img" aria-label="the tree">']

    def xy(node: int) -> tuple[float, float]:
        return gap_x + slots[node] * (box_w + gap_x), gap_y / 2 + depth[node] * (box_h + gap_y)

    for node in order:
        if nodes.feature[node] >= 0 and depth[node] < TREE_DEPTH:
            x, y = xy(node)
            for child, to_left in ((int(nodes.left[node]), True), (int(nodes.right[node]), False)):
                cx, cy = xy(child)
                column = tree.features[int(nodes.feature[node])]
                test = render_condition(single_test(nodes, node, column, to_left=to_left, units=units))
                parts.append(
                    f'<line x1="{x + box_w / 2}" y1="{y + box_h}" x2="{cx + box_w / 2}" y2="{cy}" stroke="#999"/>'
                )
                parts.append(
                    f'<text x="{cx + box_w / 2}" y="{cy - 4}" font-size="9" text-anchor="middle">'
                    f"{_e(_short(test, 30))}</text>"
                )
    for node in order:
        x, y = xy(node)
        value = nodes.value[node]
        if tree.regression:
            what = f"{tree.target} = {float(value[0]):.4g}"
        else:
            what = f"{tree.classes[int(value.argmax())]}"
        rows = f"{float(nodes.n_samples[node]):g} rows"
        inner = nodes.feature[node] >= 0
        if inner and depth[node] == TREE_DEPTH:
            rows += ", subtree not drawn"
        fill = "#f4f7fb" if inner else "#e8f3e8"
        parts.append(f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="4" fill="{fill}" stroke="#889"/>')
        parts.append(
            f'<text x="{x + box_w / 2}" y="{y + 16}" font-size="11" text-anchor="middle">{_e(_short(what, 24))}</text>'
        )
        parts.append(f'<text x="{x + box_w / 2}" y="{y + 31}" font-size="10" text-anchor="middle">{_e(rows)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; font-size: 13px; }
table.metrics th, table.metrics td { padding: 2px 8px; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: middle; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.rule { font-family: ui-monospace, monospace; font-size: 12px; max-width: 640px; }
.none { color: #999; } .drifted { color: #b00; font-weight: bold; }
.scroll { overflow-x: auto; }
"""


def render(
    model: Any,
    payload: dict[str, Any],
    *,
    model_label: str,
    data_label: str,
    importance: dict[str, float] | None = None,
    curves: Sequence[Curve] = (),
) -> str:
    """The page, from ``evaluate``'s payload (with ``baseline`` when asked for) and the model."""
    kind = model.kind.replace("_", " ")
    algorithm = model.info.algorithm
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>rulecli report: {_e(model_label)} on {_e(data_label)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_e(model_label)} on {_e(data_label)}</h1>",
        f"<p>A {_e(kind)} ({_e(algorithm)}) for <b>{_e(model.target)}</b>; {payload['rows']} rows scored.</p>",
    ]
    parts.append(f"<h2>On {_e(data_label)}</h2>")
    if "rmse" in payload:
        parts.append(_metrics_table(payload, ("rows", "mae", "rmse", "r2", "mean_truth")))
    else:
        parts.append(_metrics_table(payload, ("accuracy", "balanced_accuracy", "macro_f1", "kappa", "coverage")))
    if isinstance(model, Forest):
        parts.append(_out_of_bag(model))
    if payload.get("rules"):
        parts.append("<h2>Rules on this data</h2>" + _rules_table(payload["rules"]))
    if "rmse" not in payload:
        parts.append("<h2>Per class</h2>" + _per_class(payload))
        confusion = payload["confusion"]
        parts.append("<h2>Confusion matrix</h2><p>Rows: truth; columns: prediction; shade: share of the row.</p>")
        parts.append(heat_map(confusion["labels"], confusion["matrix"]))
    if isinstance(model, Tree):
        parts.append(f"<h2>The tree (first {TREE_DEPTH} levels)</h2><div class=scroll>{tree_drawing(model)}</div>")
    if isinstance(model, Forest) and importance:
        parts.append("<h2>Feature importance (mean impurity decrease)</h2>" + horizontal_bars(importance, "importance"))
    if curves:
        parts.append(
            "<h2>Partial dependence</h2><p>The mean prediction over the table's rows with the feature set "
            "to each value.</p>"
        )
        parts.append("".join(line_chart(c) for c in curves))
    if payload.get("baseline"):
        parts.append("<h2>Rules against their training statistics</h2>" + _drift_table(payload["baseline"]))
    if payload.get("feature_drift"):
        parts.append(
            "<h2>Columns against the reference table</h2><p>Population stability index over the model's own cut "
            "points or levels; chi-square p-values Holm-adjusted over the columns.</p>"
            + _feature_table(payload["feature_drift"])
        )
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _out_of_bag(model: Forest) -> str:
    """The forest's own estimate on unseen rows: each training row scored by the trees whose
    bootstrap left it out. On the training table the figures above are training figures,
    which a forest of deep trees fits almost perfectly."""
    training = model.info.training
    error = training.get("oob_mse" if model.regression else "oob_error")
    if not isinstance(error, int | float):
        return "<p>No out-of-bag estimate is recorded in this model.</p>"
    rows = training.get("oob_rows")
    what = f"mean squared error {error:.4f}" if model.regression else f"accuracy {1 - error:.4f} (error {error:.4f})"
    return (
        f"<h2>Out of bag</h2><p>Out-of-bag {what} over {_e(rows)} training rows, each scored by the trees "
        "whose bootstrap left it out: the forest's estimate on rows it has not seen. On the training table "
        "the figures above are training figures.</p>"
    )


def _metrics_table(payload: dict[str, Any], keys: Sequence[str]) -> str:
    def interval(k: str) -> str:
        bounds = payload.get(f"{k}_interval")
        return f"<td class=num>95 % interval {bounds[0]:.4f} – {bounds[1]:.4f}</td>" if bounds else "<td></td>"

    rows = "".join(
        f"<tr><th>{_e(k.replace('_', ' '))}</th><td class=num>{payload[k]:.4f}</td>{interval(k)}</tr>"
        if isinstance(payload[k], float)
        else f"<tr><th>{_e(k)}</th><td class=num>{_e(payload[k])}</td><td></td></tr>"
        for k in keys
        if k in payload
    )
    return f'<table class="metrics">{rows}</table>'


def _per_class(payload: dict[str, Any]) -> str:
    head = "<tr><th>class</th><th>precision</th><th>recall</th><th>F1</th><th>support</th></tr>"
    body = "".join(
        f"<tr><td>{_e(cls)}</td><td>{bar(row['precision'])}</td><td>{bar(row['recall'], '#5aa55a')}</td>"
        f"<td class=num>{row['f1']:.3f}</td><td class=num>{row['support']}</td></tr>"
        for cls, row in payload["per_class"].items()
    )
    return f'<table class="per-class">{head}{body}</table>'


def _rules_table(rules: list[dict[str, Any]]) -> str:
    head = (
        "<tr><th>rule</th><th>IF</th><th>THEN</th><th>covered</th><th>coverage</th><th>accuracy</th>"
        "<th>95 % interval</th></tr>"
    )
    body = "".join(
        f"<tr><td class=num>{_e(r['rule'])}</td><td class=rule>{_e(r['conditions'])}</td>"
        f"<td>{_e(r['prediction'])}</td><td class=num>{r['covered']}</td><td>{bar(r['coverage'])}</td>"
        f"<td>{bar(r['accuracy'] if r['covered'] else None, '#5aa55a')}</td><td class=num>{_interval(r)}</td></tr>"
        for r in rules
    )
    return f'<table class="rules" id="rules">{head}{body}</table>'


def _interval(row: dict[str, Any]) -> str:
    bounds = row.get("accuracy_interval")
    return f"{bounds[0]:.3f} – {bounds[1]:.3f}" if bounds else ""


def _feature_table(drift: dict[str, Any]) -> str:
    head = "<tr><th>column</th><th>population stability index</th><th>bins</th><th>cut by</th><th>p</th><th></th></tr>"
    body = "".join(
        f"<tr><td>{_e(r['column'])}</td><td class=num>{r['psi']:.3f}</td><td class=num>{r['bins']}</td>"
        f"<td>{_e(r['cut_by'])}</td><td class=num>{r['p']:.2g}</td>"
        f"<td class=drifted>{'drifted' if r['drifted'] else ''}</td></tr>"
        for r in drift["features"]
    )
    return f'<table class="features">{head}{body}</table>'


def _drift_table(drift: dict[str, Any]) -> str:
    def p(value: float | None) -> str:
        return "—" if value is None else f"{value:.2g}"

    head = (
        "<tr><th>rule</th><th>IF</th><th>coverage: training</th><th>here</th><th>p</th>"
        "<th>accuracy: training</th><th>here</th><th>p</th><th></th></tr>"
    )
    body = "".join(
        f"<tr><td class=num>{_e(r['rule'])}</td><td class=rule>{_e(r['conditions'])}</td>"
        f"<td>{bar(r['train_coverage'])}</td><td>{bar(r['coverage'])}</td><td class=num>{p(r['coverage_p'])}</td>"
        f"<td>{bar(r['train_accuracy'], '#5aa55a')}</td><td>{bar(r['accuracy'], '#5aa55a')}</td>"
        f"<td class=num>{p(r['accuracy_p'])}</td><td class=drifted>{'drifted' if r['drifted'] else ''}</td></tr>"
        for r in drift["rules"]
    )
    note = (
        f"<p>Two-proportion z-tests, p-values Holm-adjusted over {drift['tests']} tests; drifted where an "
        f"adjusted p is below {drift['alpha']}. Training: {drift['training_rows']} rows.</p>"
    )
    return note + f'<table class="drift">{head}{body}</table>'
