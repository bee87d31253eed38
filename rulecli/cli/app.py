"""The rulecli command: one Typer app, one error boundary."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import polars as pl
import typer

from rulecli import __version__
from rulecli.errors import RuleCliError

from . import console, discretize, evaluate, export, learn, predict

app = typer.Typer(
    name="rulecli",
    help="Learn interpretable rule models from tabular files, then predict and evaluate with them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rulecli {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show a full traceback on errors.")] = False,
) -> None:
    """Learn interpretable rule models from tabular files, then predict and evaluate with them.

    Exit status: 0 success, 1 a quality gate failed, 2 bad usage or bad input.
    """


app.command("discretize")(discretize.discretize)
app.command("oner")(learn.learner_command(learn.oner))
app.command("ripper")(learn.learner_command(learn.ripper))
app.command("cn2")(learn.learner_command(learn.cn2))
app.command("aq")(learn.learner_command(learn.aq))
app.command("tree")(learn.learner_command(learn.tree))
app.command("forest")(learn.learner_command(learn.forest))
app.command("reduct")(learn.learner_command(learn.reduct))
app.command("brl")(learn.learner_command(learn.brl))
app.command("predict")(predict.predict)
app.command("evaluate")(evaluate.evaluate)
app.command("export")(export.export)


def _fail(message: str) -> None:
    console.err.print(f"Error: {message}", markup=False, soft_wrap=True)
    raise SystemExit(2)


def _is_usage_error(exc: BaseException) -> bool:
    """Click's usage errors (bad option values, unknown options), known by their interface."""
    return hasattr(exc, "format_message") and hasattr(exc, "exit_code")


def main() -> None:
    """Entry point: user errors become one line on stderr and exit status 2."""
    debug = "--debug" in sys.argv[1:]
    try:
        # Not standalone: Click would print usage errors as a multi-line box; one line is the rule here.
        code = app(standalone_mode=False)
        raise SystemExit(code if isinstance(code, int) else 0)
    except (RuleCliError, pl.exceptions.PolarsError) as exc:
        if debug:
            raise
        _fail(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    except KeyboardInterrupt:
        console.err.print("Interrupted", markup=False)
        raise SystemExit(130) from None
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0) from None
    except (OSError, ValueError, MemoryError) as exc:
        if debug:
            raise
        _fail(f"{type(exc).__name__}: {exc} (rerun with --debug for details)")
    except Exception as exc:
        _usage_or_bug(exc, debug)


def _usage_or_bug(exc: Exception, debug: bool) -> None:
    """Click's own exceptions (known by name and interface, its module being private) or a bug."""
    name = type(exc).__name__
    if name == "NoArgsIsHelpError":
        exc.show()  # type: ignore[attr-defined]
        raise SystemExit(2) from None
    if name == "Abort":
        console.err.print("Interrupted", markup=False)
        raise SystemExit(130) from None
    if debug:
        raise exc
    if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
        _fail(exc.format_message())
    _fail(f"{name}: {exc} (rerun with --debug for details)")
