from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

from rulecli.cli.app import main

if TYPE_CHECKING:
    import polars as pl

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


# The tests that take about 3 s or more each (measured with --durations on the 2-core
# machine): `make test-long` runs them, and CI after `make test`, which they would push past
# its 4 minutes. Their neighbours in each file keep the same paths covered there, quicker.
LONG = frozenset(
    {
        "tests/cli/test_cli.py::test_every_rule_set_printed_as_text_predicts_as_its_json[learner3]",
        "tests/cli/test_cli.py::test_every_rule_set_printed_as_text_predicts_as_its_json[learner4]",
        "tests/cli/test_cli.py::test_pipes_model_from_stdin_and_data_from_stdin",
        "tests/cli/test_diff.py::test_git_shows_rule_changes_through_the_textconv_driver",
        "tests/cli/test_export.py::test_every_form_predicts_like_rulecli[reduct-labor]",
        "tests/cli/test_export.py::test_sql_predicts_alike_on_a_table_duckdb_types_itself",
        "tests/cli/test_export_hostile.py::test_duckdb_runs_the_hostile_export_and_predicts_as_rulecli",
        "tests/cli/test_learners_cli.py::test_cn2_leaves_out_rules_of_a_handful_of_rows_on_a_long_table",
        "tests/cli/test_learners_cli.py::test_learn_save_predict_evaluate[aq-extra4-rule_set]",
        "tests/cli/test_learners_cli.py::test_reduct_on_a_long_numeric_table_cuts_its_reduct_instead_of_refusing",
        "tests/cli/test_learners_cli.py::test_same_seed_same_model_bytes_for_every_covering_learner",
        "tests/cli/test_learners_cli.py::test_the_spinner_names_the_phase_running",
        "tests/cli/test_messy_columns.py::test_every_learner_leaves_out_the_id_and_notes_and_reads_dates_as_dates[aq]",
        "tests/cli/test_messy_columns.py::test_every_learner_leaves_out_the_id_and_notes_and_reads_dates_as_dates[brl]",
        "tests/cli/test_pmml.py::test_date_columns_are_pmml_day_counts[forest]",
        "tests/cli/test_pmml.py::test_every_learner_scores_alike_in_jpmml_and_pmml4s[brl-house]",
        "tests/cli/test_report.py::test_a_300_leaf_tree_is_drawn_without_overlap_or_clipping",
        "tests/cli/test_report.py::test_every_class_gets_a_partial_dependence_curve_and_no_label_is_clipped",
        "tests/cli/test_report.py::test_the_page_renders_in_a_headless_browser",
        "tests/cli/test_terminal_escapes.py::test_tables_and_source_at_a_terminal_show_escapes_and_stay_data_in_a_pipe",
        "tests/cli/test_tree_cli.py::test_a_longer_table_never_gets_a_worse_default_tree",
        "tests/cli/test_tree_cli.py::test_brl_learn_predict_proba_and_reproducibility",
        "tests/cli/test_tree_cli.py::test_reduct_prints_for_pipelines_and_learns_rules",
        "tests/learners/test_brl.py::test_brl_recovers_a_known_rule_list",
        "tests/learners/test_monotone.py::test_the_prediction_never_moves_against_a_constraint",
        "tests/learners/test_tree.py::test_level_pruning_reaches_the_weakest_link_sequences_trees",
        "tests/learners/test_tree.py::test_the_compiled_walk_adds_up_exactly_what_the_numpy_walk_does",
        "tests/learners/test_tree.py::test_trees_grown_together_equal_trees_grown_alone",
        "tests/test_contract.py::test_evaluate_and_cross_validation_through_the_api[aq-species]",
        "tests/test_contract.py::test_evaluate_and_cross_validation_through_the_api[reduct-species]",
        "tests/test_docs.py::test_every_command_help_has_examples_that_run_from_the_repo_root[brl]",
        "tests/test_docs.py::test_every_command_help_has_examples_that_run_from_the_repo_root[forest]",
        "tests/test_docs.py::test_readme_commands_run_as_written",
        "tests/test_golden.py::test_printed_model_matches_its_golden_file[brl-house]",
        "tests/test_golden.py::test_printed_model_matches_its_golden_file[brl-labor]",
        "tests/test_golden.py::test_printed_model_matches_its_golden_file[brl-penguins]",
        "tests/test_properties.py::test_every_learner_agrees_with_the_reference_and_its_statistics[brl]",
        "tests/test_properties.py::test_every_learner_agrees_with_the_reference_and_its_statistics[cn2]",
        "tests/test_properties.py::test_forests_and_regression_trees_predict_and_evaluate_on_any_table",
        "tests/test_reliability.py::test_a_signal_during_native_work_ends_the_run_within_moments[TERM]",
        "tests/test_reliability.py::test_an_interrupted_predict_leaves_the_old_file_or_a_complete_one[SIGHUP]",
        "tests/test_reliability.py::test_an_interrupted_predict_leaves_the_old_file_or_a_complete_one[SIGINT]",
        "tests/test_reliability.py::test_an_interrupted_predict_leaves_the_old_file_or_a_complete_one[SIGTERM]",
        "tests/test_reliability.py::test_an_output_naming_an_input_is_refused_and_the_input_is_untouched",
        "tests/test_reliability.py::test_ctrl_c_says_interrupted",
        "tests/test_reliability.py::test_fifos_dev_stdin_and_process_substitution_are_read_as_data",
        "tests/test_reliability.py::test_time_limit_stops_a_long_run_with_a_clear_message",
        "tests/test_weights.py::test_fractional_weights_learn_the_same_model_every_run",
        "tests/unit/test_covering_kernel.py::test_rules_are_learned_the_same_by_numpy_and_by_the_kernel",
        "tests/unit/test_discretize.py::test_one_cut_equals_the_array_cut_bit_for_bit",
        "tests/unit/test_model.py::test_thousands_of_rules_compile_flat_without_overflowing",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid in LONG:
            item.add_marker(pytest.mark.long)
    # over the whole suite, a renamed long test must not drop back into make test unseen
    if config.args_source is pytest.Config.ArgsSource.TESTPATHS:
        stale = LONG - {item.nodeid for item in items}
        if stale:
            raise pytest.UsageError(f"tests/conftest.py LONG names tests that no longer exist: {sorted(stale)}")


def in_sqlite(frame: pl.DataFrame) -> sqlite3.Connection:
    """The frame as SQLite's table ``data``: numbers as REAL (NaN is stored as NULL), the rest as TEXT."""
    con = sqlite3.connect(":memory:")
    types = ["REAL" if dtype.is_numeric() else "TEXT" for dtype in frame.dtypes]
    columns = ", ".join(f'"{name}" {t}' for name, t in zip(frame.columns, types, strict=True))
    con.execute(f"CREATE TABLE data ({columns})")
    con.executemany(f"INSERT INTO data VALUES ({', '.join('?' * frame.width)})", frame.rows())
    return con
