"""Where ripper and JRip part: both without the grow/prune split, row by row.

    python bench/jrip_unpruned.py [--splits 2]

RIPPER's only random step is the stratified grow/prune split of each rule (and of each
rule the optimisation revisits). JRip seeds its generator from the text of one of the
table's rows, which rulecli does not reproduce, so with pruning on the two learn from other
rows and their rules differ by chance. With pruning off (`ripper --no-pruning`, JRip
`-P`) nothing is random: every other step (class order, FOIL gain and its ties, the
thresholds, the description length and its stopping rule) either agrees or shows here. On
every table `bench/wide.py` has split, both learn from the same train file and predict
the same test file; a table agrees when the rule counts are equal and every test row gets
the same class.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness import OUT, RULECLI, WEKA_JAR, weka_available

SPLITS = OUT / "wide" / "splits"
ROW = re.compile(r"^\s*\d+\s+\S+\s+(\d+):")


def _classes(arff: Path) -> list[str]:
    """The class attribute's values in header order (the class is the last attribute)."""
    attributes = [line for line in arff.read_text().splitlines() if line.lower().startswith("@attribute")]
    values = attributes[-1][attributes[-1].index("{") + 1 : attributes[-1].rindex("}")]
    return [v.strip().strip("'\"") for v in values.split(",")]


def _jrip(train: Path, test: Path) -> tuple[int, list[int]] | None:
    """JRip -P's rule count (the default rule included) and each test row's class index."""
    java = ["java", "-Xmx2g", "-cp", str(WEKA_JAR), "weka.classifiers.rules.JRip", "-P", "-t", str(train)]
    model = subprocess.run(java, capture_output=True, text=True)
    predicted = subprocess.run([*java, "-T", str(test), "-p", "0"], capture_output=True, text=True)
    rules = re.search(r"Number of Rules : (\d+)", model.stdout)
    rows = [int(m.group(1)) - 1 for m in map(ROW.match, predicted.stdout.splitlines()) if m]
    return (int(rules.group(1)), rows) if rules and rows else None


def _ours(train: Path, test: Path, model: Path) -> tuple[int, list[str]] | None:
    fitted = subprocess.run([*RULECLI, "ripper", str(train), "--no-pruning", "-q", "-o", str(model)])
    if fitted.returncode:
        return None
    out = subprocess.run(
        [*RULECLI, "predict", str(model), str(test), "--json", "-q"], capture_output=True, text=True, check=True
    )
    rules = len(json.loads(model.read_text())["rules"]) + 1
    return rules, [json.loads(line)["prediction"] for line in out.stdout.splitlines()]


def _compare(folder: Path, split: str) -> dict[str, object] | None:
    train, test = folder / f"{split}.train.arff", folder / f"{split}.test.arff"
    if not train.exists():
        return None
    theirs = _jrip(train, test)
    ours = _ours(train, test, OUT / f"unpruned_{folder.name}_{split}.json")
    if theirs is None or ours is None or len(theirs[1]) != len(ours[1]):
        return {"table": folder.name, "split": split, "failed": "ripper" if ours is None else "jrip"}
    classes = _classes(train)
    index = {c: i for i, c in enumerate(classes)}
    same = sum(index.get(p, -1) == j for p, j in zip(ours[1], theirs[1], strict=True))
    return {
        "table": folder.name,
        "split": split,
        "jrip": theirs[0],
        "ripper": ours[0],
        "rows": len(ours[1]),
        "same": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--splits", type=int, default=2, help="splits per table (of bench/wide.py's)")
    args = parser.parse_args()
    if not weka_available() or not SPLITS.exists():
        sys.exit("needs Weka and the split files of bench/wide.py")
    jobs = [(folder, f"0.{k}") for folder in sorted(SPLITS.iterdir()) for k in range(args.splits)]
    with ThreadPoolExecutor(2) as pool:
        results = [r for r in pool.map(lambda job: _compare(*job), jobs) if r]
    agree = [r for r in results if "failed" not in r and r["jrip"] == r["ripper"] and r["same"] == r["rows"]]
    lines = [
        "| table | split | JRip -P rules | ripper --no-pruning rules | test rows | same class |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        if r not in agree:
            cells = [
                r["table"],
                r["split"],
                *(r.get(k, r.get("failed", "")) for k in ("jrip", "ripper", "rows", "same")),
            ]
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    print(f"{len(agree)} of {len(results)} splits agree on every test row and the rule count; the others:\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
