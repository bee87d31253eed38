"""Signals that end a command: SIGINT (Ctrl-C), SIGTERM and SIGHUP.

Python runs a signal handler only between two steps of the main thread's bytecode, so a
signal that arrives during one long native call (Polars parsing a large CSV, a DuckDB
query) waits until that call returns: seconds, or never for a call blocked on a read.
The operating system's handler, though, writes the signal's number to a file descriptor
at once (``signal.set_wakeup_fd``). A watcher thread reads it there; if the main thread
has not unwound by itself ``GRACE`` seconds later, the watcher removes the command's
temporary files, prints the line the main thread would have printed and ends the process
with the same status. Native libraries release Python's lock while they work, so the
watcher can run meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
GRACE = 1.0  # seconds the main thread has to unwind on its own, which is the tidier way

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(BaseException):
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C, so no partial or temporary file stays."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_received: list[int] = []  # the stop signal of the running command, once one has arrived


def _stop(signum: int, frame: object) -> None:
    _received.append(signum)
    raise Stopped(signum)


def stopped_meanwhile() -> None:
    """Raise :class:`Stopped` if a stop signal arrived while an error was being raised: a
    library that turns the signal into an error of its own (DuckDB's "Query interrupted")
    must not report that error instead."""
    if _received:
        raise Stopped(_received[0]) from None


def farewell(signum: int) -> tuple[str, int]:
    """The line a command ends with when ``signum`` stops it, and its exit status."""
    if signum == signal.SIGINT:
        return "Interrupted", INTERRUPTED
    return f"Stopped by {signal.Signals(signum).name}", 128 + signum


def _end_now(signum: int) -> None:
    io = sys.modules.get("rulecli.io")  # only a command that has read or written can leave files
    if io is not None:
        io.remove_leftovers()
    line, status = farewell(signum)
    show_cursor = "\x1b[?25h" if os.isatty(2) else ""  # a live progress display hides it
    with contextlib.suppress(OSError):
        os.write(2, f"{show_cursor}\n{line}\n".encode() if show_cursor else f"{line}\n".encode())
    os._exit(status)


def _watch(read_fd: int, done: threading.Event) -> None:
    watched = {signal.SIGINT, *STOP_SIGNALS}
    while True:
        try:
            arrived = os.read(read_fd, 64)
        except OSError:
            return
        if not arrived:  # the command ended and closed the other end
            return
        for signum in arrived:
            if signum in watched and not done.wait(GRACE):
                _end_now(signum)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within: SIGTERM and SIGHUP raise :class:`Stopped`, and every ending signal is
    honoured within ``GRACE`` seconds even during native work."""
    _received.clear()
    previous = {sig: signal.signal(sig, _stop) for sig in STOP_SIGNALS}
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    done = threading.Event()
    before = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    watcher = threading.Thread(target=_watch, args=(read_fd, done), name="rulecli-signals", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(before)
        os.close(write_fd)
        watcher.join()
        os.close(read_fd)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
