"""Workshop server: keyword search over the client's roots, documents as resources.

* tool ``key_word_search(keyword, root_directory=None)``: counts the case-insensitive
  occurrences of ``keyword`` (as a substring) in each file under the client's roots and returns
  ``{path: count}`` for the files that mention it; paths are relative to the root, or full
  paths when several roots were searched. The roots are asked for with ``roots/list`` after
  ``notifications/initialized`` and again on ``notifications/roots/list_changed`` (a search
  waits for a refresh in progress); in the 2026-07-28 era, where neither exists, each search
  asks for them (an input round). A client without the ``roots`` capability names the folder
  in ``root_directory``; with roots, ``root_directory`` may narrow the search to a folder inside
  them and is refused outside them. Without either the result is an ``isError`` result.
  Every file access goes through :class:`mcpio.SafePath`: symbolic links are never followed (a
  link cannot lead out of a root), ``root_directory`` cannot name a folder outside the roots,
  only regular files up to 10 MiB are read (a FIFO never blocks the search), binary files (a
  NUL byte early on) and ``.git``-like folders are skipped;
* resources: every document of ``examples/docs`` (or ``$WORKSHOP_DOCS``) as ``doc://<name>``,
  listed 5 per page, and the template ``doc://{name}``, which serves only regular files directly
  in that folder (``../`` and links are "not found");
* prompt ``search_keyword(keyword)``.

Run ``MCPIO_TRACE=trace.log python examples/workshop.py`` to log every message to trace.log.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from mcpio import Context, ResourceNotFound, SafePath, SafePathError, Server, ToolError

DOCS = Path(os.environ.get("WORKSHOP_DOCS", Path(__file__).parent / "docs")).resolve()
DOC_FILES = SafePath(DOCS, follow_symlinks=False)
MAX_FILE_BYTES = 10 * 1024 * 1024
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"})
ROOTS_TIMEOUT = 10.0  # how long a search waits for the client's roots/list answer

server = Server(
    "workshop",
    version="1.0.0",
    instructions="Search files for a keyword with key_word_search; read the workshop documents as doc:// resources.",
    page_size=5,
)

# ============================================================================ roots
# Kept per connection in session.state: "workshop_roots" (list[Path], once known),
# "workshop_refresh" (the refresh task in progress) and "workshop_gen" (newest refresh wins).


def _root_paths(roots: list[dict[str, Any]]) -> list[Path]:
    """Directories of the client's file:// roots, resolved; nested duplicates removed."""
    paths: list[Path] = []
    for root in roots:
        uri = root.get("uri") if isinstance(root, dict) else None
        parsed = urlparse(uri) if isinstance(uri, str) else None
        if parsed is None or parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
            continue
        paths.append(Path(unquote(parsed.path)).resolve())
    paths.sort(key=lambda p: len(p.parts))
    kept: list[Path] = []
    for p in paths:
        if not any(p.is_relative_to(k) for k in kept):
            kept.append(p)
    return kept


@server.on_notification("notifications/initialized")
@server.on_notification("notifications/roots/list_changed")
async def refresh_roots(ctx: Context, params: dict) -> None:
    if "roots" not in ctx.client_capabilities:
        return
    state = ctx.session.state
    gen = state["workshop_gen"] = state.get("workshop_gen", 0) + 1
    state["workshop_refresh"] = asyncio.current_task()
    try:
        roots = _root_paths(await ctx.list_roots(timeout=ROOTS_TIMEOUT))
    except Exception as exc:  # the client failed to answer: keep what we had
        await ctx.warning(f"roots/list failed ({exc}); keeping the previous roots")
        return
    if state.get("workshop_gen") == gen:  # an older answer never overwrites a newer one
        state["workshop_roots"] = roots
        await ctx.info(f"searching in: {', '.join(str(p) for p in roots) or '(no roots)'}")


async def _client_roots(ctx: Context) -> list[Path] | None:
    """The client's roots, waiting for a refresh in progress; None without the capability."""
    if "roots" not in ctx.client_capabilities:
        return None
    if ctx.stateless:  # 2026-07-28: no connection state and no list_changed; ask on every call
        return _root_paths(await ctx.list_roots(timeout=ROOTS_TIMEOUT))
    state = ctx.session.state
    task = state.get("workshop_refresh")
    if task is not None and not task.done():
        await asyncio.wait({task}, timeout=ROOTS_TIMEOUT)  # not awaited directly: never cancel it
    if "workshop_roots" not in state:  # not fetched yet (or the fetch failed): ask now
        state["workshop_roots"] = _root_paths(await ctx.list_roots(timeout=ROOTS_TIMEOUT))
    return state["workshop_roots"]


