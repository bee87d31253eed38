"""Rules distilled from a forest beside rules learned from the true classes, as many of them.

    python bench/distill.py [--splits 2] [--learner ripper]

On every table `bench/wide.py` has split (run it first): a forest learns from the train
file; the rule learner learns from it too (its rule count n); `rulecli distill` learns n
rules at most from the forest's labels of the same rows. All three are scored on the test
file, and the distilled rules' fidelity (agreement with the forest) there. Prints a
Markdown summary: every table, and the tables where the forest beats the plain rules by
more than two points (where imitating it can pay).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness import OUT, RULECLI

SPLITS = OUT / "wide" / "splits"
EXTRA: list[str] = []  # more distill options
WORK = OUT / "distill"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RULECLI, *args], capture_output=True, text=True)


def _accuracy(model: Path, test: Path) -> float | None:
    out = _run("evaluate", str(model), str(test), "--json")
    return json.loads(out.stdout)["accuracy"] if out.returncode == 0 else None


def _one(folder: Path, split: str, learner: str) -> dict[str, object] | None:
    train, test = folder / f"{split}.train.arff", folder / f"{split}.test.arff"
    if not train.exists():
        return None
    stem = WORK / f"{folder.name}_{split}"
    forest, plain, distilled = (Path(f"{stem}.{kind}.json") for kind in ("forest", "plain", "distilled"))
    if _run("forest", str(train), "-q", "-o", str(forest)).returncode:
        return None
    if _run(learner, str(train), "-q", "-o", str(plain)).returncode:
        return None
    rules = max(1, len(json.loads(plain.read_text())["rules"]))
    made = _run(
        "distill", str(forest), str(train), "--learner", learner, "--test", str(test), "--max-rules", str(rules),
        "-q", "-o", str(distilled), *EXTRA,
    )  # fmt: skip
    if made.returncode:
        return {"table": folder.name, "failed": made.stderr.strip()[:120]}
    record = json.loads(distilled.read_text())["training"]["distilled"]
    return {
        "table": folder.name,
        "forest": _accuracy(forest, test),
        "plain": _accuracy(plain, test),
        "distilled": record["accuracy"]["rules"],
        "fidelity": record["fidelity"],
        "rules": rules,
        "distilled_rules": len(json.loads(distilled.read_text())["rules"]),
    }


def _summary(rows: list[dict[str, object]], title: str) -> str:
    def mean(key: str) -> float:
        return statistics.mean(float(r[key]) for r in rows)  # type: ignore[arg-type]

    wins = sum(float(r["distilled"]) > float(r["plain"]) + 0.005 for r in rows)  # type: ignore[arg-type]
    losses = sum(float(r["distilled"]) < float(r["plain"]) - 0.005 for r in rows)  # type: ignore[arg-type]
    return (
        f"| {title} | {len(rows)} | {mean('forest'):.4f} | {mean('plain'):.4f} / {mean('rules'):.1f} | "
        f"{mean('distilled'):.4f} / {mean('distilled_rules'):.1f} | {mean('fidelity'):.4f} | "
        f"{wins} / {len(rows) - wins - losses} / {losses} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--splits", type=int, default=2)
    parser.add_argument("--learner", default="ripper")
    parser.add_argument("--tables", default="", help="comma-separated (default: every table)")
    parser.add_argument("--synthetic", default=None, help="distill's --synthetic (default: its own)")
    args = parser.parse_args()
    if not SPLITS.exists():
        sys.exit("run bench/wide.py first: it writes the split files")
    WORK.mkdir(parents=True, exist_ok=True)
    chosen = set(args.tables.split(",")) if args.tables else None
    folders = [f for f in sorted(SPLITS.iterdir()) if chosen is None or f.name in chosen]
    jobs = [(folder, f"0.{k}") for folder in folders for k in range(args.splits)]
    if args.synthetic is not None:
        EXTRA.extend(["--synthetic", args.synthetic])
    with ThreadPoolExecutor(2) as pool:
        results = [r for r in pool.map(lambda job: _one(*job, args.learner), jobs) if r]
    done = [r for r in results if "failed" not in r and None not in (r["forest"], r["plain"])]
    ahead = [r for r in done if float(r["forest"]) > float(r["plain"]) + 0.02]  # type: ignore[arg-type]
    print(f"{args.learner}, {len(done)} splits of {len(results)} ({len(results) - len(done)} failed)\n")
    print(
        f"| splits | count | forest | {args.learner} from the true classes: accuracy / rules | "
        "distilled from the forest: accuracy / rules | fidelity | distilled vs plain: wins / ties / losses |"
    )
    print("|---|---|---|---|---|---|---|")
    print(_summary(done, "all"))
    if ahead:
        print(_summary(ahead, "the forest > 2 points ahead"))
    for r in results:
        if "failed" in r:
            print(f"\nfailed: {r['table']}: {r['failed']}")


if __name__ == "__main__":
    main()
