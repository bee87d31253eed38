"""How a condition is written in each language a model is exported to, and the SQL dialects.

One condition in SQL, Python or Polars keeps rulecli's semantics of missing values (a
missing value satisfies no test but ``is missing`` and tests marked ``or missing``); the
operators' spellings come from :data:`~rulecli.model.ops.OPS`. :class:`SqlText` is a SQL
dialect's identifiers, literals and typed columns, shared by the exports
(:mod:`rulecli.model.export`) and the engines' counting queries, which count a rule's rows
with :func:`rule_tests`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rulecli.model.core import Closed, Condition, Model, Op
from rulecli.model.ops import OPS, Shape, column_kinds, ends
from rulecli.schema import Unit

# ------------------------------------------------------------------- one condition


class Language(Protocol):
    """How one target language writes the parts of a condition on ``x`` (a column
    expression or variable); the operators' spellings come from :data:`OPS`."""

    name: str  # the OpSpec field with this language's spelling

    def compare(self, x: str, word: str, value: str | float) -> str: ...
    def members(self, x: str, word: str, values: tuple[str | float, ...], negated: bool) -> str: ...
    def interval(self, x: str, low: float, high: float, closed: Closed) -> str: ...
    def guard(self, x: str, test: str, or_missing: bool) -> str: ...


def condition_source(lang: Language, cond: Condition, x: str) -> str:
    """``cond`` as source text in ``lang``, with rulecli's missing-value semantics."""
    spec = OPS[cond.op]
    word = getattr(spec, lang.name)
    if spec.shape == Shape.MISSING:
        return f"{x}.{word}()" if lang.name == "polars" else f"{x} {word}"
    if spec.shape == Shape.SET:
        assert isinstance(cond.value, tuple)
        test = lang.members(x, word, cond.value, spec.negated)
    elif spec.shape == Shape.INTERVAL:
        assert isinstance(cond.value, tuple)
        low, high = cond.value
        assert isinstance(low, float) and isinstance(high, float)
        test = lang.interval(x, low, high, Closed(cond.closed))
    else:
        assert cond.value is not None and not isinstance(cond.value, tuple)
        test = lang.compare(x, word, cond.value)
    return lang.guard(x, test, cond.or_missing)


# ----------------------------------------------------------------------------- SQL


