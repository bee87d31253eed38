"""The command end to end: in-process through Typer's CliRunner, and a few runs of the real
entry point (`python -m rulecli`) in a subprocess for the entry point itself and its pipes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from rulecli import __version__
from tests.conftest import SAMPLE, run_cli, run_subprocess

HOUSE = str(SAMPLE / "house.csv")
PENGUINS = str(SAMPLE / "penguins.csv")

HOUSE_RULES = """\
IF size = 'big' THEN value = 'high'  (covers 2, correct 2)
IF size = 'medium' THEN value = 'medium'  (covers 4, correct 3)
IF size = 'small' THEN value = 'low'  (covers 4, correct 2)
ELSE value = 'medium'  (covers 0, correct 0)
"""


def test_version():
    result = run_subprocess("--version")
    assert result.code == 0 and result.stdout == f"rulecli {__version__}\n"


def test_oner_house_prints_the_rules_and_stays_quiet_off_a_terminal():
    result = run_subprocess("oner", HOUSE, "-y", "value")
    assert result.code == 0, result.stderr
    assert result.stdout == HOUSE_RULES
    assert result.stderr == ""


def test_quiet_keeps_the_model_when_stdout_is_where_it_goes(tmp_path: Path):
    # `-q > model.txt` wrote an empty file: with no -o the model is the requested data
    quiet = run_subprocess("oner", HOUSE, "-y", "value", "-q")
    assert quiet.code == 0 and quiet.stdout == HOUSE_RULES and quiet.stderr == ""
    saved = run_cli("oner", HOUSE, "-y", "value", "-q", "-o", str(tmp_path / "m.txt"))
    assert saved.code == 0 and saved.stdout == ""  # with -o, quiet is quiet


def test_debug_is_taken_after_the_command_too():
    # errors say "rerun with --debug"; after the command it was "No such option: --debug"
    after = run_subprocess("oner", HOUSE, "-y", "no-such-column", "--debug")
    before = run_subprocess("--debug", "oner", HOUSE, "-y", "no-such-column")
    assert "No such option" not in after.stderr and "Traceback" in after.stderr
    assert after.stderr.splitlines()[-1] == before.stderr.splitlines()[-1] and "no-such-column" in after.stderr


def test_model_files_json_and_text(tmp_path: Path):
    json_path, text_path = tmp_path / "m.json", tmp_path / "m.txt"
    assert run_cli("oner", HOUSE, "-o", str(json_path), "-q").code == 0
    assert run_cli("oner", HOUSE, "-o", str(text_path), "-q").code == 0
    body = json.loads(json_path.read_text())
    assert body["algorithm"] == "oner" and body["params"]["seed"] == 0
    assert body["schema"]["target"]["classes"] == ["high", "low", "medium"]
    assert body["training"]["errors"] == {"location": 4, "pets": 4, "size": 3}
    assert text_path.read_text() == HOUSE_RULES
    stdout_json = run_cli("oner", HOUSE, "--json").stdout
    assert stdout_json == json_path.read_text()


def test_same_options_same_bytes_and_csv_equals_parquet(tmp_path: Path):
    parquet = tmp_path / "p.parquet"
    pl.read_csv(PENGUINS).write_parquet(parquet)
    outputs = []
    for source in (PENGUINS, PENGUINS, str(parquet)):
        out = tmp_path / f"m{len(outputs)}.json"
        assert run_cli("oner", source, "-y", "species", "--seed", "7", "-o", str(out), "-q").code == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]


def test_predict_with_keep_proba_explain(tmp_path: Path):
    model = tmp_path / "m.json"
    run_cli("oner", HOUSE, "-o", str(model), "-q")
    result = run_cli("predict", str(model), HOUSE, "--keep", "size", "--proba", "--explain")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "size,prediction,proba_high,proba_low,proba_medium,rule,rule_text"
    assert lines[1] == "small,low,0.25,0.5,0.25,3,size = 'small'"
    assert len(lines) == 11


def test_predict_writes_parquet_and_handles_unseen_and_missing(tmp_path: Path):
    model = tmp_path / "m.json"
    run_cli("oner", HOUSE, "-o", str(model), "-q")
    new = tmp_path / "new.csv"
    new.write_text("size,other\nhuge,1\n,2\nbig,3\n")
    out = tmp_path / "p.parquet"
    result = run_cli("predict", str(model), str(new), "-o", str(out), "--explain")
    assert result.code == 0, result.stderr
    df = pl.read_parquet(out)
    assert df.get_column("prediction").to_list() == ["medium", "medium", "high"]
    assert df.get_column("rule").to_list() == ["default", "default", "1"]


def test_pipes_model_from_stdin_and_data_from_stdin(tmp_path: Path):
    rules = run_subprocess("oner", HOUSE).stdout
    by_model = run_subprocess("predict", "-", HOUSE, stdin=rules)
    assert by_model.code == 0, by_model.stderr
    by_data = run_subprocess("oner", "-", "-y", "value", stdin=Path(HOUSE).read_text())
    assert by_data.stdout == HOUSE_RULES
    both = run_cli("predict", "-", "-", stdin="x")
    assert both.code == 2 and "cannot both come from stdin" in both.stderr


def test_evaluate_gate_passes_and_fails(tmp_path: Path):
    model = tmp_path / "m.json"
    run_cli("oner", HOUSE, "-o", str(model), "-q")
    ok = run_cli("evaluate", str(model), HOUSE, "--min-accuracy", "0.7", "--json")
    assert ok.code == 0, ok.stderr
    payload = json.loads(ok.stdout)
    assert payload["accuracy"] == 0.7 and payload["gates"]["passed"]
    assert [r["covered"] for r in payload["rules"]] == [2, 4, 4, 0]
    bad = run_cli("evaluate", str(model), HOUSE, "--min-accuracy", "0.95", "--min-f1", "0.5")
    assert bad.code == 1
    assert bad.stderr.strip() == "quality gate failed: accuracy 0.7000 < 0.9500 (--min-accuracy), short by 0.2500"


def test_hand_written_rules_as_a_ci_check(tmp_path: Path):
    rules = tmp_path / "rules.txt"
    rules.write_text(
        "# expectations for the house table\n"
        "IF size = 'big' AND location = 'good' THEN value = 'high'\n"
        "IF location = 'bad' THEN value = 'low'\n"
        "ELSE value = 'medium'\n"
    )
    result = run_cli("evaluate", str(rules), HOUSE, "--min-coverage", "0.9", "--json")
    assert result.code == 1
    payload = json.loads(result.stdout)
    assert payload["coverage"] == 0.7
    assert "coverage 0.7000 < 0.9000" in result.stderr


def test_cv_and_test_report_metrics(tmp_path: Path):
    metrics = tmp_path / "metrics.json"
    result = run_cli(
        "oner", PENGUINS, "-y", "species", "--cv", "5", "--test", PENGUINS, "--metrics-out", str(metrics), "-q"
    )
    assert result.code == 0, result.stderr
    report = json.loads(metrics.read_text())
    assert len(report["cv"]["folds"]) == 5
    assert 0.6 < report["cv"]["summary"]["accuracy"]["mean"] < 0.95
    assert report["test"]["rows"] == 344


def test_target_bins_make_a_numeric_target_a_class(tmp_path: Path):
    result = run_cli("oner", PENGUINS, "-y", "body_mass_g", "--target-bins", "4", "--json")
    assert result.code == 0, result.stderr
    body = json.loads(result.stdout)
    assert len(body["classes"]) == 4 and body["classes"][0].startswith("[2700,")
    model = tmp_path / "m.json"
    model.write_text(result.stdout)
    evaluated = run_cli("evaluate", str(model), PENGUINS, "--json")
    assert evaluated.code == 0 and json.loads(evaluated.stdout)["rows"] == 342


def test_discretize_learns_and_reapplies_cuts(tmp_path: Path):
    cuts, out, again = tmp_path / "cuts.json", tmp_path / "d.csv", tmp_path / "e.csv"
    result = run_cli(
        "discretize", PENGUINS, "-y", "species", "--discretize", "mdlp", "--cuts-out", str(cuts), "-o", str(out)
    )
    assert result.code == 0, result.stderr
    saved = json.loads(cuts.read_text())
    assert saved["format"] == "rulecli-cuts" and {c["column"] for c in saved["cuts"]} >= {"bill_length_mm"}
    df = pl.read_csv(out)
    assert df.schema["bill_length_mm"] == pl.String
    assert df.get_column("bill_length_mm").drop_nulls()[0][0] in "[("
    assert run_cli("discretize", PENGUINS, "--cuts", str(cuts), "-o", str(again)).code == 0
    assert again.read_text() == out.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["oner", "nope.csv"], "nope.csv: no such file"),
        (["oner", "sample_data"], "sample_data: is a directory"),
        (["oner", "sample_data/README.md"], "unknown file extension '.md'"),
        (["oner", "sample_data/house.csv", "-y", "price"], "column 'price' given with --target is not in the data"),
        (["oner", "sample_data/house.csv", "--discretize", "magic"], "--discretize must be one of"),
        (["oner", "sample_data/house.csv", "-o", "m.pkl"], "must end in .json or .txt"),
        (["discretize", "sample_data/house.csv", "--discretize", "kmeans"], "--discretize must be one of"),
        (["predict", "sample_data/house.csv", "sample_data/house.csv"], "sample_data/house.csv:1:1: expected IF"),
        (["oner", "sample_data/house.csv", "--test", "sample_data/labor.csv"], "sample_data/labor.csv: column 'size'"),
        (["evaluate", "sample_data/house.csv", "x.csv", "--min-accuracy", "2"], "Invalid value for '--min-accuracy'"),
        (["oner", "sample_data/house.csv", "--bogus"], "No such option: --bogus"),
        (["nosuch"], "No such command 'nosuch'"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args, message):
    result = run_cli(*args, cwd=SAMPLE.parent)
    assert result.code == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def _bad_files(tmp: Path) -> dict[str, tuple[str, str]]:
    files = {
        "empty.csv": ("", "file is empty"),
        "header.csv": ("a,b\n", "no data rows"),
        "ragged.csv": ("a,b\n1,2\n3,4,5\n", "ragged.csv"),
        "dupe.csv": ("a,a,b\n1,2,x\n3,4,y\n", "ragged.csv" if False else "dupe.csv"),
        "latin1.csv": (b"a,b\n\xe9t\xe9,x\nb,y\n", "latin1.csv"),
        "oneclass.csv": ("a,b\n1,x\n2,x\n", "single class"),
    }
    for name, (content, _) in files.items():
        path = tmp / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return {name: (str(tmp / name), message) for name, (_, message) in files.items()}


def test_bad_data_files_are_refused_in_one_line(tmp_path: Path):
    for name, (path, message) in _bad_files(tmp_path).items():
        result = run_cli("oner", path)
        assert result.code == 2, (name, result.stderr)
        assert message in result.stderr, (name, result.stderr)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, name


def test_bad_models_and_mismatched_data(tmp_path: Path):
    model = tmp_path / "m.json"
    run_cli("oner", HOUSE, "-o", str(model), "-q")
    text = model.read_text()
    (tmp_path / "cut.json").write_text(text[:100])
    newer = json.loads(text)
    newer["format_version"] = 2
    (tmp_path / "newer.json").write_text(json.dumps(newer))
    (tmp_path / "nosize.csv").write_text("location,pets\ngood,yes\n")
    (tmp_path / "num.csv").write_text("age,v\nold,a\n")
    (tmp_path / "age.txt").write_text("IF age > 3 THEN v = 'a'\nELSE v = 'b'\n")
    cases = [
        (["predict", str(tmp_path / "cut.json"), HOUSE], "truncated or corrupt"),
        (["predict", str(tmp_path / "newer.json"), HOUSE], "newer than this rulecli reads"),
        (["predict", str(model), str(tmp_path / "nosize.csv")], "column 'size' is needed by the model but missing"),
        (["predict", str(tmp_path / "age.txt"), str(tmp_path / "num.csv")], "age"),
    ]
    for args, message in cases:
        result = run_cli(*args)
        assert result.code == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_failed_predict_leaves_no_output_file(tmp_path: Path):
    rules = tmp_path / "r.txt"
    rules.write_text("IF age > 3 THEN v = 'a'\nELSE v = 'b'\n")
    data = tmp_path / "d.csv"
    data.write_text("age\n" + "1\n" * 5000 + "old\n")
    out = tmp_path / "out.csv"
    result = run_cli("predict", str(rules), str(data), "-o", str(out))
    assert result.code == 2, result.stderr
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "r.txt"]


def test_parquet_and_arrow_on_stdin_are_known_by_their_magic_bytes(tmp_path: Path):
    frame = pl.read_csv(HOUSE)
    expected = run_cli("oner", HOUSE, "-y", "value").stdout
    for suffix, write in (("parquet", frame.write_parquet), ("arrow", frame.write_ipc)):
        path = tmp_path / f"h.{suffix}"
        write(path)
        result = run_cli("oner", "-", "-y", "value", stdin=path.read_bytes())
        assert result.code == 0, result.stderr
        assert result.stdout == expected


def test_a_mistyped_column_suggests_the_closest_name():
    result = run_cli("oner", PENGUINS, "-y", "specie")
    assert result.code == 2 and "did you mean 'species'?" in result.stderr


def test_a_missing_test_file_is_reported_before_cross_validation_runs():
    result = run_cli("ripper", PENGUINS, "-y", "species", "--cv", "10", "--test", "no-such.csv")
    assert result.code == 2 and result.stderr == "Error: no-such.csv: no such file\n"


@pytest.mark.parametrize(
    "learner",
    [
        ["cn2", "--unordered"],
        ["cn2", "--unordered", "--vote", "best"],
        ["ripper", "--unordered"],
        ["aq"],
        ["reduct", "--vote", "support"],
    ],
)
def test_every_rule_set_printed_as_text_predicts_as_its_json(tmp_path: Path, learner: list[str]):
    printed = run_cli(*learner, PENGUINS, "-y", "species")
    assert printed.code == 0, printed.stderr
    model = tmp_path / "m.json"
    assert run_cli(*learner, PENGUINS, "-y", "species", "-o", str(model), "-q").code == 0
    from_text = run_cli("predict", "-", PENGUINS, "--proba", stdin=printed.stdout)
    from_json = run_cli("predict", str(model), PENGUINS, "--proba")
    if "distribution" in printed.stdout.splitlines()[0]:
        assert from_text.code == 0, from_text.stderr
        assert from_text.stdout == from_json.stdout  # class counts travel with the text form
    plain_text = run_cli("predict", "-", PENGUINS, stdin=printed.stdout)
    assert plain_text.code == 0, plain_text.stderr
    assert plain_text.stdout == run_cli("predict", str(model), PENGUINS).stdout


def test_a_time_out_names_only_options_the_command_has():
    from rulecli import learners
    from rulecli.cli.learn import _quicker

    assert "--max-depth" in _quicker(learners.get("tree")) and "--max-rules" not in _quicker(learners.get("tree"))
    assert "--iterations" in _quicker(learners.get("brl"))
    for name in learners.names():
        hint = _quicker(learners.get(name))
        flags = set(re.findall(r"--[a-z-]+", hint))
        assert flags <= set(learners_flags(name)), (name, hint)


def learners_flags(name: str) -> list[str]:
    from rulecli import learners
    from rulecli.cli import options

    return list(options.flags_of(learners.get(name).params).values())


def test_show_prints_a_saved_model_as_its_rules_or_json(tmp_path):
    house = str(SAMPLE / "house.csv")
    as_json, as_text = tmp_path / "m.json", tmp_path / "m.txt"
    for path in (as_json, as_text):
        assert run_cli("oner", house, "-o", str(path), "-q").code == 0
    assert run_cli("show", str(as_json)).stdout == as_text.read_text()
    assert run_cli("show", str(as_text)).stdout == as_text.read_text()
    assert run_cli("show", str(as_json), "--json").stdout == as_json.read_text()
    forest = tmp_path / "f.json"
    assert run_cli("forest", house, "-B", "2", "-o", str(forest), "-q").code == 0
    assert run_cli("show", str(forest)).code == 0
    missing = run_cli("show", str(tmp_path / "none.json"))
    assert missing.code == 2 and "no such file" in missing.stderr


def test_predict_keep_all_copies_every_input_column(tmp_path):
    house = str(SAMPLE / "house.csv")
    model = tmp_path / "m.json"
    assert run_cli("oner", house, "-o", str(model), "-q").code == 0
    out = run_cli("predict", str(model), house, "--keep-all", "--proba")
    assert out.stdout.splitlines()[0] == "location,size,pets,value,prediction,proba_high,proba_low,proba_medium"
    scored = tmp_path / "p.csv"
    assert run_cli("predict", str(model), house, "--keep-all", "-o", str(scored)).code == 0
    again = run_cli("predict", str(model), str(scored), "--keep-all")
    assert again.code == 2 and "already has a column 'prediction'" in again.stderr


def test_csv_layout_options_read_files_other_tools_write(tmp_path):
    latin = tmp_path / "l.csv"
    latin.write_bytes(
        "# exported by a spreadsheet\n\nnom;taille;classe\nJosé;1;a\nRenée;2;b\nZoë;1;a\n".encode("latin-1")
    )
    options = ["--delimiter", ";", "--encoding", "latin-1", "--skip-lines", "2"]
    model = tmp_path / "m.json"
    assert run_cli("oner", str(latin), "-y", "classe", *options, "-o", str(model), "-q").code == 0
    predicted = run_cli("predict", str(model), str(latin), *options, "--keep", "nom")
    assert predicted.code == 0 and predicted.stdout.splitlines()[1] == "José,a", predicted.stderr
    assert run_cli("evaluate", str(model), str(latin), *options, "--min-accuracy", "0.5", "--json").code == 0
    assert run_cli("discretize", str(latin), *options, "--discretize", "equal-width", "--bins", "2").code == 0
    plain = run_cli("oner", str(latin), "-y", "classe")
    assert plain.code == 2 and "--encoding" in plain.stderr
    bare = tmp_path / "n.tsv"
    bare.write_text("1\tx\ta\n2\ty\tb\n3\tx\ta\n")
    shown = run_cli("oner", str(bare), "--no-header", "--delimiter", "tab", "-y", "column_3")
    assert shown.code == 0 and "column_3 = 'a'" in shown.stdout, shown.stderr
    for bad, message in ((["--delimiter", ";;"], "one character"), (["--encoding", "klingon"], "known encoding")):
        result = run_cli("oner", str(latin), *bad)
        assert result.code == 2 and message in result.stderr


def test_cut_points_are_written_with_the_fewest_digits_that_keep_the_split(tmp_path):
    rows = [(1.11, "a"), (1.11, "a"), (1.11, "a"), (1.12, "b"), (1.12, "b"), (1.12, "b")] * 3
    rows += [(40.8, "a"), (40.9, "b")] * 3
    data = tmp_path / "d.csv"
    data.write_text("x,y\n" + "".join(f"{x},{y}\n" for x, y in rows))
    for learner, options in (("oner", ["--min-bucket", "1"]), ("reduct", []), ("aq", []), ("tree", [])):
        shown = run_cli(learner, str(data), "-y", "y", *options)
        assert shown.code == 0, shown.stderr
        assert "1.1150000000000002" not in shown.stdout and "40.849999999999994" not in shown.stdout
        assert re.search(r"\b(1\.115|40\.85)\b", shown.stdout), (learner, shown.stdout)
    cut = run_cli("discretize", str(data), "--discretize", "mdlp", "-y", "y", "--cuts-out", str(tmp_path / "c.json"))
    saved = (tmp_path / "c.json").read_text()
    assert cut.code == 0 and "1.115" in saved and "1.1150000000000002" not in saved


def test_schema_drift_is_never_silent(tmp_path):
    house = str(SAMPLE / "house.csv")
    model = tmp_path / "m.json"
    assert run_cli("oner", house, "-o", str(model), "-q").code == 0
    recoded = tmp_path / "recoded.csv"
    recoded.write_text("location,size,pets,value\ngood,1,yes,high\nbad,2,no,low\ngood,1,no,medium\n")
    result = run_cli("predict", str(model), str(recoded))
    assert result.code == 0 and len(result.stdout.splitlines()) == 4
    assert "column 'size': 100% of the rows in the data hold levels training never saw ('1', '2')" in result.stderr
    assert "it held text in training and holds numbers now" in result.stderr
    assert "rules 1, 2, 3 of 3 match no row" in result.stderr
    strict = run_cli("predict", str(model), str(recoded), "--strict")
    assert strict.code == 2 and strict.stderr.count("\n") == 1 and "(--strict; " in strict.stderr
    assert strict.stdout == ""
    assert run_cli("predict", str(model), str(recoded), "-q").stderr == ""
    typo = tmp_path / "typo.txt"
    typo.write_text("IF size = 'Big' THEN value = 'high'\nIF size = 'small' THEN value = 'YES'\nELSE value = 'low'\n")
    checked = run_cli("evaluate", str(typo), house, "--no-per-rule")
    assert "rule 1 tests size = 'Big', but no row in the data holds 'Big' (did you mean 'big'?)" in checked.stderr
    assert "1 class of the model never occurs in 'value' in the data: 'YES'" in checked.stderr
    assert "rule 1 of 2 matches no row" in checked.stderr
    assert run_cli("evaluate", str(typo), house, "--strict").code == 2
    clean = run_cli("evaluate", str(model), house, "--strict", "--no-per-rule")
    assert clean.code == 0 and "Warning" not in clean.stderr


def test_a_semicolon_csv_learns_what_its_comma_twin_does(tmp_path: Path):
    # a spreadsheet's CSV in much of Europe: ';' between fields and decimal commas
    frame = pl.read_csv(SAMPLE / "penguins.csv")
    semi = tmp_path / "semi.csv"
    text = frame.write_csv(separator=";")
    semi.write_text(re.sub(r"(\d)\.(\d)", r"\1,\2", text))
    ours = run_cli("tree", str(semi), "-y", "species", "-q")
    theirs = run_cli("tree", str(SAMPLE / "penguins.csv"), "-y", "species", "-q")
    assert ours.code == 0 and ours.stdout == theirs.stdout


def test_a_workbook_learns_the_model_its_csv_file_does(tmp_path: Path):
    # tables often arrive as .xlsx: a sheet by name, or the first; stdin known by its bytes
    penguins = pl.read_csv(SAMPLE / "penguins.csv")
    penguins.write_excel(tmp_path / "book.xlsx", worksheet="penguins")
    from_csv = run_cli("ripper", str(SAMPLE / "penguins.csv"), "-y", "species", "-q")
    for args in (["book.xlsx"], ["book.xlsx", "--sheet", "penguins"], ["book.xlsx", "--sheet", "1"]):
        learned = run_cli("ripper", *args, "-y", "species", "-q", cwd=tmp_path)
        assert learned.code == 0 and learned.stdout == from_csv.stdout, args
    piped = run_cli("oner", "-", "-y", "species", "-q", stdin=(tmp_path / "book.xlsx").read_bytes())
    assert piped.code == 0 and "species = 'Gentoo'" in piped.stdout
    refused = run_cli("oner", "book.xlsx", "-y", "species", "--sheet", "sales", cwd=tmp_path)
    assert refused.code == 2 and refused.stderr == (
        "Error: book.xlsx: no sheet 'sales' (sheets: penguins; give a name or a number)\n"
    )
