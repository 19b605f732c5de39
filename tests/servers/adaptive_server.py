"""A server for adaptive inlining (issue 17): ``where`` is a plain ``def`` tool that returns
the name of the thread it ran on, or first waits for a writer on the FIFO ``ADAPTIVE_FIFO``
(``block=true``: a tool that was fast and then blocks); ``quick`` and ``text`` (a big
answer at no cost) are plain ``def`` tools too."""

from __future__ import annotations

import os
import threading

from mcpio import Server

server = Server("adaptive", version="1.0.0", max_result_bytes=None)


@server.tool
def where(block: bool = False) -> str:
    """The name of the thread this call ran on; with block, after a writer opened the FIFO."""
    if block:
        with open(os.environ["ADAPTIVE_FIFO"], "rb") as fifo:
            fifo.read()
    return threading.current_thread().name


@server.tool
def quick() -> str:
    """Answer at once."""
    return "quick"


BIG = "x" * (3 * 1024 * 1024)  # built once: returning it costs the tool nothing


@server.tool
def text(big: bool = False) -> str:
    """The thread's name, or (big) 3 MiB of ASCII."""
    return BIG if big else threading.current_thread().name


if __name__ == "__main__":
    server.run()
