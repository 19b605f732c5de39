"""Workshop server: keyword search over the client's roots, documents as resources.

* tool ``key_word_search(keyword, root_directory=None)``: counts the matches of ``keyword``
  per file under the client's roots (asked with ``roots/list`` after
  ``notifications/initialized`` and again on ``notifications/roots/list_changed``); without
  roots it searches ``root_directory``;
* resources: every document of ``examples/docs`` (or ``$WORKSHOP_DOCS``) as ``doc://<name>``,
  listed 5 per page, and the template ``doc://{name}``;
* prompt ``search_keyword(keyword)``.

Run ``MCPIO_TRACE=trace.log python examples/workshop.py`` to log every message to trace.log.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from mcpio import Context, ResourceNotFound, Server, ToolError

DOCS = Path(os.environ.get("WORKSHOP_DOCS", Path(__file__).parent / "docs")).resolve()
MAX_FILE_BYTES = 2 * 1024 * 1024

server = Server(
    "workshop",
    version="1.0.0",
    instructions="Search files for a keyword with key_word_search; read the workshop documents as doc:// resources.",
    page_size=5,
)

# Roots per connection would belong on the session; a stdio server has exactly one client.
_roots: list[Path] = []


def _root_paths(roots: list[dict]) -> list[Path]:
    paths = []
    for root in roots:
        uri = root.get("uri", "")
        parsed = urlparse(uri)
        if parsed.scheme == "file":
            paths.append(Path(unquote(parsed.path)).resolve())
    return paths


@server.on_notification("notifications/initialized")
@server.on_notification("notifications/roots/list_changed")
async def refresh_roots(ctx: Context, params: dict) -> None:
    if "roots" not in ctx.client_capabilities:
        return
    _roots[:] = _root_paths(await ctx.list_roots())
    await ctx.info(f"roots: {[str(p) for p in _roots]}")


def _count(path: Path, needle: str) -> int:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return 0
        return path.read_text(encoding="utf-8", errors="ignore").lower().count(needle)
    except OSError:
        return 0


@server.tool(title="Keyword search", annotations={"readOnlyHint": True, "openWorldHint": False})
def key_word_search(keyword: str, root_directory: str | None = None) -> dict[str, int]:
    """Count how often a keyword occurs in each file under the client's roots.

    Args:
        keyword: The word to look for (case-insensitive).
        root_directory: Folder to search when the client declared no roots.
    """
    if not keyword.strip():
        raise ToolError("keyword must not be empty")
    roots = list(_roots) or ([Path(root_directory).resolve()] if root_directory else [])
    if not roots:
        raise ToolError("the client declared no roots; pass root_directory")
    needle = keyword.lower()
    counts: dict[str, int] = {}
    for root in roots:
        if not root.is_dir():
            raise ToolError(f"{root} is not a directory")
        for path in sorted(root.rglob("*")):
            # Never follow a link out of the root.
            if path.is_file() and not path.is_symlink() and path.resolve().is_relative_to(root):
                n = _count(path, needle)
                if n:
                    counts[str(path.relative_to(root))] = n
    return counts


def _doc_reader(path: Path):
    def read() -> str:
        return path.read_text(encoding="utf-8")

    read.__name__ = path.stem.replace("-", "_")
    read.__doc__ = f"Workshop document {path.name}"
    return read


for _path in sorted(DOCS.glob("*")):
    if _path.is_file():
        server.add_resource(_doc_reader(_path), f"doc://{_path.name}", name=_path.name,
                            mime_type="text/markdown" if _path.suffix == ".md" else "text/plain")


@server.resource("doc://{name}", mime_type="text/plain")
def document(name: str) -> str:
    """Any workshop document by file name."""
    path = (DOCS / name).resolve()
    if not path.is_relative_to(DOCS) or not path.is_file():
        raise ResourceNotFound(f"doc://{name}")
    return path.read_text(encoding="utf-8")


@server.prompt(title="Search for a keyword")
def search_keyword(keyword: str) -> str:
    """Ask the assistant to search the workspace for a keyword."""
    return (
        f"Use the key_word_search tool to find where '{keyword}' appears in my files, "
        "then summarise which files mention it most."
    )


if __name__ == "__main__":
    server.run()
