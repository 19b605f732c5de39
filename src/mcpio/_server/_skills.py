"""Serving a folder of Agent Skills through the skills extension (SEP-2640).

``Server(..., skills="path/to/skills")`` (or ``server.add_skills(folder)``) reads the folder
once: every directory under it holding a ``SKILL.md`` is a skill, its path below the folder is
the ``<skill-path>`` of ``skill://<skill-path>/SKILL.md``, and every regular file in it (hidden
files and nested skills aside) is one of its resources. The server then

* declares ``io.modelcontextprotocol/skills: {}`` under ``capabilities.extensions`` (2026-07-28,
  the era with extensions; SEP-2133) next to the ``resources`` capability the files need;
* answers ``skills/list`` (paginated; an entry is never split) and ``skills/get`` (-32602 for a
  URI that is not a served skill) with entries carrying the frontmatter verbatim and each file's
  ``{uri, digest, size}`` (§skills/list);
* serves each file through ``resources/read`` (SKILL.md as ``text/markdown``, named and
  described by its frontmatter; §SKILL.md resource);
* declares ``directoryRead: true`` and answers ``resources/directory/read`` on a skill's
  directory or one of its subdirectories: the direct children, subdirectories with mimeType
  ``inode/directory`` (paginated; -32602 for a URI that is not such a directory).

The files are read at registration, so the bytes served are the bytes digested: editing the
folder afterwards changes nothing until ``add_skills`` runs again. Errors in the folder (no
frontmatter, a name that differs from its directory's) raise :class:`ValueError` naming the file.
"""

from __future__ import annotations

import logging
import mimetypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import InvalidParams, MethodNotFound
from .._skills import (
    MAX_RESOURCES,
    MAX_TOTAL_SIZE,
    NAME_RE,
    SKILL_FILE,
    SKILL_MIME_TYPE,
    SKILLS_EXTENSION,
    digest,
    parse_frontmatter,
)
from ._context import Context
from ._pagination import paginate

if TYPE_CHECKING:
    from ._server import Server

log = logging.getLogger("mcpio.server")
DIRECTORY_MIME_TYPE = "inode/directory"


class Skill:
    """One skill read from disk: its entry and its files (URI -> raw bytes)."""

    def __init__(self, uri: str, frontmatter: dict[str, Any], files: dict[str, bytes]) -> None:
        self.uri = uri
        self.frontmatter = frontmatter
        self.files = files
        self.dirs: dict[str, list[dict[str, Any]]] = {}  # directory URI -> its direct children
        top = uri.rsplit("/", 1)[0]
        self.dirs[top] = []
        for file_uri in files:
            parent, _, name = file_uri.rpartition("/")
            child: dict[str, Any] = {"uri": file_uri, "name": name}
            mime = SKILL_MIME_TYPE if file_uri == uri else mimetypes.guess_type(name)[0]
            if mime:
                child["mimeType"] = mime
            while parent not in self.dirs:  # a new subdirectory: list it in its own parent too
                self.dirs[parent] = []
                grand, _, dname = parent.rpartition("/")
                self.dirs.setdefault(grand, []).append({"uri": parent, "name": dname, "mimeType": DIRECTORY_MIME_TYPE})
            self.dirs[parent].append(child)
        self.entry: dict[str, Any] = {
            "uri": uri,
            "frontmatter": frontmatter,
            "resources": [{"uri": u, "digest": digest(b), "size": len(b)} for u, b in files.items()],
        }


def read_skills(folder: str | os.PathLike[str]) -> list[Skill]:
    """Every skill under ``folder`` (sorted by URI); :class:`ValueError` for an invalid one."""
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(
            f"skills folder {os.fspath(folder)!r} is not a directory; pass the folder that holds your skills"
        )
    skills: list[Skill] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if SKILL_FILE in filenames and Path(dirpath) != root:
            skills.append(_read_skill(root, Path(dirpath)))
    return sorted(skills, key=lambda s: s.uri)


