"""Read and write tables and text files; the only module that touches the file system.

Formats are chosen by extension (``.csv``, ``.tsv``, compressed ``.csv.gz``, ``.csv.bz2``,
``.csv.xz``, ``.parquet``, ``.ndjson``/``.jsonl``, ``.arrow``/``.ipc``/``.feather``, ``.arff``,
workbooks ``.xlsx``/``.xls``/``.ods``); ``-`` means
standard input or output (CSV unless a format is given). Every file written goes
to a temporary file in the target directory first and is renamed into place, so
a failure never leaves a partial file behind.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import csv
import datetime as dt
import gzip
import io
import lzma
import os
import re
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import polars as pl

from rulecli.display import unseen_characters, visible, visible_lines
from rulecli.errors import InputError, ParamError
from rulecli.params import DATA_PANEL, Params, param
from rulecli.schema import col, plain_column

FORMATS = ("csv", "tsv", "parquet", "ndjson", "ipc", "arff", "excel")

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
    ".arff": "arff",
    ".xlsx": "excel",
    ".xlsm": "excel",
    ".xls": "excel",
    ".ods": "excel",
}

STDIO = "-"
GZIP_MAGIC = b"\x1f\x8b"
# compressed text: the file-name endings, and the first bytes each codec's stream starts with
COMPRESSED = (".gz", ".bz2", ".xz")
_CODECS = ((GZIP_MAGIC, "gzip", gzip.open), (b"BZh", "bzip2", bz2.open), (b"\xfd7zXZ\x00", "xz", lzma.open))


def _uncompressed_name(path: str) -> tuple[str, bool]:
    """The path in lower case without its compression ending, and whether it had one."""
    name = path.lower()
    return (name[: name.rindex(".")], True) if name.endswith(COMPRESSED) else (name, False)


def detect_format(path: str, explicit: str | None = None) -> tuple[str, bool]:
    """Return ``(format, gzipped)`` for a path, honouring an explicit format."""
    if explicit is not None:
        if explicit not in FORMATS:
            raise InputError(f"unknown format '{explicit}' (choose from {', '.join(FORMATS)})")
        return explicit, path.lower().endswith(COMPRESSED)
    if path == STDIO:
        return "csv", False
    name, gzipped = _uncompressed_name(path)  # gzip, bzip2 or xz
    suffix = Path(name).suffix
    fmt = _EXTENSIONS.get(suffix)
    if fmt is None:
        known = ", ".join(sorted(_EXTENSIONS))
        raise InputError(
            f"{path}: unknown file extension '{suffix or '(none)'}' "
            f"(known: {known}, optionally .gz, .bz2 or .xz; or pass `input_format`)"
        )
    if gzipped and fmt not in ("csv", "tsv", "arff"):
        raise InputError(f"{path}: only CSV, TSV and ARFF files may be compressed")
    return fmt, gzipped


# The files this command reads, by device and inode: an output naming one of them (by any
# path: a link, ./, another spelling) is refused, so `predict m.json data.csv -o data.csv`
# cannot replace the table it is reading, nor `export m.json -o m.json` the model.
_INPUTS: set[tuple[int, int]] = set()


def forget_inputs() -> None:
    """A new command begins (the tests run many in one process)."""
    _INPUTS.clear()


# Temporary files and directories of this command that exist now: a signal that cannot wait
# for the main thread (``rulecli.cli.signals``) removes them before the process ends.
_LEFTOVERS: set[str] = set()


def remove_leftovers() -> None:
    """Remove this command's temporary files and directories (the process is about to end)."""
    import shutil

    for path in list(_LEFTOVERS):
        if Path(path).is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            Path(path).unlink(missing_ok=True)


