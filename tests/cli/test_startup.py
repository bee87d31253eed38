"""Start-up: listing commands and the version load no data library (the latency shell users feel)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from rulecli.cli.app import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in ("polars", "numpy", "pyarrow", "rulecli.learners.ripper") if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--version"], ["--help"], []])
def test_version_and_help_import_no_data_library(args: list[str]):
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=False)
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr
    assert "rulecli" in proc.stdout or "Usage" in proc.stdout


def test_a_learner_command_loads_only_its_own_learner():
    probe = PROBE.replace('"rulecli.learners.ripper"', '"rulecli.learners.ripper", "rulecli.learners.brl"')
    proc = subprocess.run(
        [sys.executable, "-c", probe, "ripper", "--help"], capture_output=True, text=True, check=False
    )
    assert "rulecli.learners.brl" not in proc.stderr.strip().splitlines()[-1]
    assert "--prune-metric" in proc.stdout
