"""An upstream's catalog served as the proxy's own: listed when it connects (:meth:`Mirroring._mirror`)
and again on each ``list_changed`` it sends; its ``resources/updated`` told to the proxy's clients.

What an upstream tells may come in floods (a buggy or hostile server: thousands of
``list_changed`` a second). Each kind's listing, and each URI's update, runs one at a time
(:class:`OneAtATime`): told again while one runs, it runs once more after it, since what came
meanwhile may postdate what that run read; never a task, or a listing round trip, per
notification.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from .. import _log
from .._errors import METHOD_NOT_FOUND, MCPError
from .._server._extensions import is_custom
from ._forwarded import chosen_tools, forwarded_tool
from ._items import ForwardedPrompt, ForwardedResource

if TYPE_CHECKING:
    import asyncio

    from .._client._client import Client
    from .._server._server import Server
    from ._proxy import Upstream

log = _log.logger("mcpio.gateway", globals())

#: The notifications that say a list changed upstream, and the kind each lists again
LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class OneAtATime:
    """Work done one at a time per key, in a task ``spawn`` makes: asked again while it runs, it
    runs once more after that run, however often it was asked meanwhile."""

    def __init__(self, spawn: Callable[[Awaitable[None]], asyncio.Task[Any]]) -> None:
        self._spawn = spawn
        self._again: dict[Any, list[bool]] = {}  # key -> [asked again] while its run goes on

    def ask(self, key: Any, work: Callable[[], Awaitable[None]]) -> None:
        again = self._again.get(key)
        if again is not None:
            again[0] = True
            return
        again = self._again[key] = [False]
        task = self._spawn(self._run(key, again, work))
        # a task cancelled before it began never runs its finally: its key is dropped here
        task.add_done_callback(lambda _: self._again.pop(key, None) if self._again.get(key) is again else None)

    async def _run(self, key: Any, again: list[bool], work: Callable[[], Awaitable[None]]) -> None:
        try:
            while True:
                again[0] = False
                await work()
                if not again[0]:
                    return
        finally:
            if self._again.get(key) is again:
                del self._again[key]


class Mirroring:
    """The part of an ``Upstream`` that serves its catalog (module docstring)."""

    if TYPE_CHECKING:
        server: Server
        target: Any
        label: str
        client: Client | None
        _lock: asyncio.Lock | None
        _listed: dict[str, Any]
        _told: OneAtATime

        def live(self) -> Client | None: ...
        def spawn(self, coro: Any) -> asyncio.Task[Any]: ...
        def tell_clients(self, method: str, params: dict[str, Any] | None) -> None: ...
        def _turn(self, uri: str) -> str: ...

    async def _mirror(self, client: Client, kinds: tuple[str, ...] = ("tools", "prompts", "resources")) -> None:
        """Serve the upstream's current ``kinds`` as the proxy's own items, replacing the last
        mirror in ONE change (one rebuild of the served tables, one ``list_changed`` per list
        kind), and none at all for a kind whose listing is what it was."""
        import asyncio

        caps = client.server_capabilities
        # What the upstream announces, the proxy announces, listed or not yet (told by the change below)
        self.server.registry.promised.update(kind for kind in kinds if caps.get(kind) is not None)
        asked: dict[str, Any] = {}  # the lists asked at once: one round trip, not four
        if "tools" in kinds and caps.get("tools") is not None:
            asked["tools"] = client.list_tools()
        if "prompts" in kinds and caps.get("prompts") is not None:
            asked["prompts"] = client.list_prompts()
        if "resources" in kinds and caps.get("resources") is not None:
            asked["resources"] = client.list_resources()
            asked["templates"] = client.list_resource_templates()
        asked = {kind: self._listing(kind, aw) for kind, aw in asked.items()}
        got = dict(zip(asked, await asyncio.gather(*asked.values()), strict=True))
        listed: dict[str, Any] = {kind: got.get(kind, []) for kind in kinds}
        if "resources" in kinds:
            listed["resources"] = (got.get("resources", []), got.get("templates", []))
        listed = {kind: raw for kind, raw in listed.items() if self._listed.get(kind) != raw}
        if not listed:
            return
        items: dict[str, dict[str, Any]] = {}
        me = cast("Upstream", self)
        if "tools" in listed:
            tools = chosen_tools(self.target, listed["tools"])
            items["tools"] = self._made("tool", "name", tools, lambda t: forwarded_tool(me, t, client))
        if "prompts" in listed:
            items["prompts"] = self._made("prompt", "name", listed["prompts"], lambda p: ForwardedPrompt.of(me, p))
        if "resources" in listed:
            resources, templates = listed["resources"]
            items["resources"] = self._made(
                "resource", "uri", resources, lambda r: ForwardedResource.of(me, r, r["uri"])
            )
            items["templates"] = self._made(
                "resource template", "uriTemplate", templates, lambda t: ForwardedResource.of(me, t, t["uriTemplate"])
            )
        self.server.replace_own(items, lambda item: getattr(item, "upstream", None) is self)
        self._listed.update(listed)

    def _made(self, what: str, key: str, listed: list[Any], make: Callable[[Any], Any]) -> dict[str, Any]:
        """The proxy's items for the upstream's ``listed`` ones, by their ``key``: one mcpio cannot
        serve (no ``key``, a tool name outside the 2025-11-25 rules, a template RFC 6570 refuses, a
        schema that is no object) is left out with one line in the log, and the rest are served."""
        made: dict[str, Any] = {}
        for raw in listed:
            name = raw.get(key) if isinstance(raw, dict) else None
            try:
                if not isinstance(name, str):
                    raise ValueError(f"its {key!r} is {name!r}, not a string")
                made[name] = make(raw)
            except Exception as exc:  # the upstream's data, whatever is wrong with it: this item only
                log.warning("upstream %r: %s %.80r left out: %s", self.label, what, name, reason(exc))
        return made

    async def _listing(self, kind: str, listing: Awaitable[list[Any]]) -> list[Any]:
        """What ``listing`` lists; none when the upstream announced the capability but does not
        implement the method (-32601: an SDK server with resources and no templates), with a
        warning: the rest of what it serves is served all the same."""
        try:
            return await listing
        except MCPError as exc:
            if exc.code != METHOD_NOT_FOUND:
                raise
            log.warning("upstream %r: its %s are not served: it does not list them (%s)", self.label, kind, exc)
            return []

    def _on_notification(self, method: str, params: dict[str, Any] | None) -> None:
        kind = LIST_CHANGED.get(method)
        if kind is not None:
            self._told.ask(kind, lambda: self._remirror(kind))
        elif method == "notifications/resources/updated" and params and isinstance(params.get("uri"), str):
            uri = params["uri"]
            self._told.ask(uri, lambda: self.server.changes.resource_updated(uri, self._turn(uri)))
        elif is_custom(method):  # an extension's: to the proxy's clients of it (_custom)
            self.tell_clients(method, params)

    async def _remirror(self, kind: str) -> None:
        if self.client is None and (lock := self._lock) is not None and lock.locked():  # told during the
            await lock.acquire()  # first connect, whose listing may predate it: listed again after it
            lock.release()
        client = self.live()
        if client is None:
            return
        try:
            await self._mirror(client, (kind,))
        except Exception as exc:
            log.warning("upstream %r: listing %s after list_changed failed: %s", self.label, kind, reason(exc))


def reason(exc: BaseException) -> str:
    """``exc`` in one line: its type, and its message when it has one."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