def check_readable(path: str) -> None:
    """Fail with one line unless ``path`` is a file with something in it; note it as an input."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such file")
    if p.is_dir():
        raise InputError(f"{path}: is a directory, not a data file")
    if p.is_file() and p.stat().st_size == 0:
        raise InputError(f"{path}: file is empty")
    if p.is_file():
        found = p.stat()
        _INPUTS.add((found.st_dev, found.st_ino))


def is_stream(path: str) -> bool:
    """A FIFO, ``/dev/stdin``, process substitution or other device: readable once, no size."""
    return path == STDIO or (Path(path).exists() and not Path(path).is_file() and not Path(path).is_dir())


def _read_stream(path: str) -> bytes:
    if path == STDIO:
        return _read_stdin_bytes()
    data = Path(path).read_bytes()
    if not data:
        raise InputError(f"{path}: no data")
    return data


def _read_stdin_bytes() -> bytes:
    data = sys.stdin.buffer.read()
    if not data:
        raise InputError("<stdin>: no data on standard input")
    return data


@dataclass(frozen=True, kw_only=True)
class ReadOptions(Params):
    """How a table is read: its format and, for a CSV/TSV file, its layout (declared once:
    the API's read keywords and every command's read options)."""

    input_format: str | None = param(
        None,
        "csv, tsv, parquet, ndjson, ipc, arff or excel; default: by extension (stdin: by its first bytes).",
        panel=DATA_PANEL,
    )
    null_values: tuple[str, ...] = param(
        (), "Extra strings read as missing, e.g. '?' (repeat or comma-separate).", panel=DATA_PANEL
    )
    delimiter: str | None = param(
        None, "CSV/TSV field separator: one character, or 'tab' (default: , or tab).", panel=DATA_PANEL
    )
    encoding: str = param("utf-8", "Text encoding of a CSV/TSV file, e.g. latin-1, cp1252.", panel=DATA_PANEL)
    no_header: bool = param(
        False, "The CSV/TSV file has no header: columns are column_1, column_2, …", panel=DATA_PANEL
    )
    skip_lines: int = param(0, "Leave out this many lines before the CSV/TSV header.", ge=0, panel=DATA_PANEL)
    sheet: str | None = param(
        None, "A workbook's sheet: its name, or its number (1: the first, the default).", panel=DATA_PANEL
    )

    def check(self) -> None:
        if self.delimiter is not None and len(self._separator) != 1:
            raise ParamError(f"must be one character (or 'tab'), got {self.delimiter!r}", param="delimiter")
        try:
            codecs.lookup(self.encoding)
        except LookupError:
            raise ParamError(
                f"must name a known encoding (e.g. utf-8, latin-1, cp1252), got '{self.encoding}'", param="encoding"
            ) from None

    @property
    def _separator(self) -> str:
        assert self.delimiter is not None
        return "\t" if self.delimiter.lower() in ("tab", "\\t") else self.delimiter

    def separator(self, fmt: str) -> str:
        """The field separator of a file of format ``fmt`` (csv or tsv)."""
        return self._separator if self.delimiter is not None else ("\t" if fmt == "tsv" else ",")

    @property
    def utf8(self) -> bool:
        return codecs.lookup(self.encoding).name == "utf-8"


READ = ReadOptions()


def scan_table(
    path: str,
    read: ReadOptions = READ,
    *,
    schema_overrides: Mapping[str, pl.DataType] | None = None,
    infer_all_rows: bool = True,
) -> pl.LazyFrame:
    """Open a table lazily (plain CSV, Parquet, IPC, NDJSON) or eagerly (stdin, gzip).

    Parameters
    ----------
    path
        File path or ``-`` for standard input.
    read
        Its format (default: by extension), extra strings read as missing (empty fields
        always are) and a CSV/TSV file's delimiter, encoding, header and leading lines.
    schema_overrides
        Column dtypes to force while parsing CSV (e.g. a categorical feature stored as digits).
    infer_all_rows
        Scan the whole CSV to infer types, so a stray string late in a column is seen.
    """
    label = "<stdin>" if path == STDIO else path
    input_format, null_values = read.input_format, read.null_values
    if path != STDIO:
        check_readable(path)
    # standard input, a FIFO or a device is read once, here; its format is known by its
    # first bytes unless given or named by an extension
    raw = _read_stream(path) if is_stream(path) else None
    if raw is not None and raw.startswith(tuple(magic for magic, _, _ in _CODECS)):
        # compressed text on a stream is known by its magic bytes, named or not
        # (`<(gzip -c t.csv)`), and expanded here, within the bound, before it is sniffed
        raw = _decompress(raw, label)
    if raw is not None and input_format is None and (path == STDIO or Path(path).suffix.lower() not in _EXTENSIONS):
        fmt, gzipped = _sniff(raw), False
    else:
        fmt, gzipped = detect_format(path, input_format)
    if fmt == "excel":
        # a sheet is typed as a CSV file is, from its cells written as text: a number kept as
        # text in a spreadsheet is a number, a date a date, whatever each cell's format says
        raw, fmt, read = _sheet_as_csv(path if raw is None else raw, read, label), "csv", _AS_WRITTEN
    try:
        if fmt in ("csv", "tsv"):
            options = {
                "separator": read.separator(fmt),
                "null_values": list(null_values) or None,
                "schema_overrides": dict(schema_overrides or {}) or None,
                "infer_schema_length": None if infer_all_rows else INFER_ROWS,
                "raise_if_empty": True,
                "has_header": not read.no_header,
                "skip_rows": read.skip_lines,
            }
            return _scan_text(path, raw, gzipped, options, read, label)
        if fmt == "arff":
            text = raw if raw is not None else _read_bytes(path, gzipped)
            return read_arff(text, label, null_values).lazy()
        return _scan_binary(path, raw, fmt)
    except InputError:
        raise
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise InputError(f"{label}: cannot read as {fmt.upper()}: {first_line(exc)}") from exc


def _scan_text(
    path: str, raw: bytes | None, gzipped: bool, options: dict[str, Any], read: ReadOptions, label: str
) -> pl.LazyFrame:
    """A CSV or TSV file (or its bytes, read already) scanned with Polars' ``options``."""
    if not read.utf8:
        # Polars reads UTF-8 only: other encodings are decoded here, the whole file at once
        raw, gzipped = _recode(raw if raw is not None else _read_bytes(path, gzipped), read.encoding, label), False
    lf = _scan_csv(path, raw, gzipped, options, label, sniff=read.delimiter is None)
    if read.no_header:  # column_1, column_2, … as csvkit and spreadsheets number them
        lf = lf.rename({name: f"column_{i + 1}" for i, name in enumerate(lf.collect_schema())})
    return lf


