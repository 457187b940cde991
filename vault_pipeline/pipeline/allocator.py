"""Polars' memory allocator, tuned for batch builds before Polars is first imported.

Polars allocates through jemalloc, which by default hands freed pages back to the kernel
within seconds. A bulk build churns through gigabytes of short-lived column buffers, so
those pages are faulted straight back in: building `papers` from a 1M-record snapshot spent
2.3 to 3.1 of its 20 CPU-seconds in the kernel doing that. Keeping freed pages for 30 seconds
cuts those page faults by half to two thirds (sys time 1.1 to 1.2 s) and steadies the build
time (benchmarks/README.md), for about 90 MB more peak memory on a plain snapshot and about
600 MB more when duplicates are merged (two phases' buffers are held at once). A value the
user sets in the environment is kept: Polars appends it after its own defaults."""

from __future__ import annotations

import os

JEMALLOC_ENV = "_RJEM_MALLOC_CONF"  # the prefixed jemalloc that Polars links reads this
BATCH_SETTINGS = "dirty_decay_ms:30000,muzzy_decay_ms:30000"


def configure() -> None:
    """Set the allocator settings unless set already. jemalloc reads them once, when Polars
    is loaded, so this must run first: `vault_pipeline/__init__.py` calls it."""
    os.environ.setdefault(JEMALLOC_ENV, BATCH_SETTINGS)
