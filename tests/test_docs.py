"""README documents every command and option the CLI has, and opens with the two set-up commands."""

from __future__ import annotations

import pytest

from rulecli.cli.app import ORDER, _build
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_opens_with_demo_and_test():
    head = "\n".join(README.splitlines()[:40])
    assert "make demo" in head and "make test" in head


@pytest.mark.parametrize("name", ORDER)
def test_every_command_and_option_is_documented(name: str):
    assert f"### `rulecli {name}`" in README, f"README has no reference section for {name}"
    section = README.split(f"### `rulecli {name}`", 1)[1].split("\n### ", 1)[0]
    for param in _build(name).params:
        if type(param).__name__.endswith("Option"):
            longest = max(param.opts, key=len)
            assert longest in section, f"{name}: {longest} is not documented"
