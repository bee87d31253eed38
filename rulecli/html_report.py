"""One self-contained HTML page about a model on a table: no scripts, no network.

The charts are inline SVG written here: bars for each rule's coverage and accuracy and
for per-class precision and recall, the confusion matrix as a heat map, a tree drawn node
by node, a forest's feature importance and partial-dependence curves, and the rule drift
table of ``evaluate --baseline``. Every text that comes from a model or a table is escaped.
"""

from __future__ import annotations

import html
import textwrap
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rulecli.display import counted, visible
from rulecli.model.core import Committee, NumberRule, RuleRegression, schema_units
from rulecli.model.text import render_condition, render_conditions, render_formula
from rulecli.model.tree import Forest, Tree, single_test
from rulecli.schema import Unit

TREE_DEPTH = 5  # levels drawn at most; a deeper subtree is one box (the outline lists it)
OUTLINE_NODES = 4001  # nodes listed in the collapsible outline: a 2,000-leaf tree in full
OUTLINE_OPEN = 2  # outline levels open when the page opens
BAR = 120
# Tableau's ten colours: told apart by most colour-blind readers; classes past ten repeat them
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")
MONO = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
CHAR = 0.62  # a monospace character's advance in ems (0.6 in the common faces), so boxes fit their text
WRAP = 34  # characters per line in a tree box: a long test wraps instead of being cut
TREE_WIDTH = 2600  # pixels: a wider drawing loses its deepest level (the outline has them)
_FONT, _PAD, _LINE, _BAR_H, _GAP_X, _GAP_Y = 11, 8, 14, 8, 14, 30  # a tree box's text and spacing


def _e(value: object) -> str:
    return html.escape(visible(str(value)), quote=True)


