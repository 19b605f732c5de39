"""The garbage collector paused for ``mcpio run``'s start-up, resumed when serving starts.

``mcpio run TARGET`` (the command hosts run) calls :func:`pause` before it imports msgspec, mcpio
and the served module (``python -m mcpio``: before its own imports): the automatic collections
those imports trigger traverse every object they made (~6 M instructions to a stdio server's
first answer) and free almost nothing, since those objects live as long as the process; the
stdio server then takes them out of the collector's sight (``gc.freeze()``) before it answers. :func:`resume` turns collection back on
at the first of: the stdio server has frozen its start-up objects (``_server._stdio.run``), any
other serving starts (``Server.run`` over HTTP, a lifespan entered: ``Server.running``; both
through ``_server._stdio.resume_collection``, which finds this module loaded only when
something paused), a script is run as ``__main__`` (``_cli._run``), the command ends
(``mcpio.cli.main``). Only ``mcpio run`` pauses: ``import mcpio`` and ``Server.run`` in an
application's own process never change the collector's settings (tests/cli/test_run_cold.py).
"""

from __future__ import annotations

import gc

# The first generation's threshold while paused: no start-up allocates this many objects. Not 0
# (which turns collection off: an application's own gc.set_threshold(0) must stay its own) and
# not gc.disable(), whose state an application's own gc.disable() during the start-up would share.
_PAUSED = 1 << 30


class _State:
    thresholds: tuple[int, ...] | None = None  # what pause() replaced, until resume() puts it back


def pause() -> None:
    """Automatic collection deferred until :func:`resume` (a no-op when paused already)."""
    if _State.thresholds is None:
        _State.thresholds = gc.get_threshold()
        gc.set_threshold(_PAUSED, *_State.thresholds[1:])


def resume() -> None:
    """The thresholds :func:`pause` replaced put back; nothing when not paused, and nothing when
    the application set thresholds of its own meanwhile (they stay). ``gc.disable()`` and
    ``gc.enable()`` are never called: whether collection is on stays the application's."""
    thresholds, _State.thresholds = _State.thresholds, None
    if thresholds is not None and gc.get_threshold()[0] == _PAUSED:
        gc.set_threshold(*thresholds)