def _read_skill(root: Path, folder: Path) -> Skill:
    rel = folder.relative_to(root).as_posix()
    manifest = folder / SKILL_FILE
    try:
        frontmatter = parse_frontmatter(manifest.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(
            f"{manifest}: {exc}; a SKILL.md begins with '---', name: and description:, then '---'"
        ) from None
    name = folder.name
    if frontmatter.get("name") != name:
        raise ValueError(
            f"{manifest}: frontmatter name {frontmatter.get('name')!r} must equal its directory's name {name!r} (SEP-2640)"
        )
    if not NAME_RE.match(name):
        raise ValueError(f"{manifest}: skill name {name!r} must be 1-64 lowercase letters, digits and single hyphens")
    if not isinstance(frontmatter.get("description"), str) or not frontmatter["description"]:
        raise ValueError(f"{manifest}: the frontmatter needs a non-empty description")
    base = f"skill://{rel}"
    files: dict[str, bytes] = {f"{base}/{SKILL_FILE}": manifest.read_bytes()}
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        # hidden entries are not served; a nested skill is its own skill, not files of this one
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not (here / d / SKILL_FILE).exists())
        for fname in sorted(filenames):
            path = here / fname
            if fname.startswith(".") or path.is_symlink() or not path.is_file() or path == manifest:
                continue
            files[f"{base}/{path.relative_to(folder).as_posix()}"] = path.read_bytes()
    total = sum(len(b) for b in files.values())
    if len(files) > MAX_RESOURCES or total > MAX_TOTAL_SIZE:
        log.warning(
            "skill %s has %d files, %d bytes: beyond the SEP-2640 limits (512 files, 16 MiB) hosts may refuse",
            name,
            len(files),
            total,
        )
    return Skill(f"{base}/{SKILL_FILE}", frontmatter, files)


def register(server: Server, folder: str | os.PathLike[str]) -> list[Skill]:
    """Read ``folder`` and add its files to ``server`` as resources; returns the skills."""
    skills = read_skills(folder)
    for skill in skills:
        for uri, data in skill.files.items():
            if uri == skill.uri:
                server.add_resource(
                    _reader(data),
                    uri,
                    name=str(skill.frontmatter["name"]),
                    description=str(skill.frontmatter["description"]),
                    mime_type=SKILL_MIME_TYPE,
                )
            else:
                mime = mimetypes.guess_type(uri.rsplit("/", 1)[-1])[0]
                server.add_resource(_reader(data), uri, name=uri.removeprefix("skill://"), mime_type=mime)
    return skills


def _reader(data: bytes) -> Callable[[], str | bytes]:
    """The resource function for a file: its text when it is UTF-8 (whose encoding gives back
    the same bytes, so the digest holds), else the bytes (a base64 blob)."""
    try:
        content: str | bytes = data.decode("utf-8")
    except UnicodeDecodeError:
        content = data

    def read() -> str | bytes:
        return content

    return read


# ---------------------------------------------------------------------- methods
def _skills_of(server: Server, ctx: Context, method: str) -> dict[str, Skill]:
    rules = ctx.rules
    assert rules is not None
    caps = server.capabilities(rules)
    if SKILLS_EXTENSION not in caps.get("extensions", {}):
        raise MethodNotFound(
            f"Method not found: {method!r} (this server did not declare the {SKILLS_EXTENSION} extension)"
        )
    return server.registry.skills


async def skills_list(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """``skills/list``: one page of entries (whole entries only) and ``nextCursor``."""
    skills = _skills_of(server, ctx, "skills/list")
    page, nxt = paginate(list(skills.values()), params, server.page_size, "skills")
    out: dict[str, Any] = {"skills": [s.entry for s in page]}
    if nxt is not None:
        out["nextCursor"] = nxt
    return out


async def skills_get(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """``skills/get``: the entry of one skill by its SKILL.md URI; -32602 when not served."""
    skills = _skills_of(server, ctx, "skills/get")
    uri = params.get("uri")
    skill = skills.get(uri) if isinstance(uri, str) else None
    if skill is None:
        raise InvalidParams(
            f"Invalid params: {uri!r} is not a skill this server serves; call skills/list for them", data={"uri": uri}
        )
    return {"skill": skill.entry}


async def directory_read(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """``resources/directory/read`` (SEP-2640 §Directory reads): the direct children of a skill
    directory, one page at a time; -32602 when ``uri`` is not a served directory."""
    skills = _skills_of(server, ctx, "resources/directory/read")
    uri = params.get("uri")
    children = next((s.dirs[uri] for s in skills.values() if uri in s.dirs), None) if isinstance(uri, str) else None
    if children is None:
        raise InvalidParams(f"Invalid params: {uri!r} is not a directory this server serves", data={"uri": uri})
    page, nxt = paginate(children, params, server.page_size, "directory")
    out: dict[str, Any] = {"resources": page}
    if nxt is not None:
        out["nextCursor"] = nxt
    return out
