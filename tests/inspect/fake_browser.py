"""A "browser" for mcpio inspect's tests (``BROWSER="python fake_browser.py %s"``): it records its
own command line as ``/proc/PID/cmdline`` shows it to every local user, and exits."""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    out = Path(os.environ["FAKE_BROWSER_ARGV"])
    part = out.with_suffix(".part")
    part.write_bytes(Path(f"/proc/{os.getpid()}/cmdline").read_bytes())
    part.rename(out)  # whole, or not there
    sys.exit(0)
