"""An upstream that records each start: ``counted_upstream.py FILE [stubborn]`` appends its pid
to FILE, then serves upstream.py's server; with ``stubborn`` it never serves and ignores the
end of its stdin and SIGTERM (an upstream only a kill of its group ends)."""

import os
import signal
import sys
import time

with open(sys.argv[1], "a", encoding="utf-8") as f:
    f.write(f"{os.getpid()}\n")
if sys.argv[2:] == ["stubborn"]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(1)
from upstream import server

server.run()