INFER_ROWS = 10_000  # rows a CSV's types are guessed from where the whole file is not scanned for them
# Polars' message for a value its CSV reader cannot parse as the column's type
_UNPARSED = re.compile(r"could not parse `(.*?)` as dtype `[^`]+` at column '(.*?)' \(column number \d+\)", re.S)


def parquet_copy(
    path: str,
    out: str,
    read: ReadOptions = READ,
    *,
    schema_overrides: Mapping[str, pl.DataType] | None = None,
) -> None:
    """Write the table :func:`scan_table` reads from ``path`` to the Parquet file ``out``, in
    one streaming pass where the file can be scanned (a plain CSV/TSV file): the same
    columns, types and rows in the same order.

    Typing a CSV column from the whole file would hold the file in memory (Polars' inference
    does, 1 GiB for 600 MB). Instead the types come from the first rows and the copy parses
    the rest strictly: a later value that does not parse widens its column (to Float64 for a
    number, else to text) and the copy starts again, which is what typing from every row
    gives; a column without a value in the first rows is tried as integers first. (Values
    the reader parses but Polars' inference would not type so, such as a lone lowercase
    "nan" late in a float column, keep the first rows' type.)
    """
    forced = dict(schema_overrides or {})
    fmt, gzipped = ("csv", False) if path == STDIO else detect_format(path, read.input_format)
    if fmt not in ("csv", "tsv") or gzipped or is_stream(path) or not read.utf8:
        # read whole in any case (or not CSV): typed from every row, as in memory
        scan_table(path, read, schema_overrides=forced).sink_parquet(out)
        return
    lf = scan_table(path, read, schema_overrides=forced, infer_all_rows=False)
    guessed = lf.collect_schema()
    texts = [n for n, t in guessed.items() if t == pl.String and n not in forced]
    seen = lf.head(INFER_ROWS).select(col(n).is_not_null().any() for n in texts).collect() if texts else None
    untyped = [] if seen is None else [n for n in texts if not seen.get_column(n)[0]]
    types: dict[str, pl.DataType] = {n: pl.Int64() for n in untyped}
    while True:
        try:
            scan_table(path, read, schema_overrides=forced | types, infer_all_rows=False).sink_parquet(out)
        except pl.exceptions.ComputeError as exc:
            unparsed = _UNPARSED.search(str(exc))
            if unparsed is None or unparsed.group(2) not in guessed:
                raise InputError(f"{path}: {first_line(exc)}") from None
            value, name = unparsed.groups()
            current = types.get(name, guessed[name])
            if current == pl.String:  # text parses whatever the file holds: not a typing error
                raise InputError(f"{path}: {first_line(exc)}") from None
            types[name] = pl.Float64() if current == pl.Int64 and _typed_as_float(value) else pl.String()
            continue
        tried = [n for n in untyped if types[n] != pl.String]
        nulls = pl.scan_parquet(out).select(col(n).is_null().all() for n in tried).collect() if tried else None
        empty = [] if nulls is None else [n for n in tried if nulls.get_column(n)[0]]
        if not empty:
            return
        types |= {n: pl.String() for n in empty}  # no value anywhere: text, as typing every row gives


def _typed_as_float(value: str) -> bool:
    """Whether Polars' CSV inference types ``value`` as a float."""
    text = pl.DataFrame({"v": [value]}).write_csv()
    return pl.read_csv(io.BytesIO(text.encode()), infer_schema_length=None).schema["v"] == pl.Float64


def _recode(raw: bytes, encoding: str, label: str) -> bytes:
    try:
        return raw.decode(encoding).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label}: not {encoding} text (byte {exc.start}); check `encoding`") from None


def _sniff(raw: bytes) -> str:
    """The format of bytes on standard input: Parquet, Arrow IPC and workbooks (a zip, or
    an old Excel file) by their magic bytes, CSV otherwise (``input_format`` says anything
    else)."""
    if raw.startswith(b"PAR1"):
        return "parquet"
    if raw.startswith(b"ARROW1"):
        return "ipc"
    if raw.startswith((b"PK\x03\x04", b"\xd0\xcf\x11\xe0")):
        return "excel"
    return "csv"


