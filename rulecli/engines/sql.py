"""The engines' counting queries as SQL text, for any dialect the exports write.

Every name and value reaches the SQL through the dialect's quoting (``sql_text``), the
same that exported models use: nothing a table holds becomes code. Numbers are written
as ``repr`` doubles, so the engine compares exactly the values rulecli's arrays hold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rulecli.engines import Bins, Frontier, Split
from rulecli.model.languages import SqlText, sql_text
from rulecli.schema import Feature, Kind
from rulecli.stats import HASH_PRIME, HASH_STEPS, POISSON_CUTS, hash_seed

# A number's deviation from its centre is counted in whole units, the greatest deviation at
# most 2**FIXED_BITS of them: whole numbers add up exactly in any order, where an engine's
# sums of doubles change in their last bits with the order its threads add the rows in (a
# regression tree on a million rows came out different from one run to the next). 29 bits
# keep a square times a row's draws in a bootstrap (at most 12) within a BIGINT; a unit is
# under 2e-9 of the target's range.
FIXED_BITS = 29
assert len(POISSON_CUTS) * 4.0**FIXED_BITS < 2.0**63


def column(dialect: str, feature: Feature) -> str:
    """A feature as rulecli reads it: a double with NaN as NULL (a date as its days or
    seconds since 1970-01-01), or text."""
    return sql_text(dialect).column(feature.name, feature.unit or feature.kind == Kind.NUMERIC)


def bin_code(dialect: str, feature: Feature, j: int, bins: Bins) -> str:
    """Each row's bin of feature ``j`` (the missing code ``n_bins[j]`` for missing values and,
    for a categorical feature, for levels the schema does not list)."""
    sql = sql_text(dialect)
    x = column(dialect, feature)
    if bins.categorical[j]:
        return _level_code(sql, x, bins.levels[j])
    cuts = bins.edges[j]
    if bins.whole_range and bins.whole_range[j] is not None:
        low, high = bins.whole_range[j]
        table = np.searchsorted(cuts, np.arange(low, high + 1), side="right")
        found = element(dialect, ", ".join(map(str, table.tolist())), f"CAST({x} AS BIGINT) - {low}")
        return f"CASE WHEN {x} IS NULL THEN {bins.n_bins[j]} ELSE {found} END"
    return _interval_code(sql, x, cuts, "<")


def cell_code(dialect: str, feature: Feature, edges: Sequence[float], right_closed: bool) -> str:
    """Each row's cell of a feature as :mod:`rulecli.counting.cells` numbers them: a level's
    code, or the interval (``rulecli.discretize.interval_codes``: values on an edge belong to
    the interval it closes), then one more code for missing values."""
    sql = sql_text(dialect)
    x = column(dialect, feature)
    if feature.kind == Kind.CATEGORICAL:
        return _level_code(sql, x, feature.levels)
    return _interval_code(sql, x, edges, "<=" if right_closed else "<")


def _level_code(sql: SqlText, x: str, levels: Sequence[str]) -> str:
    """A level's position; ``len(levels)`` for missing values and levels not listed."""
    return f"CASE {x} {_whens(sql, levels)} ELSE {len(levels)} END"


def _whens(sql: SqlText, levels: Sequence[str]) -> str:
    return " ".join(f"WHEN {sql.literal(level)} THEN {i}" for i, level in enumerate(levels))


def _interval_code(sql: SqlText, x: str, edges: Sequence[float], below: str) -> str:
    """The number of edges a value is not ``below`` (a binary search of nested CASEs, as deep
    as log2 of the edges); ``len(edges) + 1`` for missing values."""

    def search(low: int, high: int) -> str:
        if low == high:
            return str(low)
        mid = (low + high) // 2
        return (
            f"CASE WHEN {x} {below} {sql.literal(float(edges[mid]))} THEN {search(low, mid)} "
            f"ELSE {search(mid + 1, high)} END"
        )

    return f"CASE WHEN {x} IS NULL THEN {len(edges) + 1} ELSE {search(0, len(edges))} END"


def class_code(dialect: str, name: str, classes: Sequence[str]) -> str:
    sql = sql_text(dialect)
    return f"CASE {sql.column(name, False)} {_whens(sql, classes)} END"


