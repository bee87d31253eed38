"""rulecli: interpretable rule models from tabular files.

The Python API (``rulecli.fit``, ``rulecli.predict``, ``rulecli.evaluate``,
``rulecli.load``, ``rulecli.save``, …) lives in :mod:`rulecli.api`; it is imported on
first use, so ``import rulecli`` (and ``rulecli --version``) stays instant.
"""

from __future__ import annotations

from typing import Any

from rulecli.memory import fit_address_space
from rulecli.version import __version__

fit_address_space()

API = (
    "fit",
    "train",
    "learn",
    "make_params",
    "prepare",
    "read_table",
    "predict",
    "evaluate",
    "load",
    "save",
    "export",
    "discretize",
    "rules_text",
    "partial_dependence",
)


def __getattr__(name: str) -> Any:
    if name in API:
        from rulecli import api

        return getattr(api, name)
    raise AttributeError(f"module 'rulecli' has no attribute '{name}'")


__all__ = ["__version__", *API]


def __dir__() -> list[str]:
    return [*globals(), *API]
