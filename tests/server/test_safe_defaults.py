"""Safe defaults of the server framework: resource-template parameters refuse path separators
and ``..`` unless declared as paths, SafePath errors are "not found", and tool results are
capped by ``max_result_bytes`` with a clear marker. Every frame is schema-checked (Peer)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import pytest

from mcpio import PathParam, SafePath, Server, Text, ToolResult
from mcpio._uritemplate import UriTemplate, path_refusal
from tests.server.peer import LEGACY, Peer, arun

NOT_FOUND = -32002


# ============================================================================ template rules
@pytest.mark.parametrize(
    "template,uri,expected",
    [
        ("doc://{name}", "doc://a.txt", {"name": "a.txt"}),
        ("doc://{name}", "doc://..%2Fetc%2Fpasswd", None),
        ("doc://{name}", "doc://%2Fetc%2Fpasswd", None),
        ("doc://{name}", "doc://..", None),
        ("doc://{name}", "doc://.", None),
        ("doc://{name}", "doc://%2E%2E", None),
        ("doc://{name}", "doc://a%5Cb", None),
        ("doc://{name}", "doc://a%00b", None),
        ("doc://{name}", "doc://C%3Afoo", None),
        ("doc://{name}", "doc://a..b", {"name": "a..b"}),  # dots inside a name are fine
        ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
        ("file:///{+path}", "file:///a/../../etc/passwd", None),
        ("file:///{+path}", "file:////etc/passwd", None),
        ("file:///{+path}", "file:///a/%2E%2E/b", None),
        ("file:///{+path}", "file:///a%5C..%5Cb", None),
        ("tree://x{/parts*}", "tree://x/a/b", {"parts": "a/b"}),
        ("tree://x{/parts*}", "tree://x/a/../b", None),
        ("tree://x{/part}", "tree://x/a%2Fb", None),
        ("search://q{?text}", "search://q?text=AC%2FDC", None),
        ("search://q{?text}", "search://q?text=hello", {"text": "hello"}),
    ],
)
def test_template_values_are_refused_unless_declared_as_paths(template, uri, expected):
    t = UriTemplate(template)
    assert t.match(uri) == expected
    names = set(t.variables)
    declared = t.match(uri, paths=names)
    if "%00" in uri:
        assert declared is None  # NUL never passes
    elif expected is None and declared is not None:
        assert any(("/" in v or "\\" in v or ".." in v or ":" in v or v == ".") for v in declared.values())


def test_path_refusal_reasons():
    assert path_refusal("a/b") == "a path separator"
    assert path_refusal("a/b", multi_segment=True) is None
    assert path_refusal("../x", multi_segment=True) == "a '..' segment"
    assert path_refusal("/x", multi_segment=True) == "an absolute path"
    assert path_refusal("..") == "'..'"
    assert path_refusal("a\\b", multi_segment=True) == "a backslash"
    assert path_refusal("../../x", is_path=True) is None
    assert path_refusal("a\0", is_path=True) == "a NUL byte"


def files_server(root: Path) -> Server:
    server = Server("files")
    files = SafePath(root)

    @server.resource("note://{name}")
    def note(name: str) -> str:
        return files.read_text(name)

    @server.resource("file:///{+path}")
    def any_file(path: Annotated[str, PathParam]) -> str:
        return files.read_text(path)  # declared a path: SafePath confines it

    @server.resource("raw://{+path}")
    def raw(path: str) -> str:
        return path  # not declared: "/" allowed by {+…}, ".." refused

    return server


@pytest.mark.parametrize("version", LEGACY)
def test_resource_templates_refuse_escapes_and_safepath_errors_are_not_found(tmp_path, version):
    root = (tmp_path / "root").resolve()
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("A")
    (root / "sub" / "b.txt").write_text("B")
    (tmp_path / "secret.txt").write_text("S")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")

    async def go():
        async with Peer(files_server(root), version=version) as peer:
            read = lambda uri: peer.request("resources/read", {"uri": uri})  # noqa: E731
            assert (await read("note://a.txt"))["result"]["contents"][0]["text"] == "A"
            assert (await read("file:///sub/b.txt"))["result"]["contents"][0]["text"] == "B"
            assert (await read("file:///sub/../a.txt"))["result"]["contents"][0]["text"] == "A"
            assert (await read("raw://x/y"))["result"]["contents"][0]["text"] == "x/y"
            for uri in ("note://..%2Fsecret.txt", "note://sub%2Fb.txt", "raw://x/../y", "raw:///etc/passwd"):
                err = (await read(uri))["error"]
                assert err["code"] == NOT_FOUND and err["data"] == {"uri": uri}, (uri, err)
            for uri in ("file:///../secret.txt", "file:///link.txt", "file:////etc/passwd", "note://link.txt"):
                err = (await read(uri))["error"]
                assert err["code"] == NOT_FOUND, (uri, err)
                assert "outside the allowed folder" in err["message"], err
                assert str(tmp_path / "secret.txt") not in err["message"]  # where a link points is not revealed
            err = (await read("note://missing.txt"))["error"]
            assert err["code"] == NOT_FOUND and "cannot be read" in err["message"]

    arun(go())


# ============================================================================ result cap
def capped_server(**server_options) -> Server:
    server = Server("capped", **server_options)

    @server.tool
    def big(n: int, char: str = "x") -> str:
        return char * n

    @server.tool(max_result_bytes=100)
    def small_cap(n: int) -> str:
        return "y" * n

    @server.tool(max_result_bytes=None)
    def uncapped(n: int) -> str:
        return "z" * n

    @server.tool
    def blocks(n: int) -> ToolResult:
        return ToolResult([Text("a" * n), Text("b" * n), Text("c" * n)])

    @server.tool
    def structured(n: int) -> dict[str, str]:
        return {"data": "d" * n}

    return server


def text_of(result) -> str:
    return "".join(b["text"] for b in result["content"] if b["type"] == "text")


def test_default_cap_is_1_mib_with_a_clear_marker():
    async def go():
        async with Peer(capped_server()) as peer:
            ok = await peer.call_tool("big", {"n": 1024 * 1024 - 1000})
            assert text_of(ok) == "x" * (1024 * 1024 - 1000) and "_meta" not in ok
            cut = await peer.call_tool("big", {"n": 3 * 1024 * 1024})
            text = text_of(cut)
            assert len(text.encode()) <= 1024 * 1024
            assert text.startswith("x" * 1000) and "[truncated: this result has 3,145,728 bytes of text" in text
            assert "max_result_bytes" in text and not cut.get("isError")
            meta = cut["_meta"]["io.mcpio/truncated"]
            assert meta["textBytes"] == 3 * 1024 * 1024 and meta["maxResultBytes"] == 1024 * 1024
            assert meta["shownBytes"] == text.index("\n\n[truncated")

    arun(go())


def test_cut_is_at_a_character_boundary_and_per_tool_settings_win():
    async def go():
        async with Peer(capped_server(max_result_bytes=1000)) as peer:
            cut = await peer.call_tool("big", {"n": 2000, "char": "é"})  # 2 bytes each
            text = text_of(cut)
            assert len(text.encode()) <= 1000 and text.startswith("é") and "\ufffd" not in text
            small = text_of(await peer.call_tool("small_cap", {"n": 150}))
            assert small.startswith("[truncated: this result has 150 bytes of text, over the limit of 100")
            assert text_of(await peer.call_tool("uncapped", {"n": 5000})) == "z" * 5000
            multi = await peer.call_tool("blocks", {"n": 600})
            assert [b["text"][:1] for b in multi["content"]] == ["a", "b"]  # the third block was dropped
            assert "1,800 bytes of text" in multi["content"][1]["text"]
            structured = await peer.call_tool("structured", {"n": 2000})
            assert structured["structuredContent"] == {"data": "d" * 2000}  # it must match its schema
            assert "[truncated" in text_of(structured)

    arun(go())


def test_no_cap_when_disabled_and_bad_settings_are_refused():
    async def go():
        async with Peer(capped_server(max_result_bytes=None)) as peer:
            assert len(text_of(await peer.call_tool("big", {"n": 2 * 1024 * 1024}))) == 2 * 1024 * 1024

    arun(go())
    for bad in (0, -1, 1.5, "1"):
        with pytest.raises(ValueError, match="max_result_bytes"):
            Server("x", max_result_bytes=bad)
        with pytest.raises(ValueError, match="max_result_bytes"):
            Server("x").tool(max_result_bytes=bad)(lambda: "x")
