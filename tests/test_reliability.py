"""Issue 7, item by item: bad data and bad models get one clear line and exit 2, outputs are
atomic, runs are reproducible, model forms round-trip — for every learner."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rulecli import learners
from rulecli.model.serde import dumps, loads
from rulecli.model.text import parse_text, render_text
from tests.conftest import QUICK, ROOT, SAMPLE, run_cli, run_subprocess, slow_for

PENGUINS = str(SAMPLE / "penguins.csv")
HOUSE = str(SAMPLE / "house.csv")
LEARNERS = learners.names("classes")
# Options that keep each learner quick on the small tables here.

BAD_DATA = {
    "empty.csv": ("", "file is empty"),
    "header-only.csv": ("a,b,y\n", "no data rows"),
    "ragged.csv": ("a,b,y\n1,2,x\n3,4,5,z\n", "ragged.csv"),
    "duplicate-names.csv": ("a,a,y\n1,2,x\n3,4,z\n", "duplicate"),
    "undecodable.csv": (b"a,y\n\xe9t\xe9,x\n\xff\xfe,z\n", "undecodable.csv"),
    "one-class.csv": ("a,y\n1,x\n2,x\n3,x\n", "single class"),
    "target-all-missing.csv": ("a,y\n1,\n2,\n", "has no values"),
    "infinite.csv": ("a,y\n1,x\ninf,z\n2,x\n", "infinite value"),
}


def _write(path: Path, content: str | bytes) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


@pytest.mark.parametrize("case", sorted(BAD_DATA))
def test_bad_data_is_one_line_naming_the_file(tmp_path: Path, case: str):
    content, message = BAD_DATA[case]
    path = tmp_path / case
    _write(path, content)
    # every learner sees some of the bad files; each file is tried on two learners
    index = sorted(BAD_DATA).index(case)
    for learner in (LEARNERS[index % len(LEARNERS)], LEARNERS[(index + 3) % len(LEARNERS)]):
        out = tmp_path / f"{learner}.json"
        result = run_cli(learner, str(path), "-y", "y", "-o", str(out), *QUICK.get(learner, []))
        assert result.code == 2, (learner, case, result.stderr)
        assert message in result.stderr, (learner, case, result.stderr)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert not out.exists()


def test_missing_target_column_and_files_that_are_not_tables(tmp_path: Path):
    cases = [
        (["tree", HOUSE, "-y", "price"], "column 'price' given with --target is not in the data"),
        (["forest", str(tmp_path / "nope.csv")], "no such file"),
        (["reduct", str(tmp_path)], "is a directory"),
        (["brl", str(SAMPLE / "README.md")], "unknown file extension"),
    ]
    for args, message in cases:
        result = run_cli(*args)
        assert result.code == 2 and message in result.stderr and result.stderr.count("\n") == 1, result.stderr


@pytest.mark.parametrize("learner", LEARNERS)
def test_awkward_features_warn_and_are_skipped_not_fatal(tmp_path: Path, learner: str):
    rng = np.random.default_rng(0)
    n = 200
    frame = pl.DataFrame(
        {
            "constant": ["same"] * n,
            "empty": [None] * n,
            "id": [f"row{i}" for i in range(n)],
            "stray": [*(str(v) for v in rng.normal(size=n - 1).round(2)), "n/a"],
            "nan": np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n)),
            "many": [f"level{i % 150}" for i in range(n)],
            "long": ["x" * 100_000 if i % 2 else "short" for i in range(n)],
            "y": rng.choice(["a", "b"], size=n),
        },
        strict=False,
    )
    path = tmp_path / "awkward.csv"
    frame.write_csv(path)
    result = run_cli(learner, str(path), "-y", "y", "--json", *QUICK.get(learner, []))
    assert result.code == 0, (learner, result.stderr)
    assert "'constant' is constant; skipped" in result.stderr
    assert "'empty' has no values; skipped" in result.stderr
    assert "column 'id' has a different value on (nearly) every row" in result.stderr
    assert "'stray' looks numeric but holds 'n/a'" in result.stderr
    assert "column 'many' has 150 distinct values" in result.stderr
    features = json.loads(result.stdout)["schema"]["features"]
    assert not {"constant", "id", "many"} & {f["name"] for f in features}


def test_stdin_closed_early_is_an_empty_file():
    result = run_cli("tree", "-", "-y", "y", stdin="")
    assert result.code == 2 and "no data on standard input" in result.stderr and result.stderr.count("\n") == 1


def test_bad_tree_models_are_refused(tmp_path: Path):
    model = tmp_path / "t.json"
    assert run_cli("tree", PENGUINS, "-y", "species", "--max-depth", "3", "-o", str(model), "-q").code == 0
    body = json.loads(model.read_text())
    cycle = json.loads(model.read_text())
    cycle["tree"]["left"][1] = 0  # a child pointing back to the root
    feature = json.loads(model.read_text())
    feature["tree"]["feature"][0] = 99
    short = json.loads(model.read_text())
    short["tree"]["threshold"] = short["tree"]["threshold"][:-1]
    shared = json.loads(model.read_text())
    shared["tree"]["right"][0] = shared["tree"]["left"][0]  # a DAG: walking its paths grows exponentially
    cases = {
        "shared.json": (shared, f"node {shared['tree']['left'][0]} is the child of 2 splits"),
        "cycle.json": (cycle, "child numbers must follow their parent"),
        "feature.json": (feature, "feature numbers must be -1"),
        "short.json": (short, f"expected {len(body['tree']['feature'])} entries, one per node"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_text(json.dumps(content))
        result = run_cli("predict", str(tmp_path / name), PENGUINS)
        assert result.code == 2 and message in result.stderr, (name, result.stderr)
    (tmp_path / "syntax.txt").write_text("IF bill_length_mm < 40 THEN species 'Adelie'\n")
    result = run_cli("predict", str(tmp_path / "syntax.txt"), PENGUINS)
    assert result.code == 2 and "syntax.txt:1:" in result.stderr
    (tmp_path / "text.csv").write_text("flipper_length_mm,bill_length_mm,island\nlong,40,Dream\n")
    result = run_cli("predict", str(model), str(tmp_path / "text.csv"))
    assert result.code == 2 and "'flipper_length_mm'" in result.stderr and "long" in result.stderr


def test_unseen_categories_and_missing_values_are_predicted(tmp_path: Path):
    data = tmp_path / "new.csv"
    data.write_text(
        "island,bill_length_mm,bill_depth_mm,flipper_length_mm,body_mass_g,sex,year\n"
        "Atlantis,40,18,190,3500,male,2007\n,,,,,,\n"
    )
    for learner in LEARNERS:
        model = tmp_path / f"{learner}.json"
        assert run_cli(learner, PENGUINS, "-y", "species", "-o", str(model), "-q", *QUICK.get(learner, [])).code == 0
        result = run_cli("predict", str(model), str(data))
        assert result.code == 0, (learner, result.stderr)
        assert len(result.stdout.splitlines()) == 3


@pytest.mark.parametrize("learner", slow_for(LEARNERS))
def test_reproducible_round_trips_and_forms_agree(tmp_path: Path, learner: str):
    parquet = tmp_path / "penguins.parquet"
    pl.read_csv(PENGUINS).write_parquet(parquet)
    args = ["-y", "species", "--seed", "5", "-q", *QUICK.get(learner, [])]
    models = []
    for i, source in enumerate((PENGUINS, PENGUINS, str(parquet))):
        out = tmp_path / f"m{i}.json"
        assert run_cli(learner, source, *args, "-o", str(out)).code == 0
        models.append(out.read_bytes())
    assert models[0] == models[1] == models[2], "same seed, same bytes, CSV or Parquet"
    assert dumps(loads(models[0].decode())).encode() == models[0], "JSON -> load -> save is byte-identical"
    text = tmp_path / "m.txt"
    saved = run_cli(learner, PENGUINS, *args, "-o", str(text))
    if learner == "forest":  # a forest has no text rule form
        assert saved.code == 2 and "saved as .json" in saved.stderr
    else:
        assert saved.code == 0, saved.stderr
        parsed = parse_text(text.read_text())
        assert render_text(parse_text(render_text(parsed))) == render_text(parsed), "text -> parse -> render is stable"
        from_json = run_cli("predict", str(tmp_path / "m0.json"), PENGUINS).stdout
        assert run_cli("predict", str(text), PENGUINS).stdout == from_json, "JSON and text forms predict alike"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_an_interrupted_predict_leaves_the_old_file_or_a_complete_one(tmp_path: Path, sig: signal.Signals):
    rows = 3_000_000
    data = tmp_path / "big.parquet"
    rng = np.random.default_rng(0)
    pl.DataFrame({"x": rng.normal(size=rows), "y": rng.choice(["a", "b"], rows)}).write_parquet(data)
    rules = tmp_path / "r.txt"
    rules.write_text("IF x < 0 THEN y = 'a'\nELSE y = 'b'\n")
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulecli", "predict", str(rules), str(data), "-o", str(out), "--keep", "x"],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )
    # interrupt once the output is being written (its temporary file exists), however long start-up took
    deadline = time.monotonic() + 60
    writing = False
    while proc.poll() is None and not writing and time.monotonic() < deadline:
        writing = bool(list(tmp_path.glob(".out.csv.*.tmp")))
        time.sleep(0.01)
    assert writing, "the run ended before it could be interrupted"
    proc.send_signal(sig)
    proc.wait(timeout=60)
    content = out.read_text()
    if proc.returncode == 0:
        assert content.count("\n") == rows + 1
    else:
        # 128 + the signal from rulecli's handler, or -signal when it lands outside it (exit)
        assert proc.returncode in (128 + sig, -sig) and content == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.parquet", "out.csv", "r.txt"]


# A stand-in for long native work (a large CSV parse, a DuckDB query): Polars opening a FIFO
# that no one writes to blocks in Rust, with Python's lock released, until the process ends.
_BLOCKED_WRITE = """
import sys, polars as pl, rulecli.io as io
from rulecli.cli.app import main
io._sink = lambda lf, target, fmt: pl.read_csv(sys.argv[1])
main(sys.argv[2:])
"""


@pytest.mark.parametrize(
    ("sig", "line"), [(signal.SIGINT, "Interrupted"), (signal.SIGTERM, "Stopped by SIGTERM")], ids=["INT", "TERM"]
)
def test_a_signal_during_native_work_ends_the_run_within_moments(tmp_path: Path, sig: signal.Signals, line: str):
    fifo = tmp_path / "never-written.csv"
    os.mkfifo(fifo)
    rules = tmp_path / "r.txt"
    rules.write_text("IF size = 'big' THEN value = 'high'\nELSE value = 'low'\n")
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", _BLOCKED_WRITE, str(fifo), "predict", str(rules), HOUSE, "-o", str(out)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job ignores it
    )
    deadline = time.monotonic() + 60
    while proc.poll() is None and not list(tmp_path.glob(".out.csv.*.tmp")) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # well inside the blocked call
    assert proc.poll() is None, proc.communicate()[1]
    sent = time.monotonic()
    proc.send_signal(sig)
    try:
        stderr = proc.communicate(timeout=20)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("not stopped 20 s after the signal: it waits for the native call to return")
    assert time.monotonic() - sent < 5, "the signal waited for the native call"
    assert proc.returncode == (130 if sig == signal.SIGINT else 128 + sig)
    assert stderr.strip().splitlines() == [line]
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["never-written.csv", "out.csv", "r.txt"], (
        "temporary file removed"
    )


@pytest.mark.slow  # 15 s
def test_sigterm_during_a_duckdb_query_is_the_stop_not_duckdbs_error(tmp_path: Path):
    pytest.importorskip("duckdb")
    rng = np.random.default_rng(0)
    n = 2_000_000  # queries long enough that the signal lands in one
    frame = {f"x{j}": rng.normal(size=n) for j in range(4)}
    frame["y"] = np.where(frame["x0"] > 0, "a", "b")
    data = tmp_path / "d.parquet"
    pl.DataFrame(frame).write_parquet(data)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "m.json"
    command = ["ripper", str(data), "-y", "y", "--engine", "duckdb", "--temp-directory", str(scratch), "-o", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulecli", *command, "-q"], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    # the engine's scratch directory appears as its queries begin; most of the run is in them
    deadline = time.monotonic() + 60
    while proc.poll() is None and not any(scratch.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    assert proc.poll() is None, proc.communicate()[1]
    proc.send_signal(signal.SIGTERM)
    stderr = proc.communicate(timeout=30)[1]
    assert (proc.returncode, stderr) == (128 + signal.SIGTERM, "Stopped by SIGTERM\n")
    assert not out.exists() and not any(scratch.iterdir())


def test_time_limit_stops_a_long_run_with_a_clear_message(tmp_path: Path):
    rng = np.random.default_rng(0)
    n, d = 3000, 1000
    columns = {f"x{j}": rng.normal(size=n).round(2) for j in range(d)}
    columns["y"] = np.where(columns["x0"] + rng.normal(0, 1, n) > 0, "a", "b")
    wide = tmp_path / "wide.parquet"
    pl.DataFrame(columns).write_parquet(wide)
    out = tmp_path / "m.json"
    started = time.monotonic()
    # a signal (SIGALRM) ends the run: the real process, as a user runs it
    result = run_subprocess("aq", str(wide), "-y", "y", "--time-limit", "2", "-o", str(out))
    assert time.monotonic() - started < 30
    assert result.code == 124 and "stopped by --time-limit 2 s" in result.stderr
    assert "--max-rules / --max-rule-length" in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()


def test_a_byte_order_mark_and_a_truncated_gzip_file(tmp_path: Path):
    model = tmp_path / "m.json"
    assert run_cli("oner", str(SAMPLE / "house.csv"), "-o", str(model), "-q").code == 0
    marked = tmp_path / "bom.json"
    marked.write_bytes(b"\xef\xbb\xbf" + model.read_bytes())
    assert run_cli("predict", str(marked), str(SAMPLE / "house.csv")).code == 0
    rules = tmp_path / "bom.txt"
    rules.write_bytes(b"\xef\xbb\xbfIF size = 'big' THEN value = 'high'\nELSE value = 'low'\n")
    assert run_cli("predict", str(rules), str(SAMPLE / "house.csv")).code == 0
    truncated = tmp_path / "t.csv.gz"
    truncated.write_bytes(gzip.compress((SAMPLE / "penguins.csv").read_bytes())[:2000])
    result = run_cli("oner", str(truncated), "-y", "species")
    assert result.code == 2 and "not a complete gzip file" in result.stderr and result.stderr.count("\n") == 1


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    proc = subprocess.run(
        f"{sys.executable} -m rulecli discretize {SAMPLE / 'penguins.csv'} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.stdout.startswith("species,") and proc.stderr == ""


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_forest_workers_end_with_their_parent(tmp_path: Path, sig: signal.Signals):
    rng = np.random.default_rng(0)
    n = 60_000
    frame = {f"x{j}": rng.normal(size=n) for j in range(8)}
    frame["y"] = np.where(frame["x0"] + rng.normal(0, 1, n) > 0, "a", "b")
    data = tmp_path / "d.parquet"
    pl.DataFrame(frame).write_parquet(data)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulecli", "forest", str(data), "-y", "y", "--jobs", "2", "-B", "400", "-q"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while proc.poll() is None and len(workers) < 2 and time.monotonic() < deadline:
        workers = _children(proc.pid)
        time.sleep(0.05)
    assert len(workers) >= 2, "the forest ended before its workers could be seen"
    proc.send_signal(sig)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()  # not left running into the next test
        proc.wait()
        pytest.fail(f"the forest command did not end within 30 s of {sig.name}")
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers), "a worker outlived the forest command"


def test_a_target_too_large_to_square_is_refused_without_numpy_warnings(tmp_path: Path):
    data = tmp_path / "huge.csv"
    data.write_text("x,y\n" + "".join(f"{i % 3},{'-' if i % 2 else ''}1.7e308\n" for i in range(50)))
    for learner in ("tree", "forest"):
        result = run_cli(learner, str(data), "-y", "y", "-o", str(tmp_path / "m.json"))
        assert result.code == 2 and result.stderr.count("\n") == 1, result.stderr
        assert "too large to average and square" in result.stderr and "Warning" not in result.stderr


def test_absurd_numbers_and_nesting_in_model_files_are_one_error_line(tmp_path: Path):
    house = str(SAMPLE / "house.csv")
    model = tmp_path / "m.json"
    assert run_cli("oner", house, "-y", "value", "-o", str(model), "-q").code == 0
    body = model.read_text()
    assert '"covered": 0' in body
    digits = "1" + "0" * 4400
    cases = {
        "covers.txt": (
            "IF size = 'big' THEN value = 'high' (covers 1e999, correct 1)\n",
            "row counts are numbers from 0 to 2^53",
        ),
        "digits.txt": (
            f"IF size = 'big' THEN value = 'high' (covers {digits}, correct 1)\n",
            "row counts are numbers from 0 to 2^53",
        ),
        "counts.txt": (
            "RULESET VOTE distribution\nIF size = 'big' THEN value = 'high' (covers 2, correct 1, counts [1e999, 1])\n",
            "class counts are numbers from 0 to 2^53",
        ),
        "weight.txt": ("IF size = 'big' THEN value = 'high' (covers 2, correct 2, weight 1e999)\n", "finite"),
        "digits.json": (body.replace('"covered": 0', f'"covered": {digits}', 1), "more than 4,300 digits"),
        "large.json": (body.replace('"covered": 0', f'"covered": {10**30}', 1), "integer from 0 to 2^53"),
        "nested.json": (body[:-2] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n", "nested too deeply"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_text(content)
        result = run_cli("predict", str(tmp_path / name), house)
        assert result.code == 2 and result.stderr.count("\n") == 1, (name, result.stderr)
        assert name in result.stderr and message in result.stderr, (name, result.stderr)


def test_gates_on_a_table_without_truth_values_exit_2(tmp_path: Path):
    rows = tmp_path / "r.csv"
    rows.write_text("x,y\n" + "".join(f"{i},{i * 1.5 + (i % 7) / 10}\n" for i in range(80)))
    model = tmp_path / "t.json"
    assert run_cli("tree", str(rows), "-y", "y", "-o", str(model), "-q").code == 0
    (tmp_path / "none.csv").write_text("x,y\n")
    (tmp_path / "blank.csv").write_text("x,y\n" + "".join(f"{i},\n" for i in range(10)))
    for name in ("none.csv", "blank.csv"):
        for gate in (["--max-rmse", "1"], ["--min-r2", "0.5"], []):
            result = run_cli("evaluate", str(model), str(tmp_path / name), *gate)
            assert result.code == 2 and f"{name}: no rows with a value of 'y'" in result.stderr, result.stderr
    classes = tmp_path / "c.json"
    assert run_cli("oner", str(SAMPLE / "house.csv"), "-o", str(classes), "-q").code == 0
    (tmp_path / "h.csv").write_text("size,value\nbig,\n")
    result = run_cli("evaluate", str(classes), str(tmp_path / "h.csv"), "--min-accuracy", "0.5")
    assert result.code == 2 and "no rows with a value of 'value'" in result.stderr


def test_fifos_dev_stdin_and_process_substitution_are_read_as_data(tmp_path: Path):
    house = SAMPLE / "house.csv"
    rulecli = f"{sys.executable} -m rulecli"
    model = tmp_path / "m.json"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    script = f"""
        set -e
        {rulecli} oner <(cat {house}) -y value -o {model} -q
        {rulecli} predict <(cat {model}) <(gzip -c {house}) | wc -l
        cat {house} | {rulecli} predict {model} /dev/stdin | wc -l
        (cat {house} > {fifo} &); {rulecli} predict {model} {fifo} | wc -l
        {rulecli} oner <(true) -y value || echo "exit $?"
    """
    proc = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert proc.stdout.split() == ["11", "11", "11", "exit", "2"], (proc.stdout, proc.stderr)
    assert proc.stderr.strip().endswith(": no data")


def test_many_skipped_columns_are_one_warning_line(tmp_path: Path):
    frame = {f"c{i}": [1] * 20 for i in range(40)} | {"x": list(range(20)), "y": ["a", "b"] * 10}
    data = tmp_path / "wide.csv"
    pl.DataFrame(frame).write_csv(data)
    result = run_cli("oner", str(data), "-y", "y", "-o", str(tmp_path / "m.json"))
    assert result.code == 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("Warning")]
    assert lines == [f"Warning: {data}: 40 columns are constant; skipped: 'c0', 'c1', 'c2' and 37 more"]


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_at_a_terminal_is_cleared_before_the_model_prints(tmp_path: Path):
    import pty

    rows = 3000
    rng = np.random.default_rng(0)
    frame = {f"x{j}": rng.normal(size=rows).round(2) for j in range(6)}
    frame["y"] = np.where(frame["x0"] + rng.normal(0, 1, rows) > 0, "a", "b")
    data = tmp_path / "d.csv"
    pl.DataFrame(frame).write_csv(data)
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulecli", "ripper", str(data), "-y", "y"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=ROOT,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(leader)
    screen = b"".join(chunks).decode("utf-8", errors="replace")
    assert proc.returncode == 0, screen[-2000:]
    assert "grown so far" in screen, "the progress line was shown"
    table = screen.index("decision list, first match wins")
    assert screen.rfind("grown so far") < table, "progress drawn after the model began to print"
    assert re.search(r"ripper: \d+ rules?\s*$", screen[table:]), "the summary line follows the model"


def test_a_file_name_with_glob_characters_is_read_as_itself(tmp_path: Path):
    # Polars reads 'd[1].parquet' as a pattern: it matched d1.parquet, and a lone h[1].csv not at all
    rows = {"y": ["a", "b", "a", "b"] * 5}
    pl.DataFrame({"x": [1, 2, 3, 4] * 5, **rows}).write_parquet(tmp_path / "d1.parquet")
    pl.DataFrame({"z": [1, 2, 3, 4] * 5, **rows}).write_parquet(tmp_path / "d[1].parquet")
    pl.DataFrame({"z": [1, 2, 3, 4] * 5, **rows}).write_csv(tmp_path / "h[1].csv")
    pl.DataFrame({"z": [1, 2, 3, 4] * 5, **rows}).write_ndjson(tmp_path / "n[1].ndjson")
    pl.DataFrame({"w": [1, 2, 3, 4] * 5, **rows}).write_csv(tmp_path / "star.csv")
    for name in ("d[1].parquet", "h[1].csv", "n[1].ndjson"):
        learned = run_cli("oner", name, "-y", "y", "-q", "--json", cwd=tmp_path)
        assert learned.code == 0, (name, learned.stderr)
        assert [f["name"] for f in json.loads(learned.stdout)["schema"]["features"]] == ["z"], name
    (tmp_path / "m.json").write_text(run_cli("oner", "d[1].parquet", "-y", "y", "-q", "--json", cwd=tmp_path).stdout)
    scored = run_cli("predict", "m.json", "d[1].parquet", cwd=tmp_path)
    assert scored.code == 0 and len(scored.stdout.splitlines()) == 21, scored.stderr
    missing = run_cli("oner", "st*r.csv", "-y", "y", cwd=tmp_path)
    assert missing.code == 2 and "st*r.csv: no such file" in missing.stderr


def test_an_output_naming_an_input_is_refused_and_the_input_is_untouched(tmp_path: Path):
    # predict -o data.csv replaced the table it read with one column; export -o m.json the model
    (tmp_path / "data.csv").write_text("x,y\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(40)))
    assert run_cli("oner", "data.csv", "-y", "y", "-q", "-o", "m.json", cwd=tmp_path).code == 0
    (tmp_path / "link.csv").symlink_to(tmp_path / "data.csv")
    before = {name: (tmp_path / name).read_bytes() for name in ("data.csv", "m.json")}
    for args in (
        ["predict", "m.json", "data.csv", "-o", "data.csv"],
        ["predict", "m.json", "data.csv", "-o", "./link.csv"],
        ["export", "m.json", "--to", "python", "-o", "m.json"],
        ["discretize", "data.csv", "-y", "y", "-o", "data.csv"],
    ):
        refused = run_subprocess(*args, cwd=tmp_path)
        assert refused.code == 2, (args, refused.stderr)
        assert refused.stderr.startswith("Error: ") and "is an input of this command" in refused.stderr, args
        assert {name: (tmp_path / name).read_bytes() for name in before} == before, args
    assert run_cli("predict", "m.json", "data.csv", "-o", "scored.csv", cwd=tmp_path).code == 0


def test_a_gzip_file_expanding_past_a_quarter_of_memory_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # a 5.7 MB file expanding to 1 GiB took 8.9 GB, or died in a native abort under a limit
    from rulecli import io

    monkeypatch.setattr(io, "available_memory", lambda: 40 << 20)  # so 10 MiB of text at most
    with gzip.open(tmp_path / "bomb.csv.gz", "wb") as out:
        out.write(b"x,y\n" + b"1,a\n2,b\n" * (2 << 20))  # 16 MiB of text in a few kB
    assert (tmp_path / "bomb.csv.gz").stat().st_size < 200_000
    refused = run_cli("oner", "bomb.csv.gz", "-y", "y", cwd=tmp_path)
    assert refused.code == 2, refused.stderr
    assert refused.stderr.startswith("Error: bomb.csv.gz: expands to more than 10 MiB"), refused.stderr
    with gzip.open(tmp_path / "small.csv.gz", "wb") as out:
        out.write(b"x,y\n" + b"1,a\n2,b\n" * 1000)
    assert run_cli("oner", "small.csv.gz", "-y", "y", "-q", cwd=tmp_path).code == 0


def test_the_memory_a_process_may_take_counts_its_own_limits():
    # under `ulimit -v` / `prlimit --as` (as CI runners set them) a gzip bomb ended in a native
    # abort or a bare MemoryError: the bound read the system's and the cgroup's memory only
    import resource
    import subprocess
    import sys

    probe = "from rulecli import io; print(io.available_memory())"
    free = int(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))

    under = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, preexec_fn=limited
    )
    assert int(under.stdout) < min(free, 3 << 30)


def test_under_an_address_space_limit_the_allocators_reserve_little_and_big_text_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # a 115 MB CSV file took 1.7 GiB of address space for 0.4 GiB of memory (an arena of
    # 64 MiB per thread, jemalloc keeping what it maps): a native abort under a 1.5 GB limit
    import resource
    import subprocess
    import sys

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))

    probe = "import os, rulecli, polars; print(os.environ.get('_RJEM_MALLOC_CONF'))"
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}  # as a shell starts it
    free = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    under = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, preexec_fn=limited, env=env
    )
    # (Polars puts its own settings first)
    assert "retain" not in free.stdout and under.stdout.strip().endswith(",retain:false,narenas:1")
    # a text table that cannot fit three times over is refused before it is read
    from rulecli import io

    pl.DataFrame({"x": np.arange(50_000) / 7, "y": ["a", "b"] * 25_000}).write_csv(tmp_path / "t.csv")
    monkeypatch.setattr(io, "available_memory", lambda: 2 << 20)
    refused = run_cli("tree", "t.csv", "-y", "y", cwd=tmp_path)
    assert refused.code == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith(
        "Error: t.csv: reading it whole takes about 2 MiB, and this process may take 2 MiB more"
    )
    assert "--engine duckdb" in refused.stderr
    # a Parquet file by its pages uncompressed: a million zeros are a few kB on disk
    pl.DataFrame({"x": np.zeros(1 << 20), "y": ["a"] * (1 << 20)}).write_parquet(tmp_path / "z.parquet")
    assert (tmp_path / "z.parquet").stat().st_size < 100_000
    refused = run_cli("tree", "z.parquet", "-y", "y", cwd=tmp_path)
    assert refused.code == 2 and refused.stderr.startswith("Error: z.parquet: reading it whole takes about"), refused


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the run's CPU time from /proc")
def test_ctrl_c_says_interrupted(tmp_path: Path):
    # Typer turns Ctrl-C into a silent exit status 130: the documented line never appeared
    rng = np.random.default_rng(0)
    n = 20_000
    x = rng.normal(size=(n, 8)).round(3)
    y = np.where((x[:, 0] > 0) ^ (rng.random(n) < 0.3), "a", "b")
    pl.DataFrame({**{f"x{j}": x[:, j] for j in range(8)}, "y": y}).write_parquet(tmp_path / "slow.parquet")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulecli", "aq", "slow.parquet", "-y", "y", "--learn-rows", "0", "--jobs", "1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a shell's background job ignores it
    )
    deadline = time.monotonic() + 60
    while proc.poll() is None and _cpu_seconds(proc.pid) < 3.0 and time.monotonic() < deadline:
        time.sleep(0.05)  # started up and learning: imports take about a second of CPU
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == "Interrupted\n", (proc.returncode, err)
