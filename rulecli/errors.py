"""Errors a user can act on; the CLI prints their message as one line and exits 2."""

from __future__ import annotations


class RuleCliError(Exception):
    """Base class: the message is written for the person running rulecli."""


class InputError(RuleCliError):
    """A data file, column or value cannot be used."""


class ModelFormatError(RuleCliError):
    """A model or cuts file is corrupt, of an unknown version, or does not fit the data."""


class ParamError(RuleCliError):
    """A parameter value or combination is invalid."""


class ResourceLimitError(RuleCliError):
    """A limit the user set (time) or the tool keeps (problem size) was reached."""
