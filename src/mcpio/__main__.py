"""``python -m mcpio``: the command line."""

from .cli import main

raise SystemExit(main())
