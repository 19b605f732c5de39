"""``import mcpio`` inside someone else's application only defines modules: the import system's
finders, the modules in ``sys.modules`` and the garbage collector are as the application left
them, before and after the names it uses are loaded. (The cold-start devices are the command
line's own: ``mcpio._coldstart``, tests/unit/test_msgspec_import.py.)"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import gc, json, sys
gc.set_threshold(1234, 11, 12)
{gc_state}
before_modules = set(sys.modules)
def state():
    return {{
        "meta_path": [repr(f) for f in sys.meta_path],
        "meta_path_object": id(sys.meta_path),
        # platform as the application has it: the one it imported, or none yet (uuid may import
        # the real one with msgspec: then it is the real module)
        "platform": id(sys.modules["platform"]) if "platform" in before_modules else None,
        "platform_real": getattr(sys.modules.get("platform"), "__file__", "platform.py").endswith("platform.py"),
        "gc": [gc.isenabled(), gc.get_threshold()],
    }}
before = state()
import mcpio
from mcpio import Client, Server, ToolResult  # every lazily loaded name the application uses
server = Server("s")
after = state()
import platform
print(json.dumps([before, after, type(platform).__name__, platform.__file__.endswith("platform.py")]))
"""


def probe(gc_state: str) -> list:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(gc_state=gc_state)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_importing_mcpio_changes_no_interpreter_state() -> None:
    for gc_state in ("", "gc.disable()", "import platform"):
        before, after, kind, real = probe(gc_state)
        assert after == before, gc_state
        assert kind == "module" and real  # platform, imported after mcpio, is the real module