# ============================================================================ search
def _count(files: SafePath, path: Path, needle: str) -> int:
    """Occurrences of ``needle`` (casefolded) in a regular text file; 0 for anything else."""
    try:
        data = files.read_bytes(path, max_bytes=MAX_FILE_BYTES)  # regular files only, never a link
    except SafePathError:
        return 0  # too large, unreadable, or swapped for a link or a FIFO since the listing
    if b"\0" in data[:8192]:
        return 0
    return data.decode("utf-8", "replace").casefold().count(needle)


def _search(folders: list[Path], needle: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    several = len(folders) > 1
    for folder in folders:
        try:
            files = SafePath(folder)
        except ValueError:
            raise ToolError(f"{folder} is not a directory") from None
        # walk() never follows a link (in or out) and lists regular files only.
        for path in files.walk(skip_dirs=SKIP_DIRS):
            n = _count(files, path, needle)
            if n:
                counts[str(path) if several else files.relative(path)] = n
    return counts


@server.tool(title="Keyword search", annotations={"readOnlyHint": True, "openWorldHint": False})
async def key_word_search(keyword: str, ctx: Context, root_directory: str | None = None) -> dict[str, int]:
    """Count how often a keyword occurs in each file under the client's roots.

    Args:
        keyword: The text to look for (case-insensitive; it may be part of a longer word).
        root_directory: Folder to search when the client declared no roots; with roots, a
            folder inside them (absolute, or relative to the first root) to narrow the search.
    """
    needle = keyword.casefold()
    if not needle.strip():
        raise ToolError("keyword must not be empty")
    roots = await _client_roots(ctx)
    if roots:
        targets = roots
        if root_directory:
            existing = [r for r in roots if r.is_dir()]
            try:  # relative to the first root; absolute only inside the roots; links resolved
                folder = SafePath(*existing).resolve(os.path.expanduser(root_directory)) if existing else None
            except SafePathError:
                folder = None
            if folder is None:
                raise ToolError(f"{root_directory} is outside the client's roots: {', '.join(map(str, roots))}")
            targets = [folder]
    elif root_directory:
        targets = [Path(root_directory).expanduser().resolve()]
    else:
        why = "declared no roots" if roots is None else "has no file:// roots"
        raise ToolError(f"the client {why}; pass root_directory to say which folder to search")
    return await asyncio.to_thread(_search, targets, needle)


# ============================================================================ documents
def _mime(path: Path) -> str:
    return "text/markdown" if path.suffix == ".md" else "text/plain"


def _doc(name: str) -> dict[str, str]:
    """Document ``name``: a regular file directly in DOCS. The ``doc://{name}`` template already
    refuses ``/``, ``\\``, ``..`` and NUL; DOC_FILES refuses links and anything but a regular
    file, and its SafePathError reaches the client as "resource not found" with the reason."""
    path = DOC_FILES.resolve(name)
    if path.parent != DOC_FILES.roots[0]:
        raise ResourceNotFound(f"doc://{name}")
    return {"uri": f"doc://{name}", "mimeType": _mime(path), "text": DOC_FILES.read_text(path, errors="replace")}


def _doc_reader(path: Path):
    def read() -> dict[str, str]:
        return _doc(path.name)

    read.__name__ = path.stem.replace("-", "_")
    read.__doc__ = f"Workshop document {path.name}"
    return read


for _path in DOC_FILES.iterdir():  # links left out (follow_symlinks=False)
    if _path.is_file() and not _path.name.startswith("."):
        server.add_resource(
            _doc_reader(_path),
            f"doc://{_path.name}",
            name=_path.name,
            mime_type=_mime(_path),
            size=_path.stat().st_size,
        )


@server.resource("doc://{name}", mime_type="text/plain")
def document(name: str) -> dict[str, str]:
    """Any workshop document by file name."""
    return _doc(name)


@server.prompt(title="Search for a keyword")
def search_keyword(keyword: str) -> str:
    """Ask the assistant to search the workspace for a keyword.

    Args:
        keyword: The word to search for.
    """
    return (
        f"Use the key_word_search tool to find where '{keyword}' appears in my files, "
        "then summarise which files mention it most."
    )


if __name__ == "__main__":
    server.run()
