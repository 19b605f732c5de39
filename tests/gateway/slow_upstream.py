"""An upstream whose start the test controls: it serves only after a line is written to the FIFO
named by its first argument (opening a FIFO for reading blocks until a writer opens it). With a
second argument, a server script, that script is what it then serves."""

import runpy
import sys

with open(sys.argv[1], encoding="utf-8") as gate:
    gate.readline()
if sys.argv[2:]:
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")
    sys.exit()

from mcpio import Server  # after the gate: the start itself is what is held back

server = Server("slow", version="1.0.0")


@server.tool
def hello() -> str:
    """Say hello."""
    return "hello from the slow upstream"


server.run()