_AS_WRITTEN = ReadOptions(delimiter=",")  # the CSV text a sheet is written as: commas, a header


def _sheet_as_csv(source: str | bytes, read: ReadOptions, label: str) -> bytes:
    """One sheet of a workbook (``read.sheet``: a name or a 1-based number; the first by
    default) as CSV text, its header ``read.skip_lines`` rows down (``no_header``: the
    columns numbered), the extra missing strings left empty."""
    import fastexcel  # a workbook is rare: its reader loads for one only (start-up stays quick)

    try:
        book = fastexcel.read_excel(source if isinstance(source, bytes) else Path(source).read_bytes())
        names = book.sheet_names
        wanted = read.sheet or "1"
        index = int(wanted) - 1 if wanted.isdigit() else None
        if (index is not None and not 0 <= index < len(names)) or (index is None and wanted not in names):
            raise InputError(f"{label}: no sheet '{wanted}' (sheets: {', '.join(names)}; give a name or a number)")
        header = None if read.no_header else read.skip_lines
        # every row types a column (a text late in a column of numbers makes it text, as in a CSV file)
        skip = read.skip_lines if read.no_header else None
        chosen = names[index] if index is not None else wanted
        sheet = book.load_sheet(chosen, header_row=header, skip_rows=skip, schema_sample_rows=None)
        frame = pl.from_arrow(sheet.to_arrow())
    except InputError:
        raise
    except Exception as exc:  # fastexcel's errors have no common base its API names
        raise InputError(f"{label}: cannot read as a workbook: {first_line(exc)}") from exc
    assert isinstance(frame, pl.DataFrame)
    if read.no_header:  # column_1, column_2, … as for a CSV file without a header
        frame = frame.rename({name: f"column_{i + 1}" for i, name in enumerate(frame.columns)})
    # a spreadsheet keeps every date as a time: at midnight throughout, a column of dates
    midnight = [
        n for n, t in frame.schema.items() if t == pl.Datetime and (frame[n].dt.time().drop_nulls() == dt.time()).all()
    ]
    frame = frame.with_columns(pl.col(n).dt.date() for n in midnight) if midnight else frame
    if read.null_values:
        frame = frame.with_columns(
            pl.when(pl.col(n).cast(pl.String).is_in(list(read.null_values))).then(None).otherwise(pl.col(n)).alias(n)
            for n in frame.columns
        )
    return frame.write_csv().encode()


def _scan_csv(
    path: str, raw: bytes | None, gzipped: bool, options: dict[str, Any], label: str, *, sniff: bool = False
) -> pl.LazyFrame:
    """CSV/TSV: scanned lazily from a plain file, read eagerly from stdin or gzip. Columns
    typed as text by the overrides' rule (``_text_overrides``) are read again as text. With
    ``sniff`` (no delimiter given), a header without the format's separator but with ``;``,
    a tab or ``|`` names the separator (:func:`_sniffed`)."""
    overrides = options["schema_overrides"] or {}
    skip = options["skip_rows"]
    if raw is not None or gzipped:
        source: bytes | str = raw if raw is not None else _read_bytes(path, gzipped)
        if sniff:
            options = options | _sniffed(b"\n".join(source[:SNIFF_BYTES].split(b"\n")[skip:]), options)
        if options["has_header"]:
            _check_header(b"\n".join(source.split(b"\n", skip + 1)[skip : skip + 1]), options["separator"], label)
        df = pl.read_csv(source, **options)
        extra = _text_overrides(df.schema, overrides)
        if extra:
            df = pl.read_csv(source, **(options | {"schema_overrides": overrides | extra}))
        return df.lazy()
    if sniff:
        with Path(path).open("rb") as handle:
            options = options | _sniffed(b"\n".join(handle.read(SNIFF_BYTES).split(b"\n")[skip:]), options)
    if options["has_header"]:
        with Path(path).open("rb") as handle:
            for _ in range(skip):
                handle.readline()
            _check_header(handle.readline(), options["separator"], label)
    # the file named, as itself: Polars would read 'd[1].csv' as a pattern (and match d1.csv)
    lf = pl.scan_csv(path, glob=False, **options)
    extra = _text_overrides(lf.collect_schema(), overrides)
    if extra:
        lf = pl.scan_csv(path, glob=False, **(options | {"schema_overrides": overrides | extra}))
        lf.collect_schema()
    return lf


def _scan_binary(path: str, raw: bytes | None, fmt: str) -> pl.LazyFrame:
    """Parquet, IPC and NDJSON: scanned lazily from a file, read whole from stdin."""
    if raw is not None:
        read = {"parquet": pl.read_parquet, "ipc": pl.read_ipc}.get(fmt, pl.read_ndjson)
        return read(io.BytesIO(raw)).lazy()
    # the file named, as itself, never a glob pattern ('d[1].parquet' is not d1.parquet)
    if fmt == "parquet":
        lf = pl.scan_parquet(path, glob=False)
    elif fmt == "ipc":
        lf = pl.scan_ipc(path, glob=False)
    elif any(c in path for c in "*?["):  # scan_ndjson takes no glob=False: the file read whole
        lf = pl.read_ndjson(io.BytesIO(Path(path).read_bytes()), infer_schema_length=None).lazy()
    else:
        lf = pl.scan_ndjson(path, infer_schema_length=None)
    lf.collect_schema()
    return lf


