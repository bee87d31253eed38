"""Worker processes that never outlive the run that started them.

A learner runs its work through ``worker_map(...)``; whatever ends the parent (a finished run, an
exception, SIGINT/SIGTERM/SIGHUP, --time-limit, even SIGKILL) ends the workers too, so
no orphan keeps computing or holds the caller's pipes open.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection, wait
from typing import Any

_PR_SET_PDEATHSIG = 1


def cores() -> int:
    """The cores this process may run on (a container's share, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _die_with_parent(parent: int) -> None:
    # Linux only: the kernel sends SIGKILL when the parent exits, however it exits
    if sys.platform.startswith("linux"):
        with suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _start(parent: int, initializer: Callable[..., None], initargs: tuple[Any, ...]) -> None:
    # the parent decides what a signal means; a forked worker must not run its handlers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP", "SIGALRM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    _die_with_parent(parent)
    initializer(*initargs)


def _serve(
    parent: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
    fn: Callable[[Any], Any],
    items: list[Any],
    first: int,
    step: int,
    out: Connection,
) -> None:
    _start(parent, initializer, initargs)
    for i in range(first, len(items), step):
        try:
            out.send((i, fn(items[i]), None))
        except Exception:  # the parent raises it, with the worker's traceback
            out.send((i, None, traceback.format_exc()))
            return
    out.close()


@contextmanager
def worker_map(
    fn: Callable[[Any], Any], items: list[Any], jobs: int, initializer: Callable[..., None], initargs: tuple[Any, ...]
) -> Iterator[Iterator[Any]]:
    """``fn`` over ``items`` in ``jobs`` processes (each set up by ``initializer(*initargs)``),
    results in the items' order. Each worker has its own pipe and no thread of the parent
    waits on them, so whatever ends the run can kill the workers without leaving a reader
    stuck on a half-written result (a concurrent.futures pool hung the exit that way).

    Workers are forked: they start at once and share the parent's memory. ``fn`` must not
    run Polars: in a fork of a process that has used Polars' thread pool, the first query
    waits forever for the pool's threads, which stayed behind in the parent. (A new
    interpreter per worker would not, but it imports the caller's main script again.)"""
    context = multiprocessing.get_context()
    processes, readers = [], []
    try:
        for first in range(jobs):
            reader, writer = context.Pipe(duplex=False)
            args = (os.getpid(), initializer, initargs, fn, items, first, jobs, writer)
            process = context.Process(target=_serve, args=args, daemon=True)
            process.start()
            writer.close()
            processes.append(process)
            readers.append(reader)
        yield _in_order(len(items), readers)
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
        for process in processes:
            process.join()
        for reader in readers:
            reader.close()


def _in_order(n: int, readers: list[Connection]) -> Iterator[Any]:
    done: dict[int, Any] = {}
    open_readers = list(readers)
    for i in range(n):
        while i not in done:
            if not open_readers:
                raise RuntimeError("a worker process ended before its work was done (out of memory?)")
            for reader in wait(open_readers):
                try:
                    index, value, error = reader.recv()
                except EOFError:
                    open_readers.remove(reader)  # type: ignore[arg-type]
                    continue
                if error is not None:
                    raise RuntimeError(f"a worker process failed:\n{error}")
                done[index] = value
        yield done.pop(i)
