"""The rulecli command: one Typer app, one error boundary, commands loaded when used.

``rulecli --version`` and ``rulecli --help`` import neither Polars nor NumPy: the group
lists its commands from the tables below and builds a command (importing what it needs)
only when it runs or shows its own help. Learner commands come from the learner registry.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any

import typer
from typer import _click  # the Click that Typer carries, whose types its commands are
from typer._click.decorators import help_option as help_flag
from typer.core import TyperCommand, TyperGroup

from rulecli import learners
from rulecli.cli import naming, signals
from rulecli.display import visible
from rulecli.errors import RuleCliError
from rulecli.params import DATA_PANEL, ENGINE_PANEL, TUNING_PANEL
from rulecli.version import __version__

# name: (module:function, one-line description); learners follow them in registry order
COMMANDS = {
    "discretize": ("rulecli.cli.discretize:discretize", "Replace numeric columns by interval labels."),
    "predict": ("rulecli.cli.predict:predict", "Predict with a model; writes a prediction column."),
    "evaluate": ("rulecli.cli.evaluate:evaluate", "Score a model on labelled data, with quality gates."),
    "export": ("rulecli.cli.export:export", "Write a model as SQL, Python, Polars or PMML."),
    "show": ("rulecli.cli.show:show", "Print a saved model as its rules (or its JSON)."),
    "diff": ("rulecli.cli.diff:diff", "Compare two models rule by rule (exit 1 when they differ)."),
    "report": ("rulecli.cli.report:report", "Write an HTML page about a model on a table."),
    "distill": ("rulecli.cli.distill:distill", "Learn rules that imitate a model (a forest), with their fidelity."),
}
ORDER = ("discretize", *learners.REGISTRY, "distill", "predict", "evaluate", "export", "show", "diff", "report")
CONTEXT = {"help_option_names": ["-h", "--help"]}


def _load(name: str) -> Callable[..., Any]:
    if name in learners.REGISTRY:
        from rulecli.cli.learn import learner_command

        return learner_command(name)
    module, function = COMMANDS[name][0].split(":")
    return getattr(importlib.import_module(module), function)


@functools.cache  # a command runs once per process, but the tests run many in one
def _build(name: str) -> _click.Command:
    single = typer.Typer(
        rich_markup_mode="rich", context_settings=CONTEXT, pretty_exceptions_show_locals=False, add_completion=False
    )
    single.command(name)(_load(name))
    command = typer.main.get_command(single)
    command.name = name
    return _described(command)


# Shown by --help: what most runs set. The rest of the Data and Engine panels (reading odd
# CSV files, column typing, engines) and the settings cross-validation chooses wait for
# --help-all, so a learner's help stays readable.
FOLDED_PANELS = (DATA_PANEL, ENGINE_PANEL, TUNING_PANEL)
UNFOLDED = {"target", "exclude", "weights"}


def _described(command: _click.Command) -> _click.Command:
    for param in command.params:
        _describe(param)
        folded = getattr(param, "rich_help_panel", None) in FOLDED_PANELS and param.name not in UNFOLDED
        if folded and not getattr(param, "hidden", False):
            param.hidden = True
            param.folded = True  # type: ignore[attr-defined]
    if any(getattr(p, "folded", False) for p in command.params):
        help_flag(["--help-all"])(command)  # Typer's own help flag, made like -h/--help
        every = command.params[-1]
        every.help = "Show every option: the data-reading, engine and tuning ones too."
        every.callback = _help_all
        _describe(every)
    command.format_help = _one_column_of_flags(command)  # type: ignore[method-assign]
    made = command.get_help_option

    def help_option(ctx: _click.Context) -> _click.Option | None:
        option = made(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = help_option  # type: ignore[method-assign]
    return command


def _one_column_of_flags(command: _click.Command) -> Callable[[_click.Context, _click.HelpFormatter], None]:
    """The command's help with each flag's negative form (``--no-pruning``) named in its
    text instead of a column of its own: that column took a fifth of 80 columns, and
    squeezed every option's text into 17 (ripper's help ran to 117 lines)."""
    shown = command.format_help

    def format_help(ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        paired = [p for p in command.params if getattr(p, "secondary_opts", None)]
        saved = [(p.secondary_opts, p.help, p.show_default) for p in paired]
        for p in paired:
            p.help = f"{p.help or ''} Off: {', '.join(p.secondary_opts)}.".strip()
            p.secondary_opts = []
            p.show_default = "on" if p.default else "off"
        try:
            shown(ctx, formatter)
        finally:  # the command is built once per process: parsing still takes the negative forms
            for p, (opts, text, default) in zip(paired, saved, strict=True):
                p.secondary_opts, p.help, p.show_default = opts, text, default

    return format_help


def _help_all(ctx: _click.Context, param: _click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    folded = [each for each in ctx.command.params if getattr(each, "folded", False)]
    for each in folded:
        each.hidden = False
    _click.echo(ctx.get_help(), color=ctx.color)
    for each in folded:  # the command is built once per process: the next --help folds them again
        each.hidden = True
    ctx.exit()


# what a file or model argument stands for, in help (instead of the bare type)
FILES = {
    "data": "DATA",
    "model_path": "MODEL",
    "old_path": "OLD",
    "new_path": "NEW",
    "changed_rows": "FILE",
    "output": "FILE",
    "test": "FILE",
    "metrics_out": "FILE",
    "pd_out": "FILE",
    "cuts_in": "FILE",
    "cuts_out": "FILE",
    "violations_out": "FILE",
}
TYPES = {"int": "INT", "float": "NUM", "str": "TEXT", "list[str]": "TEXT"}  # short: the help beside them is wider


def _describe(param: _click.Parameter) -> None:
    """Help shows what to type: no type for a flag, FILE / MODEL / DATA for paths, the
    choices where there are some, and integral defaults without '.0'."""
    if getattr(param, "is_flag", False):
        param.metavar = ""
        return
    if param.name in FILES:
        param.metavar = FILES[param.name]
        if param.param_type_name == "argument":  # its name already says it; no type column
            param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
    elif param.metavar is None and hasattr(param, "type_descriptor"):
        bare = param.bare_type()  # type: ignore[attr-defined]
        param.metavar = TYPES.get(bare, bare.upper())
    if isinstance(param.default, float) and param.default.is_integer() and not isinstance(param.default, bool):
        param.default = int(param.default)


class LazyCommand(TyperCommand):
    """A command known by name and one-line help until it is used."""

    def __init__(self, name: str, short_help: str) -> None:
        super().__init__(name, short_help=short_help, help=short_help)
        self._real: _click.Command | None = None

    def real(self) -> _click.Command:
        if self._real is None:
            self._real = _build(self.name or "")
        return self._real

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        naming.use(self.real())  # the command runs in the context made here, as the real command
        return self.real().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        return self.real().invoke(ctx)

    def get_params(self, ctx: Any) -> list[Any]:
        return self.real().get_params(ctx)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        return self.real().shell_complete(ctx, incomplete)


class Group(TyperGroup):
    def list_commands(self, ctx: Any) -> list[str]:
        return [name for name in ORDER if name in self.commands]


def _short_help(name: str) -> str:
    return learners.REGISTRY[name][1] if name in learners.REGISTRY else COMMANDS[name][1]


app = typer.Typer(
    name="rulecli",
    cls=Group,
    help="Learn interpretable rule models from tabular files, then predict and evaluate with them.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode="rich",
    context_settings=CONTEXT,
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


def command_group() -> _click.Command:
    group = typer.main.get_command(app)
    assert isinstance(group, Group)
    for name in ORDER:
        group.add_command(LazyCommand(name, _short_help(name)))
    _described(group)
    return group


def _err(message: str) -> None:
    from . import console

    console.err.print(visible(message), markup=False, soft_wrap=True)


def _fail(message: str, code: int = 2) -> None:
    """``Error:`` and the message's first line (a library's message may run on for lines)."""
    _err(f"Error: {message.strip().splitlines()[0] if message.strip() else message}")
    raise SystemExit(code)


def _is_polars_error(exc: BaseException) -> bool:
    polars = sys.modules.get("polars")
    return polars is not None and isinstance(exc, polars.exceptions.PolarsError)


# glibc gives each freed block above 128 KiB back to the system, and takes it again a page
# at a time on the next allocation, raising that threshold only as such blocks are freed (to
# 32 MiB, trimming above twice that). The learners make and drop large arrays step after
# step: cn2 on 70,000 rows spent 3.0-3.5 s of its 19 s CPU in the kernel, zeroing pages.
# Starting at the thresholds glibc would end at: 0.4 s, peak memory 8 % higher.
MMAP_THRESHOLD, TRIM_THRESHOLD = 32 << 20, 64 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)


@contextlib.contextmanager
def without_blas_check() -> Iterator[None]:
    """Numba, loading its first kernel, imports SciPy's linear algebra where SciPy is
    installed, to see whether BLAS could serve ``np.dot``, which no kernel here calls:
    0.13-0.28 s of every command that loads one (a 100-tree forest on 7,000 rows takes
    2.5 s in all). A command runs no code but rulecli's, so it goes without while it runs;
    afterwards (a test, a script that called ``main``) SciPy imports as before, and the
    Python API never skips it."""
    blocked = "scipy.linalg" not in sys.modules
    if blocked:
        sys.modules["scipy.linalg"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if blocked and sys.modules.get("scipy.linalg", ...) is None:
            del sys.modules["scipy.linalg"]


def keep_freed_memory() -> None:
    """Set glibc's thresholds (unless the environment sets them); elsewhere, nothing."""
    if not sys.platform.startswith("linux") or {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"} & set(os.environ):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # a C library without mallopt
        return
    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)