HEADER_BYTES = 1 << 20
SNIFF_BYTES = 1 << 16  # the start of a CSV file its separator and decimal mark are told from
SEPARATORS = (";", "\t", "|")
_DECIMAL_COMMA = re.compile(r"^\s*-?\d+,\d+\s*$")
_DECIMAL_POINT = re.compile(r"^\s*-?\d*\.\d+\s*$")


def _sniffed(head: bytes, options: dict[str, Any]) -> dict[str, Any]:
    """The separator and decimal mark of a CSV file from its first lines (``head``), where
    no delimiter was given: a first line without the format's separator but with ``;``, a
    tab or ``|`` (in that order) names it, as spreadsheets in much of Europe write ``;``
    (csvkit and DuckDB's read_csv sniff it too); with ``;``, numbers such as ``1,5`` and
    none such as ``1.5`` mean a decimal comma. Otherwise nothing changes."""
    lines = head.decode("utf-8", errors="replace").splitlines()
    first = lines[0] if lines else ""
    separator = options["separator"]
    if separator in first:
        return {}
    found = next((c for c in SEPARATORS if c != separator and c in first), None)
    if found is None:
        return {}
    sniffed: dict[str, Any] = {"separator": found}
    if found == ";":
        fields = [f for line in lines[1:-1] for f in line.split(";")]
        if any(_DECIMAL_COMMA.match(f) for f in fields) and not any(_DECIMAL_POINT.match(f) for f in fields):
            sniffed["decimal_comma"] = True
    return sniffed


def _check_header(head: bytes | str, separator: str, label: str) -> None:
    """Refuse duplicate column names, which Polars would silently rename."""
    head = head[:HEADER_BYTES]  # stdin arrives whole: look at the start only
    text = head.decode("utf-8", errors="replace") if isinstance(head, bytes) else head
    lines = text.splitlines()
    try:
        names = next(csv.reader(lines[:1], delimiter=separator), [])
    except csv.Error:
        return  # not a header Python's csv can split; Polars will say what is wrong with the file
    seen: set[str] = set()
    for name in names:
        if name in seen and name:
            raise InputError(f"{label}: duplicate column name '{name}' in the header")
        seen.add(name)


def _read_bytes(path: str, gzipped: bool) -> bytes:
    data = Path(path).read_bytes()
    return _decompress(data, path) if gzipped else data


# A gzip file is decompressed in memory and then parsed, which takes several times the text
# again: a 5.7 MB file that expanded to 1 GiB took 8.9 GB, or died in a native abort under a
# memory limit. Its text may take at most this share of the memory available.
GZIP_SHARE = 0.25
_CHUNK = 1 << 24


# A text table read whole (CSV, TSV, NDJSON, ARFF) took three times its size, its text and
# its columns: a 115 MB CSV file 0.35 GiB of memory, 0.4 GiB of address space. Under a
# limit, an allocation past it is a native abort; a file that cannot fit is refused first
# (a Parquet file by its pages' size uncompressed).
READ_FACTOR = 3


def check_room(path: str, read: ReadOptions = READ) -> None:
    """Refuse, in one line, a table too large to read whole in the memory this process may
    still take (:func:`available_memory`): a text file by its size, a Parquet file by the
    size its metadata gives its pages uncompressed (compressed pages can expand far); a
    compressed text has its own bound, and a stream's size is not known until it is read."""
    if path == STDIO or is_stream(path) or not Path(path).is_file():
        return
    fmt, gzipped = detect_format(path, read.input_format)
    if gzipped or fmt not in ("csv", "tsv", "ndjson", "arff", "parquet"):
        return
    # Parquet's pages become the columns as they are; a text is parsed beside its columns
    need = _parquet_size(path) if fmt == "parquet" else Path(path).stat().st_size * READ_FACTOR
    room = available_memory()
    if need > room:
        raise InputError(
            f"{path}: reading it whole takes about {need >> 20:,} MiB, and this process may take "
            f"{room >> 20:,} MiB more (the machine's, its control group's or its own limit); learn from "
            "it with `engine=duckdb`, which reads it in parts, or free memory"
        )


