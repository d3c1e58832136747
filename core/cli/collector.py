"""How the ``agentworld`` program sets Python's cyclic garbage collector: the one place agentworld touches it.

A library never changes the collector of the process it is imported into (thresholds and ``gc.freeze`` are
process-wide: a caller's own objects would be affected too). The ``agentworld`` program owns its process,
so ``main()`` sets it while its command runs (docs/performance.md, "What keeps it fast"):

- **Fewer collections** (:data:`THRESHOLDS` instead of CPython's 700, 10, 10). What a run allocates is of
  two kinds: what lives as long as the process (imported modules, pydantic's model classes, the loaded world:
  ~15,000 containers; a big team's players, task and briefs: ~180,000 at 1,000 agents) and the rounds'
  short-lived records, which reference counting frees. With the defaults the collector ran every 700 net
  allocations and rescanned the long-lived objects again and again, freeing nothing: the README's episode
  spent 15-25 ms in collections while it started, a 1,000-agent round 30-130 ms of its ~400. Cycles a team
  makes are still collected, later; a full collection still comes after every hundred middle ones.
- **Nothing rescanned at exit** (``gc.freeze`` when the process ends: CPython runs its exit handlers before
  its own final collections), so those do not walk everything alive to free what the operating system takes
  back anyway (after a run's episodes, up to a few hundred milliseconds).

A caller that runs ``main()`` in its own process and carries on gets its thresholds back when the command
returns, and nothing frozen until its process exits.

``agentworld bench scale`` plays each team size in a process of its own, set up the same way, so that its
figures are what ``agentworld run`` gets.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
from typing import Iterator

THRESHOLDS = (10_000, 50, 100)


@contextlib.contextmanager
def for_program() -> Iterator[None]:
    """The collector as the ``agentworld`` program runs its command (see the module's docstring)."""
    was = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    atexit.unregister(gc.freeze)  # registered once, however often main() runs in this process
    atexit.register(gc.freeze)
    try:
        yield
    finally:
        gc.set_threshold(*was)
