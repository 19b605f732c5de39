"""A server for the inspector's Tasks and Skills panels: the tools of tests/support/task_tools.py
(one that finishes, one that waits to be cancelled, one that asks a question inside the task, an
ordinary one), a page every 0.2 s so that the panel shows the progress, and a folder of skills
(``skills/``, with hostile HTML in a SKILL.md)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: run as a script, not a package

from mcpio import Server
from tests.support.task_tools import add_task_tools

server = Server("tasks-and-skills", version="0.1.0", task_poll_interval=0.05, skills=Path(__file__).parent / "skills")
add_task_tools(server, page_delay=0.2)

if __name__ == "__main__":
    server.run()