@dataclass(frozen=True)
class Curve:
    feature: str
    measure: str  # what the values are: P(class) or mean prediction
    grid: list[float | str]
    series: dict[str, list[float]]  # one line per class (or the regression target)


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
    cell, font = 44, 11
    n = len(labels)
    names = [_short(visible(str(label)), 18) for label in labels]
    longest = max((_text_width(name, font) for name in names), default=0.0)
    # room for the row names on the left and the column names, turned 45°, above
    left, top = int(longest) + 14, int(longest * 0.71) + 20
    width, height = left + cell * n + int(longest * 0.71) + 10, top + cell * n + 10
    parts = [f'<svg class="chart" width="{width}" height="{height}" role="img" aria-label="confusion matrix">']
    for j, name in enumerate(names):
        x = left + cell * j + cell / 2
        parts.append(
            f'<text x="{x}" y="{top - 6}" transform="rotate(-45 {x} {top - 6})" font-size="{font}" '
            f'font-family="{MONO}">{html.escape(name)}</text>'
        )
    for i, (name, row) in enumerate(zip(names, matrix, strict=True)):
        y = top + cell * i
        parts.append(
            f'<text x="{left - 6}" y="{y + cell / 2 + 4}" text-anchor="end" font-size="{font}" '
            f'font-family="{MONO}">{html.escape(name)}</text>'
        )
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
    names = [_short(visible(name), 40) for name, _ in top]
    row, span, font = 18, 260, 11
    left = int(max((_text_width(name, font) for name in names), default=0.0)) + 12
    height = row * len(top) + 10
    parts = [f'<svg class="chart" width="{left + span + 70}" height="{height}" role="img" aria-label="{_e(title)}">']
    for i, (name, (_, value)) in enumerate(zip(names, top, strict=True)):
        y = 5 + row * i
        width = max(value, 0.0) / peak * span
        parts.append(
            f'<text x="{left - 6}" y="{y + 12}" text-anchor="end" font-size="{font}" '
            f'font-family="{MONO}">{html.escape(name)}</text>'
        )
        parts.append(f'<rect x="{left}" y="{y + 2}" width="{width:.1f}" height="{row - 6}" fill="#3b7dd8"/>')
        parts.append(f'<text x="{left + width + 4:.1f}" y="{y + 12}" font-size="11">{value:.4f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _label(value: float | str) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def legend(names: Sequence[str]) -> str:
    """The colour of each class, as the tree's bars and the curves use them."""
    items = "".join(
        f'<span class="key"><i style="background:{_colour(k)}"></i>{_e(name)}</span>' for k, name in enumerate(names)
    )
    return f'<p class="legend">{items}</p>'


def _colour(k: int) -> str:
    return PALETTE[k % len(PALETTE)]


def _turned_labels(names: list[str], xs: list[float], y: int, font: int) -> list[str]:
    """Level names under their points, turned 30° so long names do not overlap."""
    return [
        f'<text x="{x:.1f}" y="{y}" font-size="{font}" font-family="{MONO}" text-anchor="end" '
        f'transform="rotate(-30 {x:.1f} {y})">{html.escape(name)}</text>'
        for name, x in zip(names, xs, strict=True)
    ]


def line_chart(curve: Curve, colours: dict[str, str]) -> str:
    """One line per class (points for a categorical feature, whose levels have no order)
    over the feature's grid; axes labelled, every label inside the drawing."""
    plot_w, font = 312, 10
    categories = isinstance(curve.grid[0], str)
    names = [_short(visible(_label(g)), 28) for g in curve.grid] if categories else []
    low = min(min(v) for v in curve.series.values())
    high = max(max(v) for v in curve.series.values())
    if curve.measure.startswith("P("):  # probabilities: the whole 0–1 scale, so curves compare
        low, high = 0.0, 1.0
    spread = (high - low) or 1.0
    n = len(curve.grid)
    band = plot_w / n if categories else 0.0
    # turned 30° the longest level name reaches half its width below the axis and 0.87 of
    # it to the left of its point: the margins make room for both
    longest = max((_text_width(name, font) for name in names), default=0.0)
    left, right, top, plot_h = max(52, int(longest * 0.87 - band / 2) + 8), 16, 28, 158
    bottom = 44 + (int(longest * 0.5) if categories else 0)
    width, height = left + plot_w + right, top + plot_h + bottom

    def x_at(k: int) -> float:
        return left + band * (k + 0.5) if categories else left + plot_w * (k / max(n - 1, 1))

    def y_at(v: float) -> float:
        return top + plot_h * (1 - (v - low) / spread)

    parts = [
        f'<svg class="chart" width="{width}" height="{height}" role="img" aria-label="partial dependence on '
        f'{_e(curve.feature)}">',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#888"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#888"/>',
    ]
    for v in (low, (low + high) / 2, high):
        parts.append(f'<text x="{left - 4}" y="{y_at(v) + 4:.1f}" font-size="{font}" text-anchor="end">{v:.3g}</text>')
    for name, values in curve.series.items():
        colour = colours.get(name, PALETTE[0])
        points = [(x_at(k), y_at(v)) for k, v in enumerate(values)]
        if categories:
            parts.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>' for x, y in points)
        else:
            line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{line}"/>')
    axis_y = top + plot_h + 14
    if categories:
        parts.extend(_turned_labels(names, [x_at(k) for k in range(n)], axis_y, font))
    else:
        first, last = _label(curve.grid[0]), _label(curve.grid[-1])
        parts.append(f'<text x="{left}" y="{axis_y}" font-size="{font}">{_e(first)}</text>')
        parts.append(f'<text x="{left + plot_w}" y="{axis_y}" font-size="{font}" text-anchor="end">{_e(last)}</text>')
    feature = _short(visible(curve.feature), 40)
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 6}" font-size="11" text-anchor="middle">'
        f"{html.escape(feature)}</text>"
    )
    parts.append(f'<text x="{left}" y="16" font-size="12">{_e(curve.measure)} by {html.escape(feature)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def scatter(xs: np.ndarray, ys: np.ndarray, *, title: str, x_label: str, y_label: str, diagonal: bool) -> str:
    """Points of (x, y), with the line y = x (``diagonal``) or y = 0 through them."""
    size, left, top, font = 300, 56, 28, 10
    width, height = left + size + 16, top + size + 40
    both = np.concatenate([xs, ys]) if diagonal else xs
    x_low, x_high = float(both.min()), float(both.max())
    y_low, y_high = (x_low, x_high) if diagonal else (min(float(ys.min()), 0.0), max(float(ys.max()), 0.0))
    x_span, y_span = (x_high - x_low) or 1.0, (y_high - y_low) or 1.0

    def at(x: float, y: float) -> tuple[float, float]:
        return left + size * (x - x_low) / x_span, top + size * (1 - (y - y_low) / y_span)

    parts = [
        f'<svg class="chart" width="{width}" height="{height}" role="img" aria-label="{_e(title)}">',
        f'<text x="{left}" y="16" font-size="12">{_e(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{size}" height="{size}" fill="none" stroke="#888"/>',
    ]
    (x0, y0), (x1, y1) = (at(x_low, x_low), at(x_high, x_high)) if diagonal else (at(x_low, 0), at(x_high, 0))
    parts.append(f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="#e15759"/>')
    dots = (at(float(x), float(y)) for x, y in zip(xs, ys, strict=True))
    parts.extend(
        f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="1.8" fill="{PALETTE[0]}" fill-opacity="0.5"/>' for cx, cy in dots
    )
    for v in (y_low, y_high):
        parts.append(
            f'<text x="{left - 4}" y="{at(x_low, v)[1] + 4:.1f}" font-size="{font}" text-anchor="end">{v:.4g}</text>'
        )
    for v, anchor in ((x_low, "start"), (x_high, "end")):
        parts.append(
            f'<text x="{at(v, y_low)[0]:.1f}" y="{top + size + 14}" font-size="{font}" '
            f'text-anchor="{anchor}">{v:.4g}</text>'
        )
    parts.append(
        f'<text x="{left + size / 2}" y="{height - 6}" font-size="11" text-anchor="middle">{_e(x_label)}</text>'
        f'<text x="12" y="{top + size / 2}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + size / 2})">{_e(y_label)}</text></svg>'
    )
    return "".join(parts)


def _text_width(text: str, font: float) -> float:
    """The width ``text`` takes in a monospace face: wide (East Asian) characters take two cells."""
    cells = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return cells * font * CHAR


@dataclass
class _Box:
    """One node drawn: its lines of text, its class shares and where it sits."""

    lines: list[str]
    shares: list[float]
    width: float
    height: float
    span: float = 0.0  # the width its drawn subtree takes
    x: float = 0.0
    y: float = 0.0


def _node_lines(tree: Tree, node: int, test: str, cut: bool) -> tuple[list[str], list[float]]:
    """What a node's box says: the test that led to it (in full, wrapped), its rows and
    its prediction, and the class shares its bar shows."""
    nodes = tree.nodes
    value = nodes.value[node]
    rows = f"{float(nodes.n_samples[node]):g} rows"
    lines = textwrap.wrap(visible(test), WRAP, break_on_hyphens=False) or [""]
    if tree.regression:
        lines.append(f"{rows} · mean {float(value[0]):.4g}")
        shares: list[float] = []
    else:
        shares = _shares(value)
        best = int(value.argmax())
        lines.extend(textwrap.wrap(f"{rows} · {visible(str(tree.classes[best]))} {shares[best]:.2f}", WRAP))
    if cut:
        lines.append(f"+ {_leaves_below(tree, node)} leaves below")
    return lines, shares


def _shares(value: np.ndarray) -> list[float]:
    """A node's class weights as shares of their sum."""
    total = float(value.sum()) or 1.0
    return [float(v) / total for v in value]


def _leaves_below(tree: Tree, node: int) -> int:
    nodes, count, stack = tree.nodes, 0, [node]
    while stack:
        at = stack.pop()
        if nodes.feature[at] < 0:
            count += 1
        else:
            stack.extend((int(nodes.left[at]), int(nodes.right[at])))
    return count


def _tests(tree: Tree, node: int, units: Mapping[str, Unit]) -> tuple[str, str]:
    """The tests a row passes to go left and right from ``node`` (``units``: the tree's
    date columns, :func:`rulecli.model.core.schema_units`)."""
    column = tree.features[int(tree.nodes.feature[node])]
    return tuple(  # type: ignore[return-value]
        render_condition(single_test(tree.nodes, node, column, to_left=side, units=units)) for side in (True, False)
    )


@dataclass
class _Layout:
    boxes: dict[int, _Box]
    children: dict[int, tuple[int, int]]
    order: list[int]  # breadth first
    depth: dict[int, int]
    levels: int


def _layout(tree: Tree, levels: int) -> _Layout:
    """Boxes for the first ``levels`` levels. Each subtree takes its own stretch of the
    width, as wide as its widest level, so no two boxes overlap and no edge crosses a box."""
    nodes, units = tree.nodes, schema_units(tree.info.schema)
    boxes: dict[int, _Box] = {}
    children: dict[int, tuple[int, int]] = {}
    depth, order, tests = {0: 0}, [0], {0: "all rows"}
    for node in order:  # breadth first: ``order`` grows as it is read
        inner = nodes.feature[node] >= 0
        lines, shares = _node_lines(tree, node, tests[node], cut=inner and depth[node] == levels - 1)
        width = max(110.0, max(_text_width(line, _FONT) for line in lines) + 2 * _PAD)
        height = _PAD + _LINE * len(lines) + (_BAR_H + 6 if shares else 0) + _PAD / 2
        boxes[node] = _Box(lines, shares, width, height)
        if inner and depth[node] < levels - 1:
            left, right = int(nodes.left[node]), int(nodes.right[node])
            children[node] = (left, right)
            tests[left], tests[right] = _tests(tree, node, units)
            for child in (left, right):
                depth[child] = depth[node] + 1
                order.append(child)
    for node in reversed(order):  # children before parents
        box = boxes[node]
        box.span = box.width
        if node in children:
            left, right = children[node]
            box.span = max(box.width, boxes[left].span + _GAP_X + boxes[right].span)
    drawn = max(depth.values()) + 1
    level_h = [max(boxes[n].height for n in order if depth[n] == d) for d in range(drawn)]
    level_y = [_GAP_Y / 2 + sum(level_h[:d]) + _GAP_Y * d for d in range(drawn)]
    starts = {0: float(_GAP_X)}
    for node in order:  # parents before children: each gets the start of its stretch
        box = boxes[node]
        box.y = level_y[depth[node]]
        box.x = starts[node] + (box.span - box.width) / 2
        if node in children:
            left, right = children[node]
            inner_span = boxes[left].span + _GAP_X + boxes[right].span
            starts[left] = starts[node] + (box.span - inner_span) / 2
            starts[right] = starts[left] + boxes[left].span + _GAP_X
    return _Layout(boxes, children, order, depth, drawn)


def tree_drawing(tree: Tree) -> tuple[str, int | None]:
    """The tree's first levels, as many as fit ``TREE_WIDTH`` (at least two), each box
    with the test that leads to it in full, its rows, prediction and class shares; and
    the number of levels drawn if they are not the whole tree."""
    layout = _layout(tree, TREE_DEPTH)
    while layout.boxes[0].span > TREE_WIDTH and layout.levels > 2:
        layout = _layout(tree, layout.levels - 1)
    boxes = layout.boxes
    width = int(boxes[0].span + 2 * _GAP_X)
    height = int(max(b.y + b.height for b in boxes.values()) + _GAP_Y / 2)
    parts = [
        f'<svg class="chart tree" width="{width}" height="{height}" role="img" aria-label="the tree" '
        f'font-family="{MONO}" font-size="{_FONT}">'
    ]
    for node, pair in layout.children.items():
        box = boxes[node]
        for child in pair:
            to = boxes[child]
            parts.append(
                f'<line x1="{box.x + box.width / 2:.1f}" y1="{box.y + box.height:.1f}" '
                f'x2="{to.x + to.width / 2:.1f}" y2="{to.y:.1f}" stroke="#999"/>'
            )
    parts.extend(_box_svg(boxes[node], leaf=tree.nodes.feature[node] < 0) for node in layout.order)
    parts.append("</svg>")
    whole = all(tree.nodes.feature[n] < 0 or n in layout.children for n in layout.order)
    return "".join(parts), None if whole else layout.levels


def _box_svg(box: _Box, *, leaf: bool) -> str:
    fill = "#e8f3e8" if leaf else "#f4f7fb"
    parts = [
        f'<g class="node"><rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" height="{box.height:.1f}" '
        f'rx="4" fill="{fill}" stroke="#889"/>'
    ]
    for k, line in enumerate(box.lines):
        parts.append(
            f'<text x="{box.x + _PAD:.1f}" y="{box.y + _PAD + _LINE * k + _FONT - 1:.1f}">{html.escape(line)}</text>'
        )
    if box.shares:
        x, y, span = box.x + _PAD, box.y + _PAD + _LINE * len(box.lines) + 2, box.width - 2 * _PAD
        for k, share in enumerate(box.shares):
            if share > 0:
                parts.append(
                    f'<rect x="{x:.1f}" y="{y:.1f}" width="{share * span:.1f}" height="{_BAR_H}" fill="{_colour(k)}"/>'
                )
                x += share * span
    parts.append("</g>")
    return "".join(parts)


def tree_outline(tree: Tree) -> str:
    """The whole tree as nested, collapsible lists (HTML's own details elements, no
    script): each node's test, rows, class shares and prediction; the first levels open."""
    nodes, units = tree.nodes, schema_units(tree.info.schema)
    parts: list[str] = []
    stack: list[tuple[int, str, int] | None] = [(0, "all rows", 0)]
    listed = 0
    while stack:
        item = stack.pop()
        if item is None:  # the end of an inner node's list
            parts.append("</details>")
            continue
        if listed == OUTLINE_NODES:
            parts.append(
                f'<p class="none">… the outline stops at {OUTLINE_NODES} nodes; rulecli show prints them all.</p>'
            )
            break
        listed += 1
        node, test, depth = item
        line = _outline_line(tree, node, test)
        if nodes.feature[node] < 0:
            parts.append(f'<div class="leaf">{line}</div>')
            continue
        parts.append(f"<details{' open' if depth < OUTLINE_OPEN else ''}><summary>{line}</summary>")
        left_test, right_test = _tests(tree, node, units)
        stack.append(None)
        stack.append((int(nodes.right[node]), right_test, depth + 1))
        stack.append((int(nodes.left[node]), left_test, depth + 1))
    while stack:  # close what the cap left open
        if stack.pop() is None:
            parts.append("</details>")
    return f'<div class="outline">{"".join(parts)}</div>'


def _outline_line(tree: Tree, node: int, test: str) -> str:
    nodes = tree.nodes
    value = nodes.value[node]
    rows = f"{float(nodes.n_samples[node]):g} rows"
    head = f'<span class="test">{_e(test)}</span> · {rows}'
    if tree.regression:
        return f"{head} · mean {float(value[0]):.4g}"
    shares = _shares(value)
    title = ", ".join(f"{visible(str(c))} {v:g}" for c, v in zip(tree.classes, value.tolist(), strict=True))
    cells = "".join(
        f'<i style="width:{100 * share:.1f}%;background:{_colour(k)}"></i>'
        for k, share in enumerate(shares)
        if share > 0
    )
    best = int(value.argmax())
    arrow = "→ " if nodes.feature[node] < 0 else ""
    return (
        f'{head} <span class="dist" title="{html.escape(title, quote=True)}">{cells}</span> '
        f"{arrow}{_e(tree.classes[best])} {shares[best]:.2f}"
    )


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
.chart { vertical-align: top; margin: 0 12px 12px 0; }
.scroll { overflow: auto; max-height: 90vh; border: 1px solid #eee; }
.legend .key { margin-right: 14px; white-space: nowrap; }
.legend i { display: inline-block; width: 11px; height: 11px; margin-right: 4px; vertical-align: -1px; }
.outline { font-size: 12px; font-family: ui-monospace, monospace; }
.outline details, .outline .leaf { margin-left: 18px; }
.outline > details { margin-left: 0; }
.outline summary { cursor: pointer; }
.outline .leaf { padding-left: 14px; color: #264; }
.dist { display: inline-flex; width: 80px; height: 9px; background: #eee; overflow: hidden; }
.dist i { flex: none; height: 100%; }
"""


def render(
    model: Any,
    payload: dict[str, Any],
    *,
    model_label: str,
    data_label: str,
    importance: dict[str, float] | None = None,
    curves: Sequence[Curve] = (),
    points: tuple[np.ndarray, np.ndarray] | None = None,
) -> str:
    """The page, from ``evaluate``'s payload (with ``baseline`` when asked for) and the model;
    ``points``: a number's truth and prediction on (some of) the rows, for the plots."""
    kind = (
        "list of rules with formulas"
        if isinstance(model, RuleRegression)
        else f"committee of {len(model.members)} lists of rules with formulas, averaged"
        if isinstance(model, Committee)
        else model.kind.replace("_", " ")
    )
    algorithm = model.info.algorithm
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>rulecli report: {_e(model_label)} on {_e(data_label)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_e(model_label)} on {_e(data_label)}</h1>",
        f"<p>A {_e(kind)} ({_e(algorithm)}) for <b>{_e(model.target)}</b>; {payload['rows']} rows scored.</p>",
    ]
    parts += _measured(model, payload, data_label, points)
    if payload.get("rules"):
        parts.append("<h2>Rules on this data</h2>" + _rules_table(payload["rules"]))
    if "rmse" not in payload:
        parts.append("<h2>Per class</h2>" + _per_class(payload))
        confusion = payload["confusion"]
        parts.append("<h2>Confusion matrix</h2><p>Rows: truth; columns: prediction; shade: share of the row.</p>")
        parts.append(heat_map(confusion["labels"], confusion["matrix"]))
    if isinstance(model, Tree):
        parts.extend(_tree_sections(model))
    if isinstance(model, Forest) and importance:
        parts.append("<h2>Feature importance (mean impurity decrease)</h2>" + horizontal_bars(importance, "importance"))
    if curves:
        parts.extend(_dependence_section(curves))
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


def _measured(
    model: Any, payload: dict[str, Any], data_label: str, points: tuple[np.ndarray, np.ndarray] | None
) -> list[str]:
    """The metrics, a forest's out-of-bag figure, a number's plots and rules with formulas."""
    parts = [f"<h2>On {_e(data_label)}</h2>"]
    if "rmse" in payload:
        parts.append(_metrics_table(payload, ("rows", "mae", "rmse", "r2", "mean_truth")))
    else:
        parts.append(_metrics_table(payload, ("accuracy", "balanced_accuracy", "macro_f1", "kappa", "coverage")))
    if isinstance(model, Forest):
        parts.append(_out_of_bag(model))
    if points is not None and points[0].size:
        truth, predicted = points
        parts.append(
            f"<h2>Predictions against the truth</h2><p>{counted(truth.size, 'row')} of the data; the red line "
            "is a perfect prediction (left) and no error (right).</p>"
        )
        parts.append(
            scatter(
                truth, predicted, title="predicted against actual", x_label="actual", y_label="predicted", diagonal=True
            )
        )
        parts.append(
            scatter(
                predicted,
                truth - predicted,
                title="residuals",
                x_label="predicted",
                y_label="actual − predicted",
                diagonal=False,
            )
        )
    if isinstance(model, RuleRegression):
        parts.append("<h2>The rules</h2>" + _formula_table(model))
    if isinstance(model, Committee):
        parts += [
            f"<h2>The rules: list {m} of {len(model.members)}</h2>" + _formula_table(member)
            for m, member in enumerate(model.members, 1)
        ]
    return parts


def _tree_sections(model: Tree) -> list[str]:
    """The tree's first levels drawn, then the whole tree as an outline that folds."""
    drawing, levels = tree_drawing(model)
    parts = [
        "<h2>The tree</h2>" if levels is None else f"<h2>The tree (first {levels} levels)</h2>",
        "<p>Each box: the test that leads to it, its training rows, the class it predicts "
        "with that class's share, and a bar of all the classes' shares.</p>",
    ]
    if not model.regression:
        parts.append(legend([str(c) for c in model.classes]))
    parts.append(f"<div class=scroll>{drawing}</div>")
    parts.append(
        f"<h2>The whole tree ({counted(_leaves_below(model, 0), 'leaf')})</h2><p>Click a test to fold "
        "or unfold its subtree; hover a bar for the class counts.</p>" + tree_outline(model)
    )
    return parts


def _dependence_section(curves: Sequence[Curve]) -> list[str]:
    parts = [
        "<h2>Partial dependence</h2><p>The mean prediction over the table's rows with the feature set "
        "to each value: one line (or, for a categorical feature, one set of points) per class.</p>"
    ]
    names = list(curves[0].series)
    colours = {name: _colour(k) for k, name in enumerate(names)}
    if len(names) > 1:
        parts.append(legend(names))
    parts.append("".join(line_chart(c, colours) for c in curves))
    return parts


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


def _formula_table(model: RuleRegression) -> str:
    """Each rule's conditions and formula with its training figures (the first that matches decides,
    or the matching ones are averaged)."""
    head = "<tr><th>rule</th><th>IF</th><th>THEN</th><th>covers</th><th>mean</th><th>rmse</th></tr>"
    rows = [*((str(i), r) for i, r in enumerate(model.rules, 1)), ("else", model.default)]

    def figures(rule: NumberRule) -> str:
        if rule.stats is None:
            return "<td></td><td></td><td></td>"
        stats = rule.stats
        cells = (_e(stats.covered), f"{stats.mean:.4g}", f"{stats.rmse:.4g}")
        return "".join(f"<td class=num>{c}</td>" for c in cells)

    body = "".join(
        f"<tr><td class=num>{label}</td><td class=rule>{_e(render_conditions(r.conditions) if r.conditions else '')}"
        f"</td><td class=rule>{_e(model.target)} = {_e(render_formula(r.formula))}</td>{figures(r)}</tr>"
        for label, r in rows
    )
    return f'<table class="rules">{head}{body}</table>'


def _interval(row: dict[str, Any]) -> str:
    bounds = row.get("accuracy_interval")
    return f"{bounds[0]:.3f} – {bounds[1]:.3f}" if bounds else ""


def _number_drift_table(drift: dict[str, Any], p: Any) -> str:
    """Rules with formulas: coverage, their rows' mean and their error, training against here."""

    def figure(value: float | None) -> str:
        return "—" if value is None else f"{value:.4g}"

    head = (
        "<tr><th>rule</th><th>IF</th><th>coverage: training</th><th>here</th><th>p</th><th>mean: training</th>"
        "<th>here</th><th>p</th><th>rmse: training</th><th>here</th><th>p</th><th></th></tr>"
    )
    body = "".join(
        f"<tr><td class=num>{_e(r['rule'])}</td><td class=rule>{_e(r['conditions'])}</td>"
        f"<td>{bar(r['train_coverage'])}</td><td>{bar(r['coverage'])}</td><td class=num>{p(r['coverage_p'])}</td>"
        + "".join(
            f"<td class=num>{figure(r[f'train_{k}'])}</td><td class=num>{figure(r[k])}</td>"
            f"<td class=num>{p(r[f'{k}_p'])}</td>"
            for k in ("mean", "rmse")
        )
        + f"<td class=drifted>{'drifted' if r['drifted'] else ''}</td></tr>"
        for r in drift["rules"]
    )
    return f'<table class="drift">{head}{body}</table>'


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

    if drift["rules"] and "rmse" in drift["rules"][0]:
        return _number_drift_table(drift, p)

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
