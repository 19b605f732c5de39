"""``python -m mcpio``: the command line."""

from . import _collector

_collector.pause()  # through the command line's imports; main() resumes it unless it serves (`run TARGET`)

from .cli import main  # noqa: E402

raise SystemExit(main())