def _parquet_size(path: str) -> int:
    """A Parquet file's pages uncompressed, by its metadata (0 where it has none to read:
    the reader then says what is wrong with the file)."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(path)
    except (OSError, ValueError):
        return 0
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def available_memory() -> int:
    """Bytes of memory this process may still take: the system's available memory, or its
    control group's limit less its use, or its own address-space or data limit (``ulimit
    -v``, ``prlimit --as``, as CI runners set them) less what it holds, whichever is lowest.
    An allocation past such a limit is a native abort, not an error one can report."""
    found = _process_room()
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except OSError:
        found.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
        if limit.isdigit() and used.isdigit():
            found.append(int(limit) - int(used))
    except OSError:
        pass
    return max(0, min(found))


def _process_room() -> list[int]:
    """Per limit set on this process (address space, data segment): the bytes left under it."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return []
    room = []
    status = _status()
    for which, field in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        soft, _ = resource.getrlimit(which)
        if soft != resource.RLIM_INFINITY and field in status:
            room.append(soft - status[field])
    return room


def _status() -> dict[str, int]:
    """This process's memory figures from /proc/self/status, in bytes (empty elsewhere)."""
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        name, _, value = line.partition(":")
        parts = value.split()
        if len(parts) == 2 and parts[1] == "kB" and parts[0].isdigit():
            out[name] = int(parts[0]) * 1024
    return out


def _decompress(data: bytes, label: str) -> bytes:
    """Compressed text (gzip, bzip2 or xz, known by its first bytes) expanded within the bound."""
    limit = int(GZIP_SHARE * available_memory())
    parts, size = [], 0
    codec, opener = next(((name, opener) for magic, name, opener in _CODECS if data.startswith(magic)), _CODECS[0][1:])
    try:
        with opener(io.BytesIO(data)) as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise InputError(
                        f"{label}: expands to more than {limit >> 20:,} MiB, a quarter of the memory available "
                        f"({available_memory() >> 20:,} MiB); decompress it and read the file with "
                        "`engine=duckdb`, or free memory"
                    )
                parts.append(chunk)
    except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
        # EOFError would otherwise read as Ctrl-D ("Interrupted") to the command line
        raise InputError(f"{label}: not a complete {codec} file ({exc})") from exc
    return b"".join(parts)


_ARFF_ATTRIBUTE = re.compile(r"""@attribute\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s+(.*)""", re.IGNORECASE)


def _arff_unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].replace("\\'", "'").replace('\\"', '"')
    return text


def _arff_nominal(spec: str) -> list[str]:
    body = spec.strip()[1:-1]
    values = re.findall(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^,]+""", body)
    return [_arff_unquote(v) for v in values if v.strip()]


def read_arff(raw: bytes, label: str, null_values: Sequence[str] = ()) -> pl.DataFrame:
    """Read Weka's ARFF format (dense rows; '?' is missing; nominal value order kept as an Enum).

    Keeping the declared order of nominal values matters: it is the class order Weka
    breaks ties with, and the order rules for a nominal feature are listed in.
    """
    names, dtypes, body = _arff_header(raw.decode("utf-8", errors="strict"), label)
    if body.lstrip().startswith("{") or "\\" in body:
        # sparse rows, or quoted values with backslash escapes (as Weka writes text): read value by value
        frame = _arff_values(body, names, dtypes, label)
        if null_values:
            frame = frame.with_columns(col(n).replace(list(null_values), None) for n in names)
    else:
        frame = pl.read_csv(
            body.encode(),
            has_header=False,
            new_columns=names,
            schema_overrides=dict.fromkeys(names, pl.String()),
            quote_char="'",
            null_values=["?", *null_values],
            infer_schema=False,
        )
    columns = []
    for name, dtype in zip(names, dtypes, strict=True):
        column = plain_column(frame, name).str.strip_chars().str.strip_chars("'\"")
        column = column.replace("?", None)
        try:
            columns.append(column.cast(dtype).alias(name))
        except pl.exceptions.PolarsError:
            bad = column.filter(column.cast(dtype, strict=False).is_null() & column.is_not_null())
            raise InputError(f"{label}: column '{name}' holds {bad[0]!r}, not a declared value") from None
    return pl.DataFrame(columns)


def _arff_header(text: str, label: str) -> tuple[list[str], list[pl.DataType], str]:
    """The declared attributes' names and types, and the text of the @data section."""
    names: list[str] = []
    dtypes: list[pl.DataType] = []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        stripped = line.strip()
        lower = stripped.lower()
        if not stripped or stripped.startswith("%") or lower.startswith("@relation"):
            continue
        if lower.startswith("@attribute"):
            match = _ARFF_ATTRIBUTE.match(stripped)
            if match is None:
                raise InputError(f"{label}:{number + 1}: cannot parse attribute declaration")
            names.append(_arff_unquote(match.group(1)))
            kind = _arff_type(match.group(2))
            if kind.startswith("{"):
                dtypes.append(pl.Enum(list(dict.fromkeys(_arff_nominal(kind)))))
            elif kind.lower().split()[0] in ("numeric", "real", "integer"):
                dtypes.append(pl.Float64())
            else:
                dtypes.append(pl.String())
            continue
        if lower.startswith("@data"):
            if not names:
                raise InputError(f"{label}: no @attribute declarations")
            rows = (r for r in lines[number + 1 :] if r.strip() and not r.lstrip().startswith("%"))
            return names, dtypes, "\n".join(rows)
        raise InputError(f"{label}:{number + 1}: unexpected line before @data: {stripped[:40]!r}")
    raise InputError(f"{label}: no @data section (is this an ARFF file?)")


