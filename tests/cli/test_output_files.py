"""Outputs land where a shell user expects: links followed, modes kept, devices written through."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from tests.conftest import SAMPLE, run_cli

HOUSE = str(SAMPLE / "house.csv")


def test_new_files_follow_the_umask_and_replaced_files_keep_their_mode(tmp_path: Path):
    out = tmp_path / "m.json"
    old = os.umask(0o022)
    try:
        assert run_cli("oner", HOUSE, "-o", str(out), "-q").code == 0
        assert out.stat().st_mode & 0o777 == 0o644
        out.chmod(0o664)
        assert run_cli("oner", HOUSE, "-o", str(out), "-q").code == 0
        assert out.stat().st_mode & 0o777 == 0o664
        predictions = tmp_path / "p.csv"
        assert run_cli("predict", str(out), HOUSE, "-o", str(predictions)).code == 0
        assert predictions.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(old)


def test_an_output_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path: Path):
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real)
    assert run_cli("oner", HOUSE, "-o", str(link), "-q").code == 0
    assert link.is_symlink() and real.read_text().startswith("{")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_a_fifo_is_written_through(tmp_path: Path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    assert run_cli("oner", HOUSE, "-o", str(fifo), "-q").code == 0
    reader.join(timeout=30)
    assert received and received[0].startswith(b"{")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.json"]


def test_a_device_without_an_extension_gets_csv(tmp_path: Path):
    # `-o /dev/null` (a dry run) was refused for its missing extension
    model = tmp_path / "m.json"
    assert run_cli("oner", HOUSE, "-o", str(model), "-q").code == 0
    for args in (["predict", str(model), HOUSE], ["discretize", HOUSE]):
        result = run_cli(*args, "-o", os.devnull)
        assert result.code == 0 and result.stderr == "", (args, result.stderr)


def test_outputs_that_cannot_be_written_are_refused_before_any_work(tmp_path: Path):
    model = tmp_path / "m.json"
    assert run_cli("oner", HOUSE, "-o", str(model), "-q").code == 0
    blocker = tmp_path / "afile"
    blocker.write_text("")
    cases = [
        (["oner", HOUSE, "-o", str(tmp_path / "m.arff")], "a model file must end in .json or .txt"),
        (["oner", HOUSE, "-o", f"{blocker}/m.json"], "is not a directory"),
        (["oner", HOUSE, "--cv", "3", "--metrics-out", str(tmp_path / "no" / "m.json")], "does not exist"),
        (["forest", HOUSE, "--partial-dependence", "size", "--pd-out", str(tmp_path / "pd.arff")], "cannot write it"),
        (["predict", str(model), HOUSE, "-o", str(tmp_path / "p.arff")], "rulecli reads ARFF but cannot write it"),
        (["predict", str(model), HOUSE, "-o", "/proc/p.csv"], "cannot write in /proc"),
        (["discretize", HOUSE, "-o", str(tmp_path / "d.arff")], "cannot write it"),
        (["discretize", HOUSE, "--cuts-out", str(tmp_path / "no" / "c.json")], "does not exist"),
        (["evaluate", str(model), HOUSE, "--violations", str(tmp_path / "v.arff")], "cannot write it"),
        (["evaluate", str(model), HOUSE, "-o", str(tmp_path / "no" / "e.json")], "does not exist"),
        (["export", str(model), "-o", f"{blocker}/e.sql"], "is not a directory"),
        (["predict", str(model), HOUSE, "-o", str(tmp_path / "p.foo")], "'.foo'; write .csv, .tsv, .parquet"),
        (["predict", str(model), HOUSE, "--keep", "siz"], "'siz' is not in the data (did you mean 'size'?)"),
    ]
    before = sorted(p.name for p in tmp_path.iterdir())
    for args, message in cases:
        result = run_cli(*args)
        assert result.code == 2 and result.stderr.count("\n") == 1, (args, result.stderr)
        assert message in result.stderr and result.stdout == "", (args, result.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_metrics_are_not_written_when_the_model_cannot_be_saved(tmp_path: Path):
    metrics = tmp_path / "metrics.json"
    result = run_cli(
        "forest", HOUSE, "-B", "3", "--cv", "2", "--metrics-out", str(metrics), "-o", str(tmp_path / "f.txt")
    )
    assert result.code == 2 and "a forest is saved as .json" in result.stderr
    assert not metrics.exists()
    assert run_cli("forest", HOUSE, "-B", "3", "--cv", "2", "--metrics-out", str(metrics), "-q").code == 0
    assert metrics.exists()
