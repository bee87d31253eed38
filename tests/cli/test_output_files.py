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
