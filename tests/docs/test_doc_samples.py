"""Every ```python block of the documentation runs, so no sample can rot.

Collected from README.md and docs/**/*.md. The conventions (docs/contributing.md):

- a ```python block is a whole program: it is written to a file in a temporary folder (one per
  page) and run there with this Python, in a subprocess, with a timeout;
- ``<!-- no-test -->`` or ``<!-- no-test: why -->`` on the line before the fence skips that
  block (give the reason in the marker or in the prose around the block);
- ``<!-- file: NAME -->`` on the line before the fence writes the block to NAME in the page's
  folder instead, for later blocks of the same page to use (``import server``, ``mcpio list
  server.py``); this works before a fence of any language (```json for a config file). A ``.py`` file is then executed as a module (its ``if __name__ ==
  "__main__":`` part does not run), and a ``test_*.py`` file is run with pytest.

Blocks may be indented (inside a list item); the indentation of the fence is removed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # seconds per block; a block should take well under one
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>```+)(?P<lang>[\w+-]*)[^\n]*$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<kind>no-test|file)\s*(?::\s*(?P<arg>.*?))?\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    code: str
    skip: str | None = None  # the reason given by <!-- no-test: ... -->
    file: str | None = None  # <!-- file: NAME -->

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def pages() -> list[Path]:
    docs = sorted((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").is_dir() else []
    return [ROOT / "README.md", *docs]


def parse(page: Path) -> list[Block]:
    """The ```python blocks of one page, with the marker on the line before each (if any)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, lang = m["indent"], m["ticks"], m["lang"].lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not re.match(rf"^[ \t]*{ticks}\s*$", lines[i]):
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1  # the closing fence
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = _MARKER.match(prev)
        skip = file = None
        if marker and marker["kind"] == "no-test":
            skip = marker["arg"] or ""
        elif marker and marker["kind"] == "file":
            file = marker["arg"] or ""
        if lang != "python" and file is None:  # other languages are shown, not run (unless a file)
            continue
        blocks.append(Block(page, start + 1, "\n".join(body) + "\n", skip, file))
    return blocks


ALL = [b for p in pages() for b in parse(p)]


def test_the_collector_finds_the_samples():
    """A guard against a collector that silently finds nothing (a changed fence style, a moved folder)."""
    ran = [b for b in ALL if b.skip is None]
    assert len(ran) >= 30, f"only {len(ran)} runnable python blocks found in {len(pages())} pages"
    assert any(b.file for b in ALL), "no <!-- file: --> block found"


@pytest.mark.parametrize("block", ALL, ids=[b.id for b in ALL])
def test_sample(block: Block, tmp_path: Path) -> None:
    if block.skip is not None:
        pytest.skip(f"no-test: {block.skip or 'the reason is in the prose'}")
    if block.file is not None:
        assert re.fullmatch(r"[\w.-]+(/[\w.-]+)*", block.file), f"{block.id}: bad file name {block.file!r}"
    # The page's earlier <!-- file: --> blocks, in order (a later one of the same name wins).
    for earlier in parse(block.page):
        if earlier.line >= block.line:
            break
        if earlier.file:
            target = tmp_path / earlier.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(earlier.code, encoding="utf-8")
    env = dict(os.environ)
    # The commands a reader types (mcpio, pytest) are this venv's, as after `source .venv/bin/activate`.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = str(tmp_path)
    env.pop("MCPIO_TRACE", None)
    if block.file:
        target = tmp_path / block.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.code, encoding="utf-8")
        if not block.file.endswith(".py"):
            return
        name = Path(block.file).name
        if name.startswith("test_"):
            argv = [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--rootdir",
                str(tmp_path),
                block.file,
            ]
        else:
            argv = [
                sys.executable,
                "-c",
                "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__docs__')",
                block.file,
            ]
    else:
        (tmp_path / "_block.py").write_text(block.code, encoding="utf-8")
        argv = [sys.executable, "_block.py"]
    try:
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{block.id}: still running after {TIMEOUT} s\n--- stdout\n{exc.stdout}\n--- stderr\n{exc.stderr}")
    if done.returncode != 0:
        pytest.fail(
            f"{block.id}: exit {done.returncode}\n--- code\n{block.code}--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
