"""``from mcpio import …`` loads its modules with the collector off and then moves what exists to
the oldest generation without scanning it (issue 17: cold start). These check, in a fresh
interpreter each, that nothing is left out of collection and that an application's own frozen
objects (``gc.freeze()`` before a fork) stay frozen."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("enabled", [True, False])
def test_a_cycle_made_before_the_import_is_still_collected(enabled: bool) -> None:
    out = _run(
        f"""
import gc, weakref
import mcpio  # the package only: its names load on first use
if not {enabled}:
    gc.disable()
gc.collect()  # counts at zero: no collection comes before mcpio's __getattr__ turns it off
class Node: pass
a, b = Node(), Node()
a.other, b.other = b, a
gone = weakref.ref(a)
del a, b
from mcpio import Server  # the import moves the cycle to the oldest generation, unscanned
print(gc.isenabled(), gc.get_freeze_count(), gone() is not None)
gc.collect()
print(gone() is None)
"""
    )
    assert out.splitlines() == [f"{enabled} 0 True", "True"]


def test_an_applications_frozen_objects_stay_frozen() -> None:
    out = _run(
        """
import gc
keep = [[] for _ in range(1000)]  # lists: tracked by the collector, so frozen with the rest
gc.freeze()
from mcpio import Server
print(gc.get_freeze_count() >= 1000)  # an unfreeze would have made it 0
"""
    )
    assert out == "True"
