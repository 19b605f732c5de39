"""Who hears about changes: legacy resource subscriptions, modern ``subscriptions/listen``
streams, and the fan-out of ``list_changed`` / ``resources/updated`` notifications.

Legacy era (≤ 2025-11-25): a connection that initialized with ``listChanged`` capabilities gets
every ``notifications/<kind>/list_changed``; ``resources/subscribe`` adds a URI to the
connection's set for ``notifications/resources/updated``.

Modern era (2026-07-28, spec-notes §9b): ``subscriptions/listen`` opens a long-lived request.
The server first sends ``notifications/subscriptions/acknowledged`` with the honoured subset of
the client's filter, then only the notifications the client opted into, each tagged with
``_meta["io.modelcontextprotocol/subscriptionId"]`` = the listen request's id. It ends with
``notifications/cancelled`` from the client (then nothing more is sent for it), or gracefully
with a ``SubscriptionsListenResult`` when the connection closes. With the tasks extension a
filter may name ``taskIds``: each state change of those tasks is sent as ``notifications/tasks``
carrying the DetailedTask (``_tasks``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .._errors import InvalidParams
from .._versions import META_SUBSCRIPTION_ID, TASKS_EXTENSION
from ._tasks import declares_tasks, missing_extension

log = logging.getLogger("mcpio.server")

if TYPE_CHECKING:
    from .._session import Session
    from ._context import Context
    from ._server import Server

# SubscriptionFilter flag -> the capability (and notification kind) it needs
_LIST_FLAGS = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}


def uri_param(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams('Invalid params: "uri" must be a string')
    return uri


async def subscribe(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    server.announced(ctx.rules, ctx.session, "resources", "resources/subscribe")
    uri = uri_param(params)
    subscriptions = ctx.session.state.setdefault("subscriptions", set())
    if uri not in subscriptions:
        await watch(server, uri, True)
        subscriptions.add(uri)
    return {}


async def unsubscribe(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    server.announced(ctx.rules, ctx.session, "resources", "resources/unsubscribe")
    uri = uri_param(params)
    subscriptions = ctx.session.state.setdefault("subscriptions", set())
    if uri in subscriptions:
        subscriptions.discard(uri)
        await watch(server, uri, False)
    return {}


async def watch(server: Server, uri: str, on: bool) -> None:
    """Tell the resource serving ``uri`` that a client subscribed (``on``) or left: a forwarded
    resource holds its upstream subscription while it has subscribers."""
    found = server.find_resource(uri)
    if found is not None:
        await found[0].subscribed(uri, on)


def honoured(filt: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    """The part of a SubscriptionFilter this server can keep: list flags for the features it
    has, resource URIs when it serves resources."""
    out: dict[str, Any] = {}
    for flag, capability in _LIST_FLAGS.items():
        if filt.get(flag) is True and capability in capabilities:
            out[flag] = True
    uris = filt.get("resourceSubscriptions")
    if isinstance(uris, list) and "resources" in capabilities:
        out["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
    return out


async def listen(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """``subscriptions/listen``: acknowledge, then stay open until cancelled or closed."""
    filt = params.get("notifications")
    if not isinstance(filt, dict):
        raise InvalidParams('Invalid params: subscriptions/listen needs "notifications" (a SubscriptionFilter object)')
    assert ctx.rules is not None
    caps = server.capabilities(ctx.rules)
    kept = honoured(filt, caps)
    task_ids = filt.get("taskIds")
    if isinstance(task_ids, list) and TASKS_EXTENSION in caps.get("extensions", {}):
        # tasks extension §Task Status Notifications: MUST be -32021 for a non-declaring client
        if not declares_tasks(ctx.client_capabilities):
            raise missing_extension("task status notifications (taskIds)")
        kept["taskIds"] = await server.tasks.known_anywhere(task_ids, ctx.principal)  # the caller's only
    session, sub_id = ctx.session, ctx.request_id
    watched = list(kept.get("resourceSubscriptions", ()))
    for i, uri in enumerate(watched):
        try:
            await watch(server, uri, True)
        except BaseException:
            await unwatch(server, watched[:i])
            raise
    listeners: dict[Any, dict[str, Any]] = session.state.setdefault("listeners", {})
    try:
        await session.notify(
            "notifications/subscriptions/acknowledged", {"notifications": kept, "_meta": {META_SUBSCRIPTION_ID: sub_id}}
        )
        listeners[sub_id] = kept  # registered after the acknowledgement: it is the first message of the stream
        await session.closing.wait()
    finally:
        listeners.pop(sub_id, None)
        await unwatch(server, watched)
    return {"_meta": {META_SUBSCRIPTION_ID: sub_id}}


async def unwatch(server: Server, uris: list[str]) -> None:
    """The subscribers of ``uris`` left (each once): :func:`watch` off; a failure is logged."""
    await follow(server, (), uris)


async def follow(server: Server, added: Iterable[str], removed: Iterable[str]) -> None:
    """A session's subscriptions changed without its requests here (a copy of a shared session,
    ``_replicas``; a session that ended): :func:`watch` on for ``added``, off for ``removed``.
    Each process watches what its own copies are subscribed to, so each count it keeps is its
    own. A failure is logged (no request of the client's is there to fail)."""
    for on, uris in ((True, added), (False, removed)):
        for uri in uris:
            try:
                await watch(server, uri, on)
            except Exception as exc:
                log.warning("%s the subscription to %r failed: %s", "holding" if on else "ending", uri, exc)


def list_changed_targets(sessions: Iterator[Session], kind: str) -> Iterator[tuple[Session, dict[str, Any] | None]]:
    """(session, params) for each ``notifications/<kind>/list_changed`` to send."""
    flag = next(f for f, k in _LIST_FLAGS.items() if k == kind)
    for s in sessions:
        if s.closed:
            continue
        # Legacy: connections whose initialize result is out and announced listChanged for kind
        # (spec: server/tools §List Changed Notification).
        if s.connection.lifecycle.initialized and s.state.get("capabilities", {}).get(kind, {}).get("listChanged"):
            yield s, None
        for sub_id, kept in list(s.state.get("listeners", {}).items()):
            if kept.get(flag):
                yield s, {"_meta": {META_SUBSCRIPTION_ID: sub_id}}


def task_targets(sessions: Iterator[Session], task_id: str) -> Iterator[tuple[Session, dict[str, Any]]]:
    """(session, _meta) for each ``notifications/tasks`` about ``task_id`` (listen streams only)."""
    for s in sessions:
        if s.closed:
            continue
        for sub_id, kept in list(s.state.get("listeners", {}).items()):
            if task_id in kept.get("taskIds", ()):
                yield s, {META_SUBSCRIPTION_ID: sub_id}


def updated_targets(sessions: Iterator[Session], uri: str) -> Iterator[tuple[Session, dict[str, Any]]]:
    """(session, params) for each ``notifications/resources/updated`` about ``uri``."""
    for s in sessions:
        if s.closed:
            continue
        if uri in s.state.get("subscriptions", ()):
            yield s, {"uri": uri}
        for sub_id, kept in list(s.state.get("listeners", {}).items()):
            if uri in kept.get("resourceSubscriptions", ()):
                yield s, {"uri": uri, "_meta": {META_SUBSCRIPTION_ID: sub_id}}
