"""Read and write tables and text files; the only module that touches the file system.

Formats are chosen by extension (``.csv``, ``.tsv``, ``.csv.gz``, ``.tsv.gz``,
``.parquet``, ``.ndjson``/``.jsonl``, ``.arrow``/``.ipc``/``.feather``); ``-`` means
standard input or output (CSV unless a format is given). Every file written goes
to a temporary file in the target directory first and is renamed into place, so
a failure never leaves a partial file behind.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

import polars as pl

from rulecli.errors import InputError

FORMATS = ("csv", "tsv", "parquet", "ndjson", "ipc")

_EXTENSIONS = {
    ".csv": "csv",
    ".txt": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".arrow": "ipc",
    ".ipc": "ipc",
    ".feather": "ipc",
}

STDIO = "-"


def detect_format(path: str, explicit: str | None = None) -> tuple[str, bool]:
    """Return ``(format, gzipped)`` for a path, honouring an explicit format."""
    if explicit is not None:
        if explicit not in FORMATS:
            raise InputError(f"unknown format '{explicit}' (choose from {', '.join(FORMATS)})")
        return explicit, path.endswith(".gz")
    if path == STDIO:
        return "csv", False
    name = path.lower()
    gzipped = name.endswith(".gz")
    if gzipped:
        name = name[:-3]
    suffix = Path(name).suffix
    fmt = _EXTENSIONS.get(suffix)
    if fmt is None:
        known = ", ".join(sorted(_EXTENSIONS))
        raise InputError(
            f"{path}: unknown file extension '{suffix or '(none)'}' "
            f"(known: {known}, optionally .gz; or pass --input-format)"
        )
    if gzipped and fmt not in ("csv", "tsv"):
        raise InputError(f"{path}: only CSV and TSV files may be gzip-compressed")
    return fmt, gzipped


def _check_readable(path: str) -> None:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such file")
    if p.is_dir():
        raise InputError(f"{path}: is a directory, not a data file")
    if p.stat().st_size == 0:
        raise InputError(f"{path}: file is empty")


def _read_stdin_bytes() -> bytes:
    data = sys.stdin.buffer.read()
    if not data:
        raise InputError("<stdin>: no data on standard input")
    return data


def scan_table(
    path: str,
    *,
    input_format: str | None = None,
    null_values: Sequence[str] = (),
    schema_overrides: Mapping[str, pl.DataType] | None = None,
    infer_all_rows: bool = True,
) -> pl.LazyFrame:
    """Open a table lazily (plain CSV, Parquet, IPC, NDJSON) or eagerly (stdin, gzip).

    Parameters
    ----------
    path
        File path or ``-`` for standard input.
    input_format
        Overrides detection by extension.
    null_values
        Extra strings read as missing (CSV/TSV only); empty fields are always missing.
    schema_overrides
        Column dtypes to force while parsing CSV (e.g. a categorical feature stored as digits).
    infer_all_rows
        Scan the whole CSV to infer types, so a stray string late in a column is seen.
    """
    fmt, gzipped = detect_format(path, input_format)
    label = "<stdin>" if path == STDIO else path
    if path != STDIO:
        _check_readable(path)
    overrides = dict(schema_overrides or {})
    try:
        if fmt in ("csv", "tsv"):
            options = {
                "separator": "\t" if fmt == "tsv" else ",",
                "null_values": list(null_values) or None,
                "schema_overrides": overrides or None,
                "infer_schema_length": None if infer_all_rows else 10_000,
                "raise_if_empty": True,
            }
            if path == STDIO or gzipped:
                source: bytes | str = _read_stdin_bytes() if path == STDIO else path
                df = pl.read_csv(source, **options)  # type: ignore[arg-type]
                extra = _text_overrides(df.schema, overrides)
                if extra:
                    options["schema_overrides"] = overrides | extra
                    df = pl.read_csv(source, **options)  # type: ignore[arg-type]
                return df.lazy()
            lf = pl.scan_csv(path, **options)  # type: ignore[arg-type]
            extra = _text_overrides(lf.collect_schema(), overrides)
            if extra:
                options["schema_overrides"] = overrides | extra
                lf = pl.scan_csv(path, **options)  # type: ignore[arg-type]
                lf.collect_schema()
            return lf
        source_bytes: bytes | str = _read_stdin_bytes() if path == STDIO else path
        if fmt == "parquet":
            if isinstance(source_bytes, bytes):
                return pl.read_parquet(io.BytesIO(source_bytes)).lazy()
            lf = pl.scan_parquet(source_bytes)
        elif fmt == "ipc":
            if isinstance(source_bytes, bytes):
                return pl.read_ipc(io.BytesIO(source_bytes)).lazy()
            lf = pl.scan_ipc(source_bytes)
        else:
            if isinstance(source_bytes, bytes):
                return pl.read_ndjson(io.BytesIO(source_bytes)).lazy()
            lf = pl.scan_ndjson(source_bytes, infer_schema_length=None)
        lf.collect_schema()
        return lf
    except InputError:
        raise
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise InputError(f"{label}: cannot read as {fmt.upper()}: {_first_line(exc)}") from exc


def _text_overrides(schema: Mapping[str, pl.DataType], overrides: Mapping[str, pl.DataType]) -> dict[str, pl.DataType]:
    """Keep non-numeric CSV columns as the text written in the file.

    Booleans and dates would otherwise come back re-spelled ("True" as "true"),
    and a model's categorical levels must match the file's own words.
    """
    return {
        name: pl.String()
        for name, dtype in schema.items()
        if name not in overrides and not dtype.is_numeric() and dtype != pl.String
    }


def collect(lf: pl.LazyFrame, label: str) -> pl.DataFrame:
    """Collect a frame read from ``label``, turning parse errors into one-line input errors."""
    try:
        return lf.collect()
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise InputError(f"{label}: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@contextlib.contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """Yield a temporary path next to ``path``; rename it over ``path`` only on success."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"{path}: is a directory; give a file name for the output")
    directory = target.parent if str(target.parent) else Path()
    if not directory.exists():
        raise InputError(f"{path}: directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        yield tmp
        Path(tmp).replace(target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: str, text: str) -> None:
    """Write text to ``path`` atomically, or to stdout when ``path`` is ``-``."""
    if path == STDIO:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def read_text(path: str) -> str:
    """Read a UTF-8 text file (or stdin for ``-``) with a one-line error on failure."""
    if path == STDIO:
        return sys.stdin.read()
    _check_readable(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from exc


def _sink(lf: pl.LazyFrame, target: str | IO[bytes], fmt: str) -> None:
    if fmt == "csv":
        lf.sink_csv(target)
    elif fmt == "tsv":
        lf.sink_csv(target, separator="\t")
    elif fmt == "parquet":
        lf.sink_parquet(target)
    elif fmt == "ipc":
        lf.sink_ipc(target)
    else:
        lf.sink_ndjson(target)


def write_table(lf: pl.LazyFrame | pl.DataFrame, path: str, *, output_format: str | None = None) -> None:
    """Stream a frame to a file (atomically) or to stdout as CSV.

    A lazy frame is sunk with Polars' streaming engine, so it never has to fit in memory.
    """
    frame = lf.lazy()
    fmt, gzipped = detect_format(path, output_format)
    if gzipped:
        raise InputError(f"{path}: writing gzip-compressed output is not supported")
    if path == STDIO:
        _sink(frame, sys.stdout.buffer, fmt)
        sys.stdout.buffer.flush()
        return
    with atomic_path(path) as tmp:
        _sink(frame, tmp, fmt)
