"""The client side of the skills extension (SEP-2640): list, fetch and verify, lazily.

A host lists skills (``skills/list``, every page) or gets one (``skills/get``) and fetches
nothing more until a skill is *loaded* (§Integrity and verification: no prefetch on connect,
on listing or on approval). :func:`load_skill` then reads the skill's SKILL.md and
:func:`read_skill_file` one supporting file, each verified against the entry (size, digest and,
for SKILL.md, the frontmatter field by field) before it is returned: content that fails raises
:class:`~mcpio.SkillVerificationError` and is never handed out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._errors import MethodNotFound, RemoteProtocolError
from .._versions import SKILLS_EXTENSION
from ._pages import collect
from ._results import ResourceContents, SkillEntry, wrap_list

if TYPE_CHECKING:
    from ._client import Client


def declared(client: Client) -> bool:
    """Whether the server declared the skills extension."""
    return SKILLS_EXTENSION in client.server_capabilities.extensions


async def list_skills(client: Client) -> list[SkillEntry]:
    """Every skill entry the server lists (following ``nextCursor``); [] without the extension."""
    if not declared(client):
        return []
    return wrap_list(SkillEntry, await collect(client, "skills/list", "skills", "uri"))


async def get_skill(client: Client, uri: str) -> SkillEntry:
    """The entry of one skill by its SKILL.md URI (``skills/get``)."""
    if not declared(client):
        raise MethodNotFound(f"skills/get: the server did not declare the {SKILLS_EXTENSION} extension")
    result = await client.request("skills/get", {"uri": uri})
    skill = result.get("skill") if isinstance(result, dict) else None
    if not isinstance(skill, dict):
        raise RemoteProtocolError("skills/get: the result has no 'skill' object")
    return SkillEntry(skill)


async def read_skill_file(client: Client, entry: SkillEntry, uri: str) -> bytes:
    """The raw bytes of one file the skill ``entry`` lists, verified (size, digest, frontmatter).

    Raises :class:`SkillVerificationError` when the file is not listed or does not match."""
    from .._skills import SkillVerificationError, verify  # hashlib, json: not on a client's boot

    listed = entry.files
    if listed is not None and not any(f.uri == uri for f in listed):
        raise SkillVerificationError(uri, "the skill's entry does not list this file, so it cannot be verified")
    contents = await client.read_resource(uri)
    match = next((c for c in contents if c.uri == uri), contents[0] if len(contents) == 1 else None)
    if not isinstance(match, ResourceContents) or (match.text is None and match.blob is None):
        raise SkillVerificationError(uri, "resources/read returned no text or blob for it")
    data = match.content_bytes()
    verify(uri, data, entry)
    return data


async def load_skill(client: Client, entry: SkillEntry) -> str:
    """Load a skill: read its SKILL.md, verify it against ``entry``, return its text.

    Supporting files are not read here (fetch them with :func:`read_skill_file` when needed)."""
    return (await read_skill_file(client, entry, entry.uri)).decode("utf-8")
