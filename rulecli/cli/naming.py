"""The library's messages name parameters; the command line shows the flags the user typed.

A message from the library writes a parameter between backticks as its Python name,
optionally with a value: ```target_bins```, ```engine=duckdb```, ```regression=False```.
While a command runs, :func:`as_flags` renders each such name as that command's flag
(``--target-bins``, ``--engine duckdb``, ``--classification``) or argument (``DATA``);
a name the command does not have stays as the library wrote it.
"""

from __future__ import annotations

import re
from typing import Any

_NAMED = re.compile(r"`([a-z][a-z0-9_]*)(?:=([^`\s]*))?`")
# the running command's parameters: Python name -> (flag or argument name, its negative flag)
_current: dict[str, tuple[str, str | None]] = {}
# the library's target type is the command line's --regression/--classification pair
_SPELLED = {
    "`target_type=regression`": "`regression=True`",
    "`target_type=classification`": "`regression=False`",
}


def use(command: Any) -> None:
    """Name parameters as the Click ``command`` about to run declares them."""
    forget()
    for param in command.params:
        if param.param_type_name == "argument":
            _current[param.name] = (param.metavar or param.name.upper(), None)
        elif param.opts:
            negative = param.secondary_opts[0] if param.secondary_opts else None
            _current[param.name] = (max(param.opts, key=len), negative)


def forget() -> None:
    """No command is running (an earlier one in this process named its own parameters)."""
    _current.clear()


def as_flags(message: str) -> str:
    """``message`` with each parameter it names shown as the running command's flag."""

    def flag(match: re.Match[str]) -> str:
        written = match.group(0)
        spelled = _NAMED.fullmatch(_SPELLED.get(written, written))
        assert spelled is not None
        name, value = spelled.group(1), spelled.group(2)
        if name not in _current:
            return written
        shown, negative = _current[name]
        if value is None or (value == "True" and negative):
            return shown
        if value == "False" and negative:
            return negative
        return f"{shown} {value}"

    return _NAMED.sub(flag, message)
