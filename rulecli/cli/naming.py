"""The library's messages name parameters; the command line shows the flags the user typed.

A message from the library writes a parameter between backticks as its Python name,
optionally with a value: ```target_bins```, ```engine=duckdb```, ```pruning=False```,
```target_type=classification```. While a command runs, :func:`as_flags` renders each
such name as that command's flag (``--target-bins``, ``--engine duckdb``,
``--no-pruning``, ``--classification``: a pair of switches shows the one that sets the
value) or argument (``DATA``); a name the command does not have stays as the library
wrote it.
"""

from __future__ import annotations

import re
from typing import Any

_NAMED = re.compile(r"`([a-z][a-z0-9_]*)(?:=([^`\s]*))?`")
# the running command's parameters: Python name -> (flag or argument name, its negative flag)
_current: dict[str, tuple[str, str | None]] = {}


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
        name, value = match.group(1), match.group(2)
        if name not in _current:
            return match.group(0)
        shown, negative = _current[name]
        if value is None or (negative and value in ("True", shown.removeprefix("--"))):
            return shown
        if negative and value in ("False", negative.removeprefix("--")):
            return negative
        return f"{shown} {value}"

    return _NAMED.sub(flag, message)
