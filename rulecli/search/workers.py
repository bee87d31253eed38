"""Worker processes that never outlive the run that started them.

A learner runs its work in ``workers(...)``; whatever ends the parent (a finished run, an
exception, SIGINT/SIGTERM/SIGHUP, --time-limit, even SIGKILL) ends the workers too, so
no orphan keeps computing or holds the caller's pipes open.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager, suppress
from typing import Any

_PR_SET_PDEATHSIG = 1


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


@contextmanager
def workers(jobs: int, initializer: Callable[..., None], initargs: tuple[Any, ...]) -> Iterator[ProcessPoolExecutor]:
    """A process pool of ``jobs`` workers, each set up by ``initializer(*initargs)``."""
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_start, initargs=(os.getpid(), initializer, initargs))
    try:
        yield pool
    except BaseException:
        # shutdown alone would wait for the running tasks to finish
        for child in multiprocessing.active_children():
            child.kill()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
