"""Errors a user can act on; the CLI prints their message as one line and exits with the
error's ``exit_code`` (2, or 124 for a time-out, as timeout(1))."""

from __future__ import annotations


class RuleCliError(Exception):
    """Base class: the message is written for the person running rulecli."""

    exit_code = 2


class InputError(RuleCliError):
    """A data file, column or value cannot be used."""


class ModelFormatError(RuleCliError):
    """A model or cuts file is corrupt, of an unknown version, or does not fit the data."""


class ParamError(RuleCliError):
    """A parameter value or combination is invalid.

    Messages name parameters between backticks (```target_bins` must be at least 2``);
    the command line shows its own flag there (``--target-bins``). With ``param`` the
    message reads after that parameter's name (``"must be at least 2, got 1"``).
    """

    def __init__(self, message: str, *, param: str | None = None) -> None:
        self.param = param
        super().__init__(f"`{param}` {message}" if param else message)


class ResourceLimitError(RuleCliError):
    """A limit the user set (time) or the tool keeps (problem size) was reached."""


class TimeLimitError(ResourceLimitError):
    """The time limit (``time_limit``) ran out."""

    exit_code = 124