def _arff_type(spec: str) -> str:
    """An attribute's type without a trailing ``% comment`` (Weka writes them after nominal sets)."""
    spec = spec.strip()
    if spec.startswith("{"):
        end = _arff_set_end(spec)
        return spec[: end + 1] if end >= 0 else spec
    return spec.split("%", 1)[0].strip()


def _arff_set_end(spec: str) -> int:
    """Where a ``{…}`` nominal set closes, quotes respected (-1: it does not)."""
    quote = None
    escaped = False
    for i, char in enumerate(spec):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "}":
            return i
    return -1


_ARFF_VALUE = re.compile(r"""\s*((?:[^,'"]|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")*?)\s*(?:,|$)""")
_ARFF_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _arff_value(token: str) -> str | None:
    if token == "?":
        return None
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return re.sub(r"\\(.)", lambda m: _ARFF_ESCAPES.get(m.group(1), m.group(1)), token[1:-1])
    return token


def _arff_values(body: str, names: list[str], dtypes: list[pl.DataType], label: str) -> pl.DataFrame:
    """Rows value by value: dense rows with quoted, escaped text, and sparse rows
    ``{index value, …}`` (an index left out holds 0: the number 0, a nominal attribute's
    first value, empty text)."""
    zero = [
        dtype.categories[0]
        if isinstance(dtype, pl.Enum) and len(dtype.categories)
        else "0"
        if dtype == pl.Float64
        else ""
        for dtype in dtypes
    ]
    columns: list[list[str | None]] = [[] for _ in names]
    for number, line in enumerate(body.splitlines(), start=1):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            row: list[str | None] = list(zero)
            for entry in (e.strip() for e in _split_arff(line[1:-1])):
                index, _, value = entry.partition(" ")
                if not index.isdigit() or int(index) >= len(names):
                    raise InputError(f"{label}: data row {number}: sparse entry {entry[:30]!r} is not 'index value'")
                row[int(index)] = _arff_value(value.strip())
        else:
            row = [_arff_value(t) for t in _split_arff(line)]
        if len(row) != len(names):
            raise InputError(f"{label}: data row {number} has {len(row)} values, expected {len(names)}")
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    return pl.DataFrame({name: pl.Series(values, dtype=pl.String) for name, values in zip(names, columns, strict=True)})


def _split_arff(line: str) -> list[str]:
    """Comma-separated values, quoted ones kept whole (commas and escapes inside them)."""
    if not line:
        return []
    tokens, pos = [], 0
    while True:
        match = _ARFF_VALUE.match(line, pos)
        assert match is not None  # the pattern matches any text, if only an empty value
        tokens.append(match.group(1))
        if match.end() >= len(line) and not match.group(0).rstrip().endswith(","):
            return tokens
        pos = match.end()


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
        raise InputError(f"{label}: {first_line(exc)}") from exc


_CLEARER = (
    ("found more fields than defined", "a row has more fields than the header has columns"),
    ("invalid utf-8", "not UTF-8 text; give its `encoding` (e.g. `encoding=latin-1`) or re-encode it"),
)


def first_line(exc: BaseException) -> str:
    """An exception's message as one line for an ``Error:`` (with a clearer word where one is known)."""
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    for needle, clearer in _CLEARER:
        if needle in line.lower():
            return f"{clearer} ({line})"
    return line


@contextlib.contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """Yield a path to write ``path``'s new content to.

    A regular file (or a new one) is written to a temporary file beside it and renamed over
    it only on success, so a failure or a signal leaves the old file or a complete new one;
    the new file keeps the old one's permission bits, or follows the umask. A symbolic link
    is followed, as shell redirection does (its target is replaced, the link stays). A
    device, FIFO or ``/dev/stdout``-style path is written through as it is.
    """
    check_writable(path)
    given = Path(path)
    if given.exists() and not given.is_file():
        yield path
        return
    target = Path(os.path.realpath(path))
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666 & ~_umask()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise InputError(f"{path}: cannot write in {target.parent} ({exc.strerror})") from None
    os.close(fd)
    _LEFTOVERS.add(tmp)
    try:
        yield tmp
        Path(tmp).chmod(mode)
        Path(tmp).replace(target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, BrokenPipeError):
            raise
        raise InputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        _LEFTOVERS.discard(tmp)