def frontier_slot(frontier: Frontier, codes: Sequence[str], n_bins: Sequence[int]) -> str:
    """Each row's slot in ``frontier`` (-1: a leaf no longer grown) as nested CASEs over
    the rows' bin ``codes`` (one SQL expression per feature; ``n_bins[j]`` is missing)."""

    def goes_left(node: Split) -> str:
        b = codes[node.feature]
        if node.last_left >= 0:
            test = f"{b} <= {node.last_left}"
            return f"({test} OR {b} = {n_bins[node.feature]})" if node.missing_left else test
        left = f"{b} IN ({', '.join(map(str, node.left_codes))})" if node.left_codes else "FALSE"
        if not node.missing_left:
            return left
        # missing values and levels the node did not see go left with the left levels
        return f"{b} NOT IN ({', '.join(map(str, node.right_codes))})" if node.right_codes else "TRUE"

    def walk(i: int) -> str | None:
        """Node ``i``'s slot expression, or None where no slot lies below it: such a subtree
        is -1 whatever its tests (a deep tree's last passes count a few nodes, and testing
        every row down thousands of finished splits took 15 s a pass at a million rows)."""
        node = frontier.nodes[i]
        if not isinstance(node, Split):
            return str(node) if node >= 0 else None
        left, right = walk(node.left), walk(node.right)
        if left is None and right is None:
            return None
        return f"CASE WHEN {goes_left(node)} THEN {left or '-1'} ELSE {right or '-1'} END"

    return walk(0) or "-1"


def unit_scale(deviation: float) -> float:
    """Units per unit of the target: the power of two (exact to multiply by) that puts a
    deviation of at most ``deviation`` within ``2**FIXED_BITS`` units."""
    exponent = math.frexp(deviation)[1] if deviation > 0 else 0  # deviation < 2**exponent
    return math.ldexp(1.0, FIXED_BITS - exponent)


def units(value_sql: str, scale: str) -> str:
    """A double as the nearest whole number of units (``scale`` a literal: units per unit)."""
    return f"CAST(ROUND(({value_sql}) * {scale}) AS BIGINT)"


def exact_sum(whole_sql: str) -> str:
    """The sum of a BIGINT expression as a 38-digit decimal: exact, whatever the order."""
    return f"sum(CAST({whole_sql} AS DECIMAL(38, 0)))"


def exact_square_sum(whole_sql: str) -> str:
    """The sum of the squares of a BIGINT expression, squared as decimals (a square of any
    BIGINT fits): exact, whatever the order."""
    x = f"CAST({whole_sql} AS DECIMAL(38, 0))"
    return f"sum({x} * {x})"


def row_hash(id_sql: str, seed: int) -> str:
    """``rulecli.stats.row_hash`` in SQL (BIGINT arithmetic; every product below 2^62)."""
    h = f"(({id_sql}) + {hash_seed(seed)}) % {HASH_PRIME}"
    for i, (a, c) in enumerate(HASH_STEPS):
        h = f"(({h}) * {a} + {c}) % {HASH_PRIME}"
        if i == 0:
            h = f"(({h}) * ({h})) % {HASH_PRIME}"
    return h


def bag_hash(id_sql: str, key: tuple[int, int]) -> str:
    """``rulecli.stats.bag_hash`` in SQL."""
    salt, multiplier = key
    return row_hash(f"(({id_sql}) % {HASH_PRIME}) * {multiplier} % {HASH_PRIME}", salt)


def undrawn(hash_sql: str) -> str:
    """True where the row whose bag hash is ``hash_sql`` is not drawn into the bag (out of bag)."""
    return f"{hash_sql} < {POISSON_CUTS[0]}"


def poisson_draws(hash_sql: str) -> str:
    """``rulecli.stats.poisson_draws`` of a row whose bag hash is ``hash_sql`` (a column:
    the CASE reads it once per cut it passes)."""
    whens = " ".join(f"WHEN {hash_sql} < {cut} THEN {k}" for k, cut in enumerate(POISSON_CUTS))
    return f"CASE {whens} ELSE {len(POISSON_CUTS)} END"


def bit_word(dialect: str, row: str) -> str:
    """The 32-bit word holding row number ``row``'s bit."""
    return f"div({row}, 32)" if dialect == "spark" else f"({row} // 32)"


def bit_value(dialect: str, row: str) -> str:
    """Row ``row``'s bit within its word, as a BIGINT (32-bit words: no sign bit is set)."""
    if dialect == "spark":
        return f"shiftleft(CAST(1 AS BIGINT), CAST({row} % 32 AS INT))"
    return f"(CAST(1 AS BIGINT) << CAST({row} % 32 AS BIGINT))"


def bit_of(dialect: str, word: str, row: str) -> str:
    """Row ``row``'s bit (0 or 1) of ``word``."""
    if dialect == "spark":
        return f"(shiftright({word}, CAST({row} % 32 AS INT)) & 1)"
    return f"(({word} >> CAST({row} % 32 AS BIGINT)) & 1)"


def element(dialect: str, listed: str, index: str) -> str:
    """The element at 0-based ``index`` of the literal list ``listed``."""
    if dialect == "spark":
        return f"element_at(array({listed}), CAST({index} AS INT) + 1)"
    return f"[{listed}][{index} + 1]"


def float_list(values: np.ndarray) -> str:
    return ", ".join(repr(float(v)) for v in values)
