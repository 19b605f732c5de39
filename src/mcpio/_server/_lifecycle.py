"""The lifecycle's results: the capabilities a server announces, and what a legacy ``initialize``
and a ``server/discover`` answer, before the era's decorations. Synchronous, and apart from the method table (``_handlers``, whose
``initialize`` and ``discover`` return them): the stdio start-up answers a first request with
them before the engine and the method table are loaded (cold start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# not from _skills: that module loads with the first skill
from .._versions import CORE_TASKS_CAPABILITY, META_SERVER_INFO, SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from .._versions import Rules
    from ._server import Server


NO_CAPABILITIES: dict[str, Any] = {}  # what a session announced before initialize's answer (read only)


def capabilities(server: Server, rules: Rules) -> dict[str, Any]:
    """What ``server`` announces under ``rules`` (initialize, server/discover): derived from what is
    registered now (spec-notes §4), cached per version until the registry changes. ``completions``
    (2025-03-26+) only when something can be completed: a prompt, a resource template or a
    registered completer."""
    cached = server._caps_cache.get(rules.version)
    if cached is not None:
        return cached
    caps: dict[str, Any] = {"logging": {}}
    if rules.completions_capability and (server._prompts or server._templates or server._completer is not None):
        caps["completions"] = {}
    if server._prompts:
        caps["prompts"] = {"listChanged": True}
    if server._resources or server._templates:
        caps["resources"] = {"subscribe": True, "listChanged": True}
    if server._tools:
        caps["tools"] = {"listChanged": True}
    if rules.core_tasks and any(t.task_support != "forbidden" for t in server._tools.values()):
        caps["tasks"] = CORE_TASKS_CAPABILITY  # 2025-11-25; 2026-07-28 has the tasks extension instead
    if rules.stateless:  # extensions (Server.extension; skills, tasks): a member from 2026-07-28 (SEP-2133)
        for ext in server.active_extensions():
            caps.setdefault("extensions", {})[ext.id] = ext.settings
    server._caps_cache[rules.version] = caps
    return caps


# What a server's serverInfo is made of: Server.__setattr__ forgets the kept ones when one is set.
INFO_FIELDS = frozenset({"name", "version", "title", "description", "website_url", "icons"})


def server_info(server: Server, rules: Rules) -> dict[str, Any]:
    """The ``Implementation`` object (serverInfo) of ``server`` under ``rules``: made once per
    version and kept in ``server._infos`` (``{serverInfo: it}``, a result's ``_meta`` when it has
    none, in ``server._metas``) until one of :data:`INFO_FIELDS` is set again, since every modern
    result carries it (``Server._decorate``). Shared by the results that carry them:
    never changed in place (an ``icons`` list changed in place shows in it, as before)."""
    info: dict[str, Any] = {"name": server.name, "version": server.version}
    if server.title and rules.titles:
        info["title"] = server.title
    if rules.icons:  # 2025-11-25 added these Implementation fields
        if server.description and rules.implementation_description:
            info["description"] = server.description
        if server.website_url:
            info["websiteUrl"] = server.website_url
        if server.icons:
            info["icons"] = server.icons
    server._infos[rules.version] = info
    server._metas[rules.version] = {META_SERVER_INFO: info}
    return info


def initialize_result(server: Server, rules: Rules, state: dict[str, Any]) -> dict[str, Any]:
    """The result of a legacy ``initialize`` served under ``rules``; records the capabilities
    announced in the session's ``state``. Synchronous: the stdio start-up answers the first
    ``initialize`` with it before the async engine exists (``_stdio``)."""
    caps = server.capabilities(rules)
    state["capabilities"] = caps
    result: dict[str, Any] = {
        "protocolVersion": rules.version,
        "capabilities": caps,
        "serverInfo": server.server_info(rules),
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


def discover_result(server: Server, rules: Rules) -> dict[str, Any]:
    """The result of ``server/discover`` before the era's decorations. Synchronous: the stdio
    start-up answers a first ``server/discover`` with it (``_stdio.answer_initialize``)."""
    result: dict[str, Any] = {"supportedVersions": list(SUPPORTED_VERSIONS), "capabilities": server.capabilities(rules)}
    if server.instructions:
        result["instructions"] = server.instructions
    return result
