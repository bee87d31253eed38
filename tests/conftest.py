from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

from rulecli.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
# options that make the slow learners quick on a test table (a hostile one, a pattern-named
# one, weighted rows): fewer trees and iterations, and the settings aq and reduct would
# otherwise choose by cross-validation fixed
QUICK = {
    "forest": ["--trees", "3"],
    "brl": ["--iterations", "300"],
    "aq": ["--max-error", "0.1", "--min-share", "0", "--majority-rules", "keep"],
    "reduct": ["--precision", "0.9", "--min-share", "0.01", "--majority-rules", "keep"],
}

settings.register_profile(
    "ci", derandomize=True, max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None)
settings.register_profile(
    "thorough", derandomize=True, max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str


# the slowest learners of a case that runs over every learner: their runs live in make
# test-slow, so make test stays under four minutes on two cores (aq's seeds search every
# row; reduct chooses its precision by a CV of four settings)
SLOWEST = ("aq", "reduct")


def slow_for(names: list[str], slow: tuple[str, ...] = SLOWEST) -> list[object]:
    """``names`` for ``pytest.mark.parametrize``, the ``slow`` ones (and their variants,
    ``aq-support``) marked slow."""
    return [pytest.param(n, marks=pytest.mark.slow) if n.split("-")[0] in slow else n for n in names]


def run_cli(*args: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> Run:
    """Run the command in this process, through Typer's CliRunner streams and rulecli's own
    entry point (its one-line errors and exit codes), as the installed command would."""
    runner = CliRunner()
    with contextlib.chdir(cwd or Path.cwd()), runner.isolation(input=stdin, env={"NO_COLOR": "1"}) as (out, err, _):
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        return Run(code, out.getvalue().decode(errors="replace"), err.getvalue().decode(errors="replace"))


def run_subprocess(*args: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> Run:
    """Run the real entry point (`python -m rulecli`) in a subprocess."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR",)}
    env["NO_COLOR"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "rulecli", *args],
        input=data,
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )
    return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def run_at_a_terminal(
    *args: str, stream: str = "stdout", cwd: Path | None = None, env: dict[str, str] | None = None
) -> str:
    """The real command's ``stream`` ("stdout" or "stderr") when it is a terminal (a
    pseudo-terminal here), the other one discarded; the command must succeed."""
    import pty

    leader, follower = pty.openpty()
    other = "stderr" if stream == "stdout" else "stdout"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulecli", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        **{stream: follower, other: subprocess.DEVNULL},  # type: ignore[arg-type]
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other side closed: the command ended
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.wait(timeout=120) == 0
    return seen.decode(errors="replace")


@pytest.fixture
def house() -> Path:
    return SAMPLE / "house.csv"


@pytest.fixture
def penguins() -> Path:
    return SAMPLE / "penguins.csv"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/ from what the learners print")
