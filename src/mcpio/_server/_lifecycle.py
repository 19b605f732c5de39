"""The lifecycle's results: the capabilities a server announces, and what a legacy ``initialize``
and a ``server/discover`` answer, before the era's decorations. Synchronous, and apart from the method table (``_handlers``, whose
``initialize`` and ``discover`` return them): the stdio start-up answers a first request with
them before the engine and the method table are loaded (cold start).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

# not from _skills: that module loads with the first skill
from .._versions import CORE_TASKS_CAPABILITY, SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from .._versions import Rules
    from ._extensions import Extension
    from ._registry import Registry
    from ._server import Server


NO_CAPABILITIES: dict[str, Any] = {}  # what a session announced before initialize's answer (read only)


def capabilities(registry: Registry, rules: Rules, extensions: Callable[[], Iterable[Extension]]) -> dict[str, Any]:
    """What a server serving ``registry`` announces under ``rules`` (initialize, server/discover):
    derived from what is registered now (spec-notes §4), kept in ``registry.announced`` until it
    changes; a list kind announced once stays announced (``registry.promised``, with a proxy's
    upstream's: :meth:`Registry.promised_kinds`). ``completions`` (2025-03-26+) only when something
    can be completed: a prompt, a resource template or a registered completer (or promised: a
    gateway's upstreams may bring them). ``extensions()``:
    those declared now (2026-07-28)."""
    cached = registry.announced.get(rules.version)
    if cached is not None:
        return cached
    caps: dict[str, Any] = {"logging": {}}
    promised = registry.promised_kinds()
    if rules.completions_capability and (
        registry.prompts or registry.templates or registry.completer is not None or "completions" in promised
    ):
        caps["completions"] = {}
    if registry.prompts or "prompts" in promised:
        caps["prompts"] = {"listChanged": True}
    if registry.resources or registry.templates or "resources" in promised:
        caps["resources"] = {"subscribe": True, "listChanged": True}
    if registry.tools or "tools" in promised:
        caps["tools"] = {"listChanged": True}
    registry.promised.update(kind for kind in ("prompts", "resources", "tools") if kind in caps)
    if rules.core_tasks and registry.has_task_tools():
        caps["tasks"] = CORE_TASKS_CAPABILITY  # 2025-11-25; 2026-07-28 has the tasks extension instead
    if rules.stateless:  # extensions (Server.extension; skills, tasks): a member from 2026-07-28 (SEP-2133)
        for ext in extensions():
            caps.setdefault("extensions", {})[ext.id] = ext.settings
    registry.announced[rules.version] = caps
    return caps


# What a server's serverInfo is made of: Server.__setattr__ forgets the kept ones when one is set.
INFO_FIELDS = frozenset({"name", "version", "title", "description", "website_url", "icons"})


def server_info(server: Server, rules: Rules) -> dict[str, Any]:
    """The ``Implementation`` object (serverInfo) of ``server`` under ``rules``. ``Server.server_info``
    keeps it per version until one of :data:`INFO_FIELDS` is set again, since every modern result
    carries it (``Server.decorate``): shared by the results that carry it, never changed in place."""
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
