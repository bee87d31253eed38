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

    With ``param`` the message reads after the parameter's name (``"must be at least 2,
    got 1"``): the library names the parameter, the command line its flag (:meth:`named`).
    """

    def __init__(self, message: str, *, param: str | None = None) -> None:
        self.param = param
        self.detail = message
        super().__init__(f"{param} {message}" if param else message)

    def named(self, name: str) -> str:
        """The message with ``name`` (e.g. a command-line flag) standing for the parameter."""
        return f"{name} {self.detail}" if self.param else self.detail


class ResourceLimitError(RuleCliError):
    """A limit the user set (time) or the tool keeps (problem size) was reached."""


class TimeLimitError(ResourceLimitError):
    """``--time-limit`` ran out."""

    exit_code = 124
