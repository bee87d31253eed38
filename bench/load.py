"""Every learner on a wide table (1,000 columns) and a long one (1M rows): it finishes, or
stops with one clear line (here `--time-limit`), never hangs."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import polars as pl
from harness import _WRAPPER, OUT, RULECLI, synthetic

LEARNERS = ["oner", "ripper", "cn2", "aq", "tree", "forest", "reduct", "brl"]


def wide_table(n: int = 5000, d: int = 1000, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    columns = {f"x{j}": rng.normal(size=n).round(2) for j in range(d)}
    columns["y"] = np.where(columns["x0"] - columns["x1"] + rng.normal(0, 1, n) > 0, "a", "b")
    return pl.DataFrame(columns)


def attempt(cmd: list[str], limit: float) -> str:
    """Wall time and peak memory of one run, or the one line it stopped with."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *cmd], capture_output=True, text=True, timeout=limit + 600)
    if proc.returncode == 0:
        elapsed, rss_kib = proc.stdout.split()
        return f"{float(elapsed):.1f} s, {int(rss_kib) / 1024:.0f} MiB"
    line = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
    return f"stopped after {time.perf_counter() - started:.0f} s: `{line.strip()}`"


def bench_load(limit: float) -> list[str]:
    wide, long = OUT / "load_wide.parquet", OUT / "load_long.parquet"
    wide_table().write_parquet(wide)
    synthetic(1_000_000, seed=3).write_parquet(long)
    lines = [
        "| learner | 5,000 rows × 1,000 numeric columns | 1,000,000 rows × 20 columns |",
        "|---|---|---|",
    ]
    for learner in LEARNERS:
        cells = []
        for path, target in ((wide, "y"), (long, "class")):
            cmd = [*RULECLI, learner, str(path), "-y", target, "-q", "--time-limit", str(limit)]
            cells.append(attempt([*cmd, "-o", str(OUT / f"load_{learner}.json")], limit))
        lines.append(f"| {learner} | " + " | ".join(cells) + " |")
    return lines
