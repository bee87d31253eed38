"""The library's messages name parameters; each command shows its own flags in their place."""

from __future__ import annotations

import json

import polars as pl
import pytest

from rulecli import api
from rulecli.cli import naming
from rulecli.cli.app import command_group
from rulecli.errors import ParamError
from tests.conftest import SAMPLE, run_cli

PENGUINS = str(SAMPLE / "penguins.csv")


@pytest.fixture
def tree_command():
    group = command_group()
    naming.use(group.commands["tree"].real())  # type: ignore[attr-defined]
    yield
    naming.forget()


@pytest.mark.usefixtures("tree_command")
@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("`target_bins` must be at least 2", "--target-bins must be at least 2"),
        ("with `engine=duckdb` only", "with --engine duckdb only"),
        ("pass `target_type=classification`", "pass --classification"),
        ("pass `target_type=regression`", "pass --regression"),
        ("`show_table` is oner's", "`show_table` is oner's"),  # not an option of tree: left as written
        ("`data` is the table", "DATA is the table"),
        ("`max_depth` and `ccp_alpha`", "--max-depth and --ccp-alpha"),
    ],
)
def test_a_parameter_named_in_a_message_reads_as_the_commands_flag(written: str, shown: str):
    assert naming.as_flags(written) == shown


def test_outside_a_command_the_names_stay():
    naming.forget()
    assert naming.as_flags("`target_bins` must be at least 2") == "`target_bins` must be at least 2"


def test_the_library_names_the_parameter_and_the_command_its_flag():
    with pytest.raises(ParamError, match=r"^`target_bins` must be at least 2, got 1$"):
        api.prepare(PENGUINS, target="body_mass_g", target_bins=1)
    with pytest.raises(ParamError, match=r"^`target_type=regression`: this learner predicts classes"):
        api.prepare(PENGUINS, target="body_mass_g", target_type="regression")
    result = run_cli("oner", PENGUINS, "-y", "body_mass_g", "--regression")
    assert result.code == 2
    assert result.stderr.startswith("Error: --regression: this learner predicts classes"), result.stderr


def test_a_command_shows_its_own_spelling_of_a_shared_parameter():
    # discretize's method is --discretize; export's dialect is --dialect
    result = run_cli("discretize", PENGUINS, "--discretize", "nope")
    assert result.code == 2 and result.stderr.startswith("Error: --discretize must be one of"), result.stderr


def test_gate_failures_in_json_name_the_flags(tmp_path):
    model, gentoo = tmp_path / "m.json", tmp_path / "gentoo.csv"
    assert run_cli("ripper", PENGUINS, "-y", "species", "-o", str(model)).code == 0
    pl.read_csv(PENGUINS).filter(pl.col("species") == "Gentoo").write_csv(gentoo)
    result = run_cli("evaluate", str(model), str(gentoo), "--max-coverage-ratio", "1.5", "--json")
    assert result.code == 1
    failures = json.loads(result.stdout)["gates"]["failures"]
    assert failures and all("(--max-coverage-ratio;" in f for f in failures), failures
    assert "`" not in result.stdout + result.stderr