def main(args: Sequence[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and exit status 2."""
    keep_freed_memory()
    with signals.stop_on_signals(), without_blas_check():
        try:
            _main(list(sys.argv[1:] if args is None else args))
        except signals.Stopped as stop:
            line, status = signals.farewell(stop.signum)
            _err(line)
            raise SystemExit(status) from None


def _main(argv: list[str]) -> None:
    # --debug is taken anywhere before a "--", as errors suggest it after the command too
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]
    if debug:
        argv = ["--debug", *(a for a in argv[:end] if a != "--debug"), *argv[end:]]
    naming.forget()
    read_before = sys.modules.get("rulecli.io")  # not imported here: Polars would slow start-up
    if read_before is not None:  # an earlier command in this process (the tests) read its inputs
        read_before.forget_inputs()
    try:
        with warnings.catch_warnings():
            if not debug:
                # a floating-point warning from NumPy is no message for a user (results are
                # checked where it matters); --debug shows them
                warnings.filterwarnings("ignore", category=RuntimeWarning)
            # Not standalone: Click would print usage errors as a multi-line box; one line is the rule here.
            code = command_group().main(argv, prog_name="rulecli", standalone_mode=False)
        if code == signals.INTERRUPTED:  # Typer turns Ctrl-C into a silent exit status 130
            _err("Interrupted")
        raise SystemExit(code if isinstance(code, int) else 0)
    except RuleCliError as exc:
        signals.stopped_meanwhile()
        if debug:
            raise
        _fail(naming.as_flags(str(exc)).strip() or type(exc).__name__, exc.exit_code)
    except KeyboardInterrupt:
        _err("Interrupted")
        raise SystemExit(signals.INTERRUPTED) from None
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0) from None
    except Exception as exc:
        signals.stopped_meanwhile()
        _other(exc, debug)


def _other(exc: Exception, debug: bool) -> None:
    """Click's own exceptions (known by name and interface, its module being private),
    Polars' and the system's errors, or a bug."""
    name = type(exc).__name__
    if name == "NoArgsIsHelpError":
        exc.show()  # type: ignore[attr-defined]
        raise SystemExit(2) from None
    if name == "Abort":
        _err("Interrupted")
        raise SystemExit(signals.INTERRUPTED) from None
    if debug:
        raise exc
    if _is_polars_error(exc):
        _fail(str(exc).strip() or name)
    if isinstance(exc, MemoryError):
        from rulecli.io import available_memory  # loaded already by whatever ran out

        room = available_memory() >> 20
        _fail(
            f"out of memory ({exc}); this process may take about {room:,} MiB more (the machine's, its "
            "control group's or its own address-space limit): learn with --engine duckdb (from its "
            "counts, or a sample: --sample-rows), or raise the limit"
        )
    if isinstance(exc, OSError | ValueError):
        _fail(f"{name}: {exc} (rerun with --debug for details)")
    if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
        _fail(exc.format_message())
    _fail(f"{name}: {exc} (rerun with --debug for details)")
