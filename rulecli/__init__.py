"""rulecli: interpretable rule models from tabular files."""

__version__ = "0.1.0"
