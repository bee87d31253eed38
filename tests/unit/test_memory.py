"""What a learner freed is given back to the system before the test table is read."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from rulecli import memory
from rulecli.api import learning
from tests.conftest import SAMPLE, run_cli


def test_a_fit_gives_back_what_it_freed_before_the_test_table_is_read(monkeypatch, tmp_path: Path):
    heard = []
    monkeypatch.setattr(memory, "give_back", lambda: heard.append("given back"))
    scan_for = learning.scan_for
    monkeypatch.setattr(learning, "scan_for", lambda *a, **k: heard.append("test read") or scan_for(*a, **k))
    penguins = str(SAMPLE / "penguins.csv")
    result = run_cli("oner", penguins, "-y", "species", "--test", penguins, "-o", str(tmp_path / "m.json"), "-q")
    assert result.code == 0, result.stderr
    assert heard == ["given back", "test read"]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_glibc_is_asked_to_give_memory_back():
    assert memory._libc("malloc_trim") is not None
    memory.give_back()
