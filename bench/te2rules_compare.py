"""distill beside TE2Rules on two-class tables: the same small forest, explained by rules.

    python bench/te2rules_compare.py [--trees 10] [--depth 3] [--timeout 300]

TE2Rules (Lal et al. 2022, `pip install te2rules` in bench-env) explains a scikit-learn
forest of two classes with rules for the positive class, mined from the trees' nodes; its
paper's setting is 10 trees of depth 3. On the first split of every two-class table that
`bench/wide.py` has written (run it first), both sides grow such a forest on the train
file: scikit-learn's for TE2Rules (categorical columns one-hot, missing numbers as the
column's median) and rulecli's (`forest -B 10 --max-depth 3`) for `rulecli distill`
(ripper rules from the forest's labels). Each is scored on the test file: the forest's
accuracy, the rules' accuracy and fidelity (agreement with their forest), rule count, and
the explainer's seconds (whole process for rulecli, the explain call for TE2Rules).
Prints a Markdown table and the means.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import polars as pl
from harness import OUT, RULECLI

SPLITS = OUT / "wide" / "splits"
ANCHOR = Path(__file__).resolve().parent / ".venv-anchors" / "bin" / "python"

TE2RULES = r"""
import json, sys, time
import numpy as np, pandas as pd
from sklearn.ensemble import RandomForestClassifier
from te2rules.explainer import ModelExplainer
train, test = pd.read_csv(sys.argv[1]), pd.read_csv(sys.argv[2])
target, trees, depth = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
both = pd.concat([train, test], keys=["train", "test"])
y = both.pop(target).astype(str)
numeric = both.select_dtypes("number")
text = both.drop(columns=numeric.columns)
parts = [numeric.fillna(numeric.median())] + ([pd.get_dummies(text.astype(str), dtype=float)] if text.shape[1] else [])
both = pd.concat(parts, axis=1)
both.columns = [f"f{k}" for k in range(both.shape[1])]  # TE2Rules parses its rules' text: plain names
classes = sorted(y.unique())
x_train, x_test = both.loc["train"].to_numpy(), both.loc["test"].to_numpy()
y_train, y_test = (y.loc[p].map({classes[0]: 0, classes[1]: 1}).to_numpy() for p in ("train", "test"))
forest = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0).fit(x_train, y_train)
started = time.perf_counter()
explainer = ModelExplainer(model=forest, feature_names=list(both.columns))
rules = explainer.explain(X=x_train.tolist(), y=forest.predict(x_train).tolist())
seconds = time.perf_counter() - started
said = np.array(explainer.predict(x_test.tolist()))
teacher = forest.predict(x_test)
print(json.dumps({"forest": float((teacher == y_test).mean()), "rules_accuracy": float((said == y_test).mean()),
                  "fidelity": float((said == teacher).mean()), "rules": len(rules), "seconds": seconds}))
"""


def _rulecli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RULECLI, *args], capture_output=True, text=True)


def _predictions(model: Path, data: Path) -> pl.Series:
    out = _rulecli("predict", str(model), str(data))
    return pl.read_csv(out.stdout.encode(), infer_schema_length=0)["prediction"]


def ours(train: Path, test: Path, target: str, trees: int, depth: int, work: Path) -> dict[str, float] | None:
    forest, rules = work / "forest.json", work / "rules.json"
    grown = _rulecli(
        "forest", str(train), "-y", target, "-B", str(trees), "--max-depth", str(depth), "-q", "-o", str(forest)
    )
    if grown.returncode:
        return None
    started = time.perf_counter()
    made = _rulecli("distill", str(forest), str(train), "-q", "-o", str(rules))
    seconds = time.perf_counter() - started
    if made.returncode:
        return None
    truth = pl.read_csv(test, infer_schema_length=0)[target]
    teacher, said = _predictions(forest, test), _predictions(rules, test)
    count = len(json.loads(rules.read_text())["rules"])
    return {
        "forest": float((teacher == truth).mean()),
        "rules_accuracy": float((said == truth).mean()),
        "fidelity": float((said == teacher).mean()),
        "rules": count,
        "seconds": seconds,
    }


def theirs(train: Path, test: Path, target: str, trees: int, depth: int, timeout: float) -> dict[str, float] | None:
    try:
        done = subprocess.run(
            [str(ANCHOR), "-c", TE2RULES, str(train), str(test), target, str(trees), str(depth)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    return json.loads(done.stdout) if done.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    rows = []
    for folder in sorted(SPLITS.iterdir()):
        train, test = folder / "0.0.train.csv", folder / "0.0.test.csv"
        schema = folder / "0.0.train.schema.json"
        if not train.exists() or not schema.exists():
            continue
        target = json.loads(schema.read_text())["target"]
        if pl.read_csv(train, infer_schema_length=0)[target].n_unique() != 2:
            continue
        with tempfile.TemporaryDirectory() as work:
            a = ours(train, test, target, args.trees, args.depth, Path(work))
        b = theirs(train, test, target, args.trees, args.depth, args.timeout)
        rows.append((folder.name, a, b))
        print(folder.name, a, b, flush=True, file=__import__("sys").stderr)

    def cell(r: dict[str, float] | None) -> str:
        if r is None:
            return "failed"
        if "timeout" in r:
            return f"over {r['timeout']:.0f} s"
        return (
            f"{r['forest']:.3f} | {r['rules_accuracy']:.3f} | {r['fidelity']:.3f} | {r['rules']} | {r['seconds']:.1f}"
        )

    print(
        "| table | rulecli: forest | rules | fidelity | rules | s | TE2Rules: forest | rules | fidelity | rules | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {cell(a)} | {cell(b)} |")
    both = [(a, b) for _, a, b in rows if a and b and "timeout" not in b]
    for side, k in (("rulecli distill", 0), ("TE2Rules", 1)):
        picked = [pair[k] for pair in both]
        means = {m: statistics.mean(p[m] for p in picked) for m in ("forest", "rules_accuracy", "fidelity", "rules")}
        print(
            f"\n{side} on the {len(both)} tables both finished: forest {means['forest']:.4f}, rules "
            f"{means['rules_accuracy']:.4f}, fidelity {means['fidelity']:.4f}, {means['rules']:.1f} rules"
        )


if __name__ == "__main__":
    main()
