"""``mcpio run`` imports msgspec without letting it import typing_extensions
(``mcpio._coldstart.import_msgspec``, called before the served script's imports; ``import mcpio``
itself changes nothing: tests/unit/test_import_side_effects.py). These check, in a fresh
interpreter each (the test venv has typing_extensions installed), that typing_extensions stays
out, that it still imports afterwards,
that msgspec and a server behave the same for hints written with typing_extensions as after a
plain ``import msgspec``, and that the refusal is the importing thread's alone."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from mcpio import _coldstart
from tests.support import uncovered_env


def _run(code: str, measured: bool = True) -> str:
    """``code`` in a fresh interpreter; ``measured=False``: not under coverage (scripts/test measures
    subprocesses, and coverage's start-up imports ``platform`` before the code runs)."""
    env = None if measured else uncovered_env()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_typing_extensions_is_installed_here() -> None:
    """The other tests mean something only where msgspec would otherwise import it."""
    _run("import typing_extensions")


def test_the_server_imports_without_typing_extensions_and_it_imports_afterwards() -> None:
    out = _run(
        """
import sys
import mcpio._coldstart as _c; _c.import_msgspec()
from mcpio import Server
print("msgspec" in sys.modules, "typing_extensions" in sys.modules)
import typing_extensions  # the refusal is gone after the import
print(typing_extensions.TypedDict is not None)
"""
    )
    assert out.splitlines() == ["True False", "True"]


def test_when_already_imported_msgspec_takes_it_as_always() -> None:
    out = _run(
        """
import typing_extensions
import mcpio._coldstart as _c; _c.import_msgspec()
from mcpio import Server
import msgspec._utils as u
print(u._get_type_hints is typing_extensions.get_type_hints)
"""
    )
    assert out == "True"


# msgspec's behaviour on hints written with typing_extensions: TypedDict with Required/NotRequired
# and Annotated constraints, ReadOnly, TypeAliasType, Literal; results and error messages, and a
# JSON schema. Printed as JSON after either kind of import.
_PROBE = """
import json
import typing_extensions as te
from typing import Annotated
class TD(te.TypedDict):
    a: int
    b: te.NotRequired[str]
    c: te.Required[Annotated[int, msgspec.Meta(ge=0)]]
class Opt(te.TypedDict, total=False):
    x: te.ReadOnly[int]
    y: te.Required[str]
Alias = te.TypeAliasType("Alias", list[int])
cases = [
    (TD, {"a": 1, "c": 2}), (TD, {"a": 1}), (TD, {"a": 1, "c": -1}), (TD, {"a": 1, "b": 2, "c": 0}),
    (Opt, {"y": "s"}), (Opt, {}), (Alias, [1, 2]), (te.Literal["a", "b"], "c"),
    (te.Annotated[int, msgspec.Meta(gt=1)], 1),
]
out = []
for tp, value in cases:
    try:
        out.append(repr(msgspec.convert(value, tp)))
    except Exception as exc:
        out.append(f"{type(exc).__name__}: {exc}")
out.append(msgspec.json.schema(TD))
print(json.dumps(out))
"""


def test_msgspec_behaves_as_after_a_plain_import() -> None:
    plain = _run("import msgspec\n" + _PROBE)
    via_mcpio = _run(
        "import sys\nimport mcpio._coldstart as _c; _c.import_msgspec()\nfrom mcpio import Server\nassert 'typing_extensions' not in sys.modules\nimport msgspec\n"
        + _PROBE
    )
    assert json.loads(via_mcpio) == json.loads(plain)
    assert "ValidationError: Object missing required field `c`" in json.loads(plain)  # the probe probes


def test_a_tool_typed_with_typing_extensions_is_listed_and_validated() -> None:
    out = _run(
        """
import asyncio, json, sys
import mcpio._coldstart as _c; _c.import_msgspec()
from mcpio import Client, Server
assert "typing_extensions" not in sys.modules
import typing_extensions as te

class Note(te.TypedDict):
    text: str
    tags: te.NotRequired[list[str]]

server = Server("te")

@server.tool
def save(note: Note) -> int:
    return len(note["text"]) + len(note.get("tags", []))

async def main():
    async with Client(server) as client:
        tools = await client.list_tools()
        good = await client.call_tool("save", {"note": {"text": "abc", "tags": ["x"]}})
        bad = await client.call_tool("save", {"note": {"tags": ["x"]}})
    schema = tools[0].input_schema["$defs"]["Note"]
    print(json.dumps([sorted(schema["properties"]), schema.get("required")]))
    print(good.structured_content, bad.is_error, bad.content[0]["text"])

asyncio.run(main())
"""
    )
    assert out.splitlines() == [
        '[["tags", "text"], ["text"]]',
        "{'result': 4} True Invalid arguments for save: 'note.text' is required",
    ]


@contextlib.contextmanager
def _importing_here() -> Iterator[type[_coldstart._MsgspecImport]]:
    """The finder as during msgspec's import on this thread."""
    finder = _coldstart._MsgspecImport
    previous = finder.thread
    finder.thread = threading.get_ident()
    try:
        yield finder
    finally:
        finder.thread = previous
        finder.standin = None


def _from_another_thread(name: str) -> object:
    seen: list[object] = []
    other = threading.Thread(target=lambda: seen.append(_coldstart._MsgspecImport.find_spec(name)))
    other.start()
    other.join()
    return seen[0]


def test_the_refusal_is_the_importing_threads_alone() -> None:
    with _importing_here() as finder:
        with pytest.raises(ModuleNotFoundError):
            finder.find_spec("typing_extensions")
        assert finder.find_spec("typing") is None
        assert _from_another_thread("typing_extensions") is None


def test_the_finder_list_is_replaced_not_changed_in_place() -> None:
    """Another thread's import may be iterating ``sys.meta_path`` by index: the list it holds
    is never changed, and the finders are the same ones afterwards."""
    out = _run(
        """
import sys
held = sys.meta_path
before = list(held)
import mcpio._coldstart as _c; _c.import_msgspec()
from mcpio import Server
print(held == before, sys.meta_path == before, sys.meta_path is not held)
"""
    )
    assert out == "True True True"


# ---- uuid's platform (Linux): a stand-in while msgspec imports, the real module afterwards
linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the stand-in is served on Linux only")


def _plain(code: str) -> str:
    """``code`` run after a plain ``import uuid`` (no mcpio), for comparison."""
    return _run("import uuid, platform, os\n" + code, measured=False)


@linux_only
def test_platform_is_not_imported_by_the_server_and_uuid_reads_the_same() -> None:
    probe = "print(uuid._LINUX, uuid._AIX, uuid._platform_system)"
    out = _run(
        """
import sys
import mcpio._coldstart as _c; _c.import_msgspec()
from mcpio import Server
import uuid
print("platform" in sys.modules, "uuid" in sys.modules)
"""
        + probe,
        measured=False,
    )
    assert out.splitlines() == ["False True", _plain(probe)]


@linux_only
def test_platform_imports_afterwards_as_the_real_module() -> None:
    out = _run(
        """
import os, sys, uuid
import mcpio._coldstart as _c; _c.import_msgspec()
from mcpio import Server
import platform
print(type(platform).__name__, platform.__file__.endswith("platform.py"), platform.system() == os.uname().sysname)
print(platform.python_version() == "%d.%d.%d" % sys.version_info[:3], uuid.uuid4().version, uuid.uuid1().version)
""",
        measured=False,
    )
    assert out.splitlines() == ["module True True", "True 4 1"]


@linux_only
def test_platform_imported_before_is_the_one_uuid_reads() -> None:
    out = _run(
        """
import platform
import mcpio._coldstart as _c; _c.import_msgspec()
from mcpio import Server
import sys, uuid
print(sys.modules["platform"] is platform, uuid.platform is platform, uuid._platform_system == platform.system())
"""
    )
    assert out == "True True True"


def test_the_stand_in_gives_the_real_modules_answers() -> None:
    """A thread that imports platform while the stand-in is in ``sys.modules`` gets a working
    module: ``system()`` as the real one gives it on Linux, any other name from the real module."""
    import platform

    standin = _coldstart._PlatformForUuid("platform")
    if sys.platform == "linux":
        assert standin.system() == platform.system() == os.uname().sysname
    assert standin.python_version() == platform.python_version()
    assert standin.uname() == platform.uname()
    with pytest.raises(AttributeError):
        standin.__path__  # noqa: B018  # the import system's look-ups find nothing, as on a module


@linux_only
def test_the_stand_in_is_served_to_the_importing_thread_only() -> None:
    with _importing_here() as finder:
        spec = finder.find_spec("platform")
        assert spec is not None and spec.name == "platform" and spec.loader is finder
        assert _from_another_thread("platform") is None


# ---- msgspec's ForwardRef probe: answered without compile() (mcpio._coldstart._ProbeCompile)


def test_the_forward_ref_probe_finds_what_it_finds_after_a_plain_import() -> None:
    probe = """
import typing, msgspec._utils as u
ref = u._forward_ref("Foo")
print(ref.__forward_is_class__, ref.__forward_is_argument__, type(typing.ForwardRef("int").__forward_code__).__name__)
"""
    plain = _run("import msgspec\n" + probe)
    via_mcpio = _run(
        "import typing\nimport mcpio._coldstart as _c; _c.import_msgspec()\nassert 'compile' not in vars(typing)\n"
        + probe
    )
    assert via_mcpio == plain == "True False code"


def test_any_other_compile_during_the_import_is_the_builtins() -> None:
    """Only the probe's own call (this thread, ``"Foo"``, made for ``msgspec._utils``) is answered
    without compiling: the same source from elsewhere, or from another thread, is compiled."""
    probe = _coldstart._ProbeCompile
    previous, probe.thread = probe.thread, threading.get_ident()
    try:

        def forward_ref_of_someone_else() -> object:  # a frame as ForwardRef's: called from here
            return probe.compile("Foo", "<string>", "eval")

        codes = [forward_ref_of_someone_else(), probe.compile("x + 1", "<string>", "eval")]
        other = threading.Thread(target=lambda: codes.append(forward_ref_of_someone_else()))
        other.start()
        other.join()
    finally:
        probe.thread = previous
    assert [type(c).__name__ for c in codes] == ["code", "code", "code"]
    assert eval(codes[1], {"x": 1}) == 2  # the code compiled, run
