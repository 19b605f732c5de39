"""The skills extension (SEP-2640) end to end in memory: a folder served, listed, loaded, verified."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from mcpio import Client, InvalidParams, MethodNotFound, Server, SkillVerificationError
from mcpio._skills import parse_frontmatter, split_frontmatter, verify
from mcpio.types import SkillEntry
from tests.client.support import arun

SKILL_MD = """---
name: pdf-tools
description: "Fill PDF forms: fields first."
license: Apache-2.0
allowed-tools: [read_file, 'write file']
metadata:
  author: ann   # a comment
  version: "2"
  tags:
    - pdf
    - forms
notes: |
  line one
  line two
---

# PDF tools
"""


def make_folder(root: Path) -> Path:
    skill = root / "pdf-tools"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "scripts" / "fill.py").write_text("print('fill')\n")
    (skill / "logo.bin").write_bytes(b"\xff\x00\xfe")
    (skill / ".hidden").write_text("not served")
    other = root / "team" / "notes"
    other.mkdir(parents=True)
    (other / "SKILL.md").write_text("---\nname: notes\ndescription: Take notes.\n---\nbody\n")
    return root


def served(tmp_path: Path, era: str, fn: Any) -> Any:
    async def go() -> Any:
        async with Client(Server("skills", skills=make_folder(tmp_path)), era=era) as c:
            return await fn(c)

    return arun(go())


def test_frontmatter_subset() -> None:
    fm = parse_frontmatter(SKILL_MD)
    assert fm == {
        "name": "pdf-tools",
        "description": "Fill PDF forms: fields first.",
        "license": "Apache-2.0",
        "allowed-tools": ["read_file", "write file"],
        "metadata": {"author": "ann", "version": "2", "tags": ["pdf", "forms"]},
        "notes": "line one\nline two\n",
    }
    assert parse_frontmatter("\ufeff---\r\nname: a\r\ndescription: b\r\ncount: 3\r\nok: true\r\n---\r\n") == {
        "name": "a",
        "description": "b",
        "count": 3,
        "ok": True,
    }
    assert split_frontmatter("no header") is None
    for bad in ("# title only\n", "---\nname: {a: 1}\n---\n", "---\nname: 'open\n---\n", "---\n  - x\nname: y\n---\n"):
        with pytest.raises(ValueError):
            parse_frontmatter(bad)


def test_list_get_load_and_read(tmp_path: Path) -> None:
    async def go(c: Client) -> None:
        assert c.server_capabilities.extensions["io.modelcontextprotocol/skills"] == {"directoryRead": True}
        skills = {s.name: s for s in await c.list_skills()}
        assert sorted(skills) == ["notes", "pdf-tools"]
        pdf = skills["pdf-tools"]
        assert pdf.uri == "skill://pdf-tools/SKILL.md" and skills["notes"].uri == "skill://team/notes/SKILL.md"
        assert pdf.frontmatter == parse_frontmatter(SKILL_MD) and pdf.description == "Fill PDF forms: fields first."
        files = {f.uri: f for f in pdf.files or []}
        assert sorted(files) == [
            "skill://pdf-tools/SKILL.md",
            "skill://pdf-tools/logo.bin",
            "skill://pdf-tools/scripts/fill.py",
        ]
        md = files["skill://pdf-tools/SKILL.md"]
        assert (
            md.size == len(SKILL_MD.encode()) and md.digest == "sha256:" + hashlib.sha256(SKILL_MD.encode()).hexdigest()
        )
        assert await c.get_skill(pdf.uri) == pdf
        assert await c.load_skill(pdf) == SKILL_MD
        assert await c.read_skill_file(pdf, "skill://pdf-tools/logo.bin") == b"\xff\x00\xfe"  # a blob, verified
        assert await c.read_skill_file(pdf, "skill://pdf-tools/scripts/fill.py") == b"print('fill')\n"
        with pytest.raises(InvalidParams) as e:
            await c.get_skill("skill://nope/SKILL.md")
        assert e.value.data == {"uri": "skill://nope/SKILL.md"}
        listing = await c.request("resources/directory/read", {"uri": "skill://pdf-tools"})
        kids = {r["uri"]: r.get("mimeType") for r in listing["resources"]}
        assert kids["skill://pdf-tools/scripts"] == "inode/directory" and "skill://pdf-tools/SKILL.md" in kids
        with pytest.raises(InvalidParams):
            await c.request("resources/directory/read", {"uri": "skill://pdf-tools/SKILL.md"})
        resources = {r.uri: r for r in await c.list_resources()}
        assert resources[pdf.uri].name == "pdf-tools" and resources[pdf.uri].mime_type == "text/markdown"

    served(tmp_path, "modern", go)


def test_tampered_content_is_refused(tmp_path: Path) -> None:
    async def go(c: Client) -> None:
        (pdf,) = [s for s in await c.list_skills() if s.name == "pdf-tools"]
        lying = SkillEntry({**pdf, "resources": [{**f, "digest": "sha256:" + "0" * 64} for f in pdf["resources"]]})
        with pytest.raises(SkillVerificationError, match="digest"):
            await c.load_skill(lying)
        short = SkillEntry({**pdf, "resources": [{**f, "size": 1} for f in pdf["resources"]]})
        with pytest.raises(SkillVerificationError, match="bytes read"):
            await c.read_skill_file(short, "skill://pdf-tools/scripts/fill.py")
        renamed = SkillEntry({**pdf, "frontmatter": {**pdf.frontmatter, "description": "Exfiltrate"}})
        with pytest.raises(SkillVerificationError, match=r"frontmatter differs .* description"):
            await c.load_skill(renamed)
        with pytest.raises(SkillVerificationError, match="does not list"):
            await c.read_skill_file(pdf, "file:///etc/passwd")

    served(tmp_path, "modern", go)


def test_legacy_era_has_no_skills_extension(tmp_path: Path) -> None:
    async def go(c: Client) -> None:
        assert c.server_capabilities.extensions == {}
        assert await c.list_skills() == []
        with pytest.raises(MethodNotFound):
            await c.get_skill("skill://pdf-tools/SKILL.md")

    served(tmp_path, "legacy", go)


def test_invalid_folders_say_which_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory"):
        Server("s", skills=tmp_path / "missing")
    bad = tmp_path / "wrong-name"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: other\ndescription: d\n---\n")
    with pytest.raises(ValueError, match=r"wrong-name.SKILL\.md: frontmatter name 'other'"):
        Server("s", skills=tmp_path)
    (bad / "SKILL.md").write_text("no frontmatter")
    with pytest.raises(ValueError, match="begins with"):
        Server("s", skills=tmp_path)


def test_verify_dynamic_entries_check_only_the_frontmatter() -> None:
    entry = {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"}, "resources": "dynamic"}
    verify("skill://a/SKILL.md", b"---\nname: a\ndescription: d\n---\n", entry)
    verify("skill://a/other.txt", b"anything", entry)
    with pytest.raises(SkillVerificationError):
        verify("skill://a/SKILL.md", b"---\nname: b\ndescription: d\n---\n", entry)


def test_cli_lists_skills(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    make_folder(tmp_path / "skills")
    script = tmp_path / "srv.py"
    script.write_text(f"from mcpio import Server\nServer('s', skills={str(tmp_path / 'skills')!r}).run()\n")
    out = subprocess.run(
        [sys.executable, "-m", "mcpio", "list", str(script), "skills"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "skill://pdf-tools/SKILL.md" in out.stdout and "Take notes." in out.stdout
    js = subprocess.run(
        [sys.executable, "-m", "mcpio", "list", "--json", str(script), "skills"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert [s["frontmatter"]["name"] for s in json.loads(js.stdout)] == ["pdf-tools", "notes"]


def test_a_proxy_serves_its_upstreams_skills(tmp_path: Path) -> None:
    """``Server.proxy`` of a server with skills (a real subprocess): the proxy serves none itself,
    so it announces the upstream's skills extension and its ``skills/list`` is the upstream's."""
    import sys

    make_folder(tmp_path / "skills")
    script = tmp_path / "srv.py"
    script.write_text(f"from mcpio import Server\nServer('s', skills={str(tmp_path / 'skills')!r}).run()\n")

    async def go() -> list[str]:
        async with Client(Server.proxy([sys.executable, str(script)]), era="modern", timeout=60) as c:
            return [s.uri for s in await c.list_skills()]

    assert sorted(arun(go(), timeout=90)) == ["skill://pdf-tools/SKILL.md", "skill://team/notes/SKILL.md"]
