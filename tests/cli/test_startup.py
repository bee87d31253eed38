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


MALLOC_PROBE = """
import ctypes, os, sys
import numpy as np
from rulecli.cli.app import keep_freed_memory

FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"

class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS.split()]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
keep_freed_memory()
before = libc.mallinfo2().hblks
block = np.ones((10 << 20) // 8)  # 10 MiB: mapped on its own below the threshold
print(libc.mallinfo2().hblks - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
@pytest.mark.parametrize(("environment", "mapped"), [({}, 0), ({"MALLOC_MMAP_THRESHOLD_": "131072"}, 1)])
def test_large_arrays_come_from_the_heap_unless_the_environment_says_otherwise(environment: dict, mapped: int):
    """The commands keep freed memory for the next large array (no pages zeroed anew each
    step); a threshold set in the environment is left as it is."""
    import ctypes
    import os

    if not hasattr(ctypes.CDLL(None), "mallinfo2"):
        pytest.skip("no glibc 2.33 mallinfo2 here")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | environment
    proc = subprocess.run([sys.executable, "-c", MALLOC_PROBE], capture_output=True, text=True, check=True, env=env)
    assert int(proc.stdout.strip()) == mapped


BLAS_PROBE = """
import sys
from rulecli.cli import app


def command(argv):  # a command that loads the kernels the covering learners and trees use
    from rulecli.counting import kernel

    kernel.start()
    import numba.np.arraymath

    print("during", numba.np.arraymath._HAVE_BLAS, file=sys.stderr)


app._main = command
try:
    app.main([])
except SystemExit:
    pass
import scipy.linalg  # the command over, it imports as before

print("after", type(sys.modules["scipy.linalg"]).__name__, file=sys.stderr)
"""


def test_a_command_loads_numbas_kernels_without_scipys_linear_algebra():
    """Numba imports SciPy's linear algebra (0.13-0.28 s) to see whether BLAS could serve
    np.dot, which no kernel calls; a command skips it while it runs, the Python API never."""
    pytest.importorskip("scipy")
    proc = subprocess.run([sys.executable, "-c", BLAS_PROBE], capture_output=True, text=True, check=False)
    assert proc.stderr.strip().splitlines()[-2:] == ["during False", "after module"], proc.stderr
    api = "from rulecli.counting import kernel; kernel.start(); import numba.np.arraymath as m; print(m._HAVE_BLAS)"
    proc = subprocess.run([sys.executable, "-c", api], capture_output=True, text=True, check=False)
    assert proc.stdout.strip() == "True", proc.stderr


def test_predict_loads_none_of_the_learning_machinery(tmp_path):
    """The API's parts load as they are called: scoring a rule list reads no learner's code."""
    model = tmp_path / "m.json"
    subprocess.run(
        [sys.executable, "-m", "rulecli", "oner", "sample_data/house.csv", "-y", "value", "-q", "-o", str(model)],
        check=True,
    )
    probe = PROBE.replace(
        '("polars", "numpy", "pyarrow", "rulecli.learners.ripper")',
        '("rulecli.api.learning", "rulecli.counting", "rulecli.learners.oner")',
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, "predict", str(model), "sample_data/house.csv", "-o", str(tmp_path / "p.csv")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr
    assert (tmp_path / "p.csv").read_text().startswith("prediction")