def check_writable(path: str) -> None:
    """Fail with one line, before any work, unless ``path`` can be written."""
    if path == STDIO:
        return
    given = Path(path)
    if given.is_dir():
        raise InputError(f"{path}: is a directory; give a file name for the output")
    if given.exists() and not given.is_file():
        return  # a device or FIFO is written through
    if given.exists() and (given.stat().st_dev, given.stat().st_ino) in _INPUTS:
        raise InputError(f"{path}: is an input of this command; write the output to another file")
    directory = Path(os.path.realpath(path)).parent
    if not directory.exists():
        raise InputError(f"{path}: directory {Path(path).parent} does not exist")
    if not directory.is_dir():
        raise InputError(f"{path}: {Path(path).parent} is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"{path}: cannot write in {directory} (permission denied)")


WRITABLE = ("csv", "tsv", "parquet", "ndjson", "ipc")


def table_output(path: str, explicit: str | None = None) -> str:
    """The format a table is written to ``path`` in, refused before any work if rulecli cannot write it."""
    if explicit is None and Path(path).suffix == "" and Path(path).exists() and not Path(path).is_file():
        return "csv"  # a device or FIFO (`-o /dev/null`, `-o >(gzip > p.csv.gz)`): CSV, as on stdout
    try:
        fmt, gzipped = detect_format(path, explicit)
    except InputError:  # the reader's message lists what rulecli reads and advises `input_format`
        if explicit is not None:
            raise
        suffix = Path(_uncompressed_name(path)[0]).suffix or "(none)"
        raise InputError(
            f"{path}: unknown file extension '{suffix}'; write .csv, .tsv, .parquet, .ndjson or .arrow"
        ) from None
    if gzipped:
        raise InputError(f"{path}: writing compressed output is not supported")
    if fmt not in WRITABLE:
        raise InputError(
            f"{path}: rulecli reads {fmt.upper()} but cannot write it; write .csv, .tsv, .parquet, .ndjson or .arrow"
        )
    check_writable(path)
    return fmt


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _to_terminal() -> bool:
    """Standard output is a terminal, where people read it: the characters a terminal acts on
    (ESC sequences, bidi overrides) are shown as escapes there, and written as they are to a
    file or a pipe, where the output is data."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def write_text(path: str, text: str) -> None:
    """Write text to ``path`` atomically, or to stdout when ``path`` is ``-``."""
    if path == STDIO:
        sys.stdout.write(visible_lines(text) if _to_terminal() else text)
        sys.stdout.flush()
        return
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def read_text(path: str) -> str:
    """Read a UTF-8 text file (or stdin for ``-``) with a one-line error on failure."""
    if path == STDIO:
        return sys.stdin.read().removeprefix("\ufeff")
    check_readable(path)
    try:
        # utf-8-sig: a byte-order mark (as some editors write) is not part of the text
        return Path(path).read_text(encoding="utf-8-sig")
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
    else:  # ndjson; table_output has refused the formats rulecli cannot write
        lf.sink_ndjson(target)


def write_table(lf: pl.LazyFrame | pl.DataFrame, path: str, *, output_format: str | None = None) -> None:
    """Stream a frame to a file (atomically) or to stdout as CSV.

    A lazy frame is sunk with Polars' streaming engine, so it never has to fit in memory.
    """
    frame = lf.lazy()
    fmt = table_output(path, output_format)
    if path == STDIO:
        if fmt != "parquet" and fmt != "ipc" and _to_terminal():
            frame = _shown(frame)
        try:
            _sink(frame, sys.stdout.buffer, fmt)
            sys.stdout.buffer.flush()
        except (pl.exceptions.PolarsError, OSError) as exc:
            if not isinstance(exc, BrokenPipeError) and "broken pipe" in str(exc).lower():
                # the reader of stdout left (`| head`): Polars reports it as an error of its own
                raise BrokenPipeError(str(exc)) from exc
            raise
        return
    with atomic_path(path) as tmp:
        _sink(frame, tmp, fmt)


def _shown(frame: pl.LazyFrame) -> pl.LazyFrame:
    """``frame`` for a terminal: its text values and column names as :func:`visible` shows them."""
    import polars.selectors as cs

    unseen, escapes = unseen_characters()
    texts = cs.string() | cs.categorical() | cs.enum()
    frame = frame.with_columns(texts.cast(pl.String).str.replace_many(list(unseen), list(escapes)))
    names = frame.collect_schema().names()
    return frame.rename({n: visible(n) for n in names if visible(n) != n})


def scratch_directory(root: str | None, prefix: str) -> str:
    """A new private directory for temporary files (under ``root``, else the system's)."""
    if root is not None and not Path(root).is_dir():
        raise ParamError(f"`temp_directory` {root}: no such directory")
    folder = tempfile.mkdtemp(prefix=prefix, dir=root)
    _LEFTOVERS.add(folder)
    return folder


def remove_scratch(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    _LEFTOVERS.discard(path)