@dataclass(frozen=True)
class SqlText:
    dialect: str
    name: str = "sql"

    def ident(self, name: str) -> str:
        if self.dialect == "spark":
            return "`" + name.replace("`", "``") + "`"
        return '"' + name.replace('"', '""') + '"'

    @property
    def double(self) -> str:
        return {"postgres": "DOUBLE PRECISION", "sqlite": "REAL"}.get(self.dialect, "DOUBLE")

    @property
    def text(self) -> str:
        return {"duckdb": "VARCHAR", "postgres": "TEXT", "spark": "STRING", "sqlite": "TEXT"}[self.dialect]

    def greatest(self, parts: list[str]) -> str:
        # SQLite's MAX and MIN of several arguments are GREATEST and LEAST
        return f"{'MAX' if self.dialect == 'sqlite' else 'GREATEST'}({', '.join(parts)})"

    def least(self, parts: list[str]) -> str:
        return f"{'MIN' if self.dialect == 'sqlite' else 'LEAST'}({', '.join(parts)})"

    def column(self, name: str, numeric: bool | Unit) -> str:
        if isinstance(numeric, Unit):
            return self._moment(self.ident(name), numeric)
        if numeric and self.dialect == "sqlite":
            # SQLite stores NaN as NULL; a CSV imported into it leaves '' where a value is
            # missing, which CAST would read as 0
            return f"CAST(NULLIF({self.ident(name)}, '') AS REAL)"
        if numeric:
            # NaN is missing, as in rulecli (SQL engines order NaN above every number)
            return f"NULLIF(CAST({self.ident(name)} AS {self.double}), CAST('NaN' AS {self.double}))"
        if self.dialect == "spark":
            # Spark's readers type only true/false as booleans, and CAST gives 'true' as rulecli does
            return f"CAST({self.ident(name)} AS {self.text})"
        # Bare: the literal is cast to the column's type. A reader that types Yes/No, T/F or
        # true/false as BOOLEAN (DuckDB's read_csv, PostgreSQL's boolean input) still compares
        # right (CAST would give 'true' against 'Yes'); a value the type cannot hold fails loudly.
        return self.ident(name)

    def _moment(self, x: str, unit: Unit) -> str:
        """A date column (text or a date type) as the days, or seconds, since 1970-01-01
        its rules compare; a value that is no date is missing (TRY_CAST; PostgreSQL fails)."""
        if self.dialect == "sqlite":  # dates as text: julianday and strftime give NULL for a value that is no date
            if unit == Unit.DATE:
                return f"(julianday(date({x})) - 2440587.5)"
            return f"CAST(strftime('%s', {x}) AS REAL)"
        if unit == Unit.DATE:
            if self.dialect == "spark":
                return f"CAST(datediff(TRY_CAST({x} AS DATE), DATE '1970-01-01') AS DOUBLE)"
            cast = "CAST" if self.dialect == "postgres" else "TRY_CAST"
            return f"CAST({cast}({x} AS DATE) - DATE '1970-01-01' AS {self.double})"
        if self.dialect == "duckdb":
            return f"CAST(floor(epoch(TRY_CAST({x} AS TIMESTAMP))) AS DOUBLE)"
        if self.dialect == "postgres":
            return f"CAST(floor(EXTRACT(EPOCH FROM CAST({x} AS TIMESTAMP))) AS DOUBLE PRECISION)"
        # Spark's timestamps are in the session's time zone: a difference of two is in none
        return (
            f"CAST(unix_timestamp(TRY_CAST({x} AS TIMESTAMP)) - unix_timestamp(TIMESTAMP '1970-01-01 00:00:00') "
            "AS DOUBLE)"
        )

    def literal(self, value: str | float) -> str:
        if isinstance(value, str):
            if self.dialect == "spark":
                # Spark SQL reads a backslash as an escape and '' as two adjacent literals
                return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
            # standard SQL strings (DuckDB, SQLite; PostgreSQL with standard_conforming_strings, its default)
            return "'" + value.replace("'", "''") + "'"
        text = repr(float(value))
        # an exponent makes the literal a double in every dialect (42.35 alone is a DECIMAL)
        return text if "e" in text else f"{text}e0"

    def members(self, x: str, word: str, values: tuple[str | float, ...], negated: bool) -> str:
        return f"{x} {word} ({', '.join(self.literal(v) for v in values)})"

    def compare(self, x: str, word: str, value: str | float) -> str:
        return f"{x} {word} {self.literal(value)}"

    def interval(self, x: str, low: float, high: float, closed: Closed) -> str:
        with_low, with_high = ends(closed)
        above, below = OPS[Op.GE if with_low else Op.GT].sql, OPS[Op.LE if with_high else Op.LT].sql
        return f"({x} {above} {self.literal(low)} AND {x} {below} {self.literal(high)})"

    def guard(self, x: str, test: str, or_missing: bool) -> str:
        return f"({test} OR {x} {OPS[Op.MISSING].sql})" if or_missing else test


def sql_text(dialect: str) -> SqlText:
    """A dialect's identifiers, literals and typed columns, for SQL that other modules write
    (the engines' counting queries) with the same quoting as the exports."""
    return SqlText(dialect)


def rule_tests(model: Model, dialect: str) -> list[str]:
    """Each rule's conditions as one SQL test (``TRUE`` for a rule without conditions), with
    rulecli's semantics of missing values: what an engine counts a rule's rows with."""
    sql = SqlText(dialect)
    kinds = column_kinds(c for r in model.rules for c in r.conditions)
    return [sql_rule(sql, r.conditions, kinds) for r in model.rules]


def sql_rule(sql: SqlText, conditions: tuple[Condition, ...], kinds: dict[str, bool]) -> str:
    if not conditions:
        return "TRUE"
    return " AND ".join(condition_source(sql, c, sql.column(c.column, kinds.get(c.column, False))) for c in conditions)
