"""Memory a learner has freed, given back to the system; and the address space the
allocators reserve, kept small under a process limit.

NumPy's arrays come from the C library's allocator, which keeps what is freed for the
process to reuse; Polars allocates with an allocator of its own, which cannot reuse it.
So the test table read after a fit would add to all the learner ever held: RIPPER on
700,000 rows peaked at 569 MiB scoring its 300,000 test rows, against 496 MiB while
learning, and at the latter once the freed memory was given back first.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Callable


@functools.cache
def _libc(name: str) -> Callable[[int], int] | Callable[[int, int], int] | None:
    """glibc's function ``name`` (``malloc_trim``, ``mallopt``), where the process has it
    (musl and other systems do not)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the symbols the process has loaded, the C library's among them
    except OSError:
        return None
    return getattr(libc, name, None)


def give_back() -> None:
    """Return the C allocator's free memory to the system (a few milliseconds)."""
    trim = _libc("malloc_trim")
    if trim is not None:
        trim(0)  # type: ignore[call-arg]


M_ARENA_MAX = -8  # glibc's mallopt parameter


def fit_address_space() -> None:
    """Under an address-space or data limit (``ulimit -v``, ``prlimit --as``, as CI runners
    set them), keep the allocators from reserving far more address space than they use:
    glibc makes an arena of 64 MiB per thread, and Polars' jemalloc keeps what it maps. A
    115 MB CSV file took 1.7 GiB of address space for 0.4 GiB of memory, and ended in a
    native abort under a 1.5 GB limit; with one arena and nothing retained, 0.6 GiB. Run
    before Polars is loaded (jemalloc reads its settings once); otherwise nothing changes."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return
    limited = any(
        resource.getrlimit(which)[0] != resource.RLIM_INFINITY for which in (resource.RLIMIT_AS, resource.RLIMIT_DATA)
    )
    if not limited or "polars" in sys.modules:
        return
    given = os.environ.get("_RJEM_MALLOC_CONF", "")  # a parent's (Polars') settings, or the user's
    if "retain:" not in given:
        os.environ["_RJEM_MALLOC_CONF"] = f"{given},retain:false,narenas:1".lstrip(",")
    mallopt = _libc("mallopt")
    if mallopt is not None:
        mallopt(M_ARENA_MAX, 1)  # type: ignore[call-arg]
