"""``ctx.session_state``: state that outlives a request, and ``mcpio.StateHandle`` parameters.

The API and whose state it is (its *scope*: a ``StateHandle`` parameter, else the legacy
session, else the authenticated principal, else :class:`SessionStateError`) are
docs/guides/session-state.md's. Scopes are namespaced by kind (``h:``, ``s:``, ``p:``) and
named by a digest of their id: the store's keys reveal no session id, principal or handle.
A handle is recorded with its *owner*: the principal it was minted for, or without auth
:data:`ANONYMOUS` and the client's network (``_http_view.client_network``: an IPv4 address, an
IPv6 /64). One the store does not know or that another principal presents is refused with one
message (nobody learns that another's handle exists); without auth any caller may present any
anonymous handle (a bearer value, as before). An owner holds at most ``Server(max_state_handles=)``
live handles, so one anonymous network filling its share locks out no other. Values are JSON, at
most ``max_value_bytes`` each; the store bounds each scope (:mod:`mcpio._state._kv`), and each
caller's scopes together (``Server(max_state_bytes_per_caller=)``, :func:`_kv.owner_share`): a
call's *owner* is the same as a handle's (its principal, else its network), and a handle's scope
counts against the owner it was minted for. This module loads at first use.
"""

from __future__ import annotations

import copy
import hashlib
import secrets
from typing import TYPE_CHECKING, Any

import msgspec

from .._errors import INTERNAL_ERROR, MCPError
from .._handle import HANDLE_PREFIX, HANDLE_TYPE, StateHandle
from .._state._base import StateUnavailable
from .._state._kv import DEFAULT_MAX_VALUE_BYTES, DEFAULT_TTL, MAX_TTL, KVStore, StateLimitError, owner_share
from .._transports._base import abilities
from ._tools import ToolError, invoke

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._schema import FunctionSignature
    from ._context import Context

CONTEXT_PARAM = "__mcpio_context__"
# The owner of a handle minted without auth starts so (no principal does: an issuer is a URL),
# then the client's network; "" (a handle minted before owners were told apart) is one too.
ANONYMOUS = "\x00anonymous "
MAX_KEY_LENGTH = 256


class SessionStateError(ToolError):
    """``ctx.session_state`` cannot serve this call (no scope, a value over a bound, a handle the
    server does not know): an ``isError`` result carrying this message."""


def _scope(kind: str, ident: str) -> str:
    return kind + ":" + hashlib.sha256(ident.encode()).hexdigest()[:40]


def for_context(ctx: Context) -> SessionState:
    """The SessionState of ``ctx`` by session or principal (module docstring), else the error."""
    store = ctx.server.session_store
    if not ctx.stateless:  # the legacy session's id (one made for a connection that has none)
        state = ctx.session.state
        sid = abilities(ctx.session.transport).session_id or state.get("session_state_id")
        if sid is None:
            sid = state["session_state_id"] = secrets.token_urlsafe(24)
        return SessionState(store, _scope("s", sid), "session", _owner(ctx), _share(ctx, store))
    if ctx.principal is not None:
        return SessionState(store, _scope("p", ctx.principal), "principal", ctx.principal, _share(ctx, store))
    raise SessionStateError(
        f"ctx.session_state: this call has nothing to keep state for (protocol {ctx.protocol_version}, "
        "no session and no authenticated caller); declare a parameter annotated mcpio.StateHandle so the "
        "client passes back a handle the server minted, or serve with auth= so state is kept per caller"
    )


class SessionState:
    """State that outlives a request, in one scope (docs/guides/session-state.md, "The API")."""

    __slots__ = ("_owner", "_share", "_store", "handle", "kind", "max_value_bytes", "scope")

    def __init__(
        self, store: KVStore, scope: str, kind: str, owner: str, share: int, handle: StateHandle | None = None
    ) -> None:
        """``owner``: whose share of the store its bytes count against, at most ``share`` bytes
        (the module docstring; the store keeps a scope's first owner while it holds anything)."""
        self._store, self.scope, self.kind, self.handle = store, scope, kind, handle
        self._owner, self._share = owner, share
        self.max_value_bytes = DEFAULT_MAX_VALUE_BYTES

    async def get(self, key: str, default: Any = None) -> Any:
        raw = await _reachable(self._store.get(self.scope, _key(key)))
        return default if raw is None else msgspec.json.decode(raw)

    async def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        key = _key(key)
        if ttl is None:
            ttl = DEFAULT_TTL
        elif isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl <= MAX_TTL:
            raise ValueError(f"session_state.set({key!r}): ttl must be seconds > 0 and <= {MAX_TTL:g}, not {ttl!r}")
        try:
            raw = msgspec.json.encode(value)
        except (TypeError, msgspec.EncodeError) as exc:
            raise TypeError(f"session_state.set({key!r}): the value must be JSON-serialisable ({exc})") from None
        if len(raw) > self.max_value_bytes:
            raise SessionStateError(
                f"session_state.set({key!r}): the value is {len(raw)} bytes as JSON, over the limit of "
                f"{self.max_value_bytes} bytes per value (max_value_bytes)"
            )
        try:
            await _reachable(self._store.set(self.scope, key, raw, float(ttl), self._owner, self._share))
        except StateLimitError as exc:
            raise SessionStateError(f"session_state.set({key!r}): {exc}") from None

    async def delete(self, key: str) -> bool:
        return bool(await _reachable(self._store.delete(self.scope, _key(key))))

    def __repr__(self) -> str:
        return f"SessionState(kind={self.kind!r})"


def _key(key: Any) -> str:
    if not isinstance(key, str) or not 0 < len(key) <= MAX_KEY_LENGTH:
        raise TypeError(f"session_state: a key is a string of 1 to {MAX_KEY_LENGTH} characters, not {key!r}")
    return key


async def _reachable(call: Any) -> Any:
    """``await call``, the backend being down (Redis) an internal error that says so."""
    try:
        return await call
    except StateUnavailable as exc:
        raise MCPError(
            f"Internal error: the session-state store is unreachable ({exc}); the request was fine, "
            f"retry it in {exc.retry_after} s",
            INTERNAL_ERROR,
        ) from None


async def open_handle(ctx: Context, value: Any) -> SessionState:
    """The SessionState of the handle the client passed (verified), or of a new one when absent."""
    store = ctx.server.session_store
    owner, share = _owner(ctx), _share(ctx, store)
    if value is None:
        while True:  # a collision of 192 random bits does not happen; the loop states the contract
            handle = StateHandle(HANDLE_PREFIX + secrets.token_urlsafe(24))
            scope = _scope("h", handle)
            try:
                recorded = await _reachable(store.bind(scope, owner, DEFAULT_TTL, ctx.server.max_state_handles, share))
            except StateLimitError as exc:
                raise SessionStateError(str(exc)) from None
            if recorded:
                return SessionState(store, scope, "handle", owner, share, handle)
    scope = _scope("h", value)
    recorded = await _reachable(store.owner(scope, DEFAULT_TTL))
    anonymous = ctx.principal is None and recorded is not None and (recorded == "" or recorded.startswith(ANONYMOUS))
    if recorded != owner and not anonymous:
        raise SessionStateError(
            "unknown or expired state handle: pass a handle this server returned to you (it expires "
            f"{DEFAULT_TTL:g} s after its last use), or leave the parameter out to start new state"
        )
    return SessionState(store, scope, "handle", recorded, share, StateHandle(value))


def _share(ctx: Context, store: KVStore) -> int:
    return owner_share(ctx.server.max_state_bytes_per_caller, store.max_total_bytes)


def _owner(ctx: Context) -> str:
    """Whose the call's state is (a handle's owner, the owner of a scope it writes first): its
    principal, else :func:`_anonymous`."""
    return ctx.principal or _anonymous(ctx)


def _anonymous(ctx: Context) -> str:
    """The owner of a handle minted without auth: the caller's network (over HTTP), else the
    one connection's (stdio: one client)."""
    http = ctx.http
    if http is not None and http.client is not None:
        from ._http_view import client_network

        return ANONYMOUS + client_network(http.client[0])
    return ANONYMOUS


def wrap(fn: Callable[..., Any], sig: FunctionSignature, name: str, inline: bool) -> tuple[Callable[..., Any], Any]:
    """``fn`` as an async function that opens (or mints) its handle, scopes ``ctx.session_state``
    to it and passes it in; and the signature to call it by (its one injected parameter: the Context)."""
    params = [f[0] for f in sig._fields if f[1] is HANDLE_TYPE]  # annotated StateHandle (_schema)
    if len(params) > 1:
        raise TypeError(f"tool {name}: one StateHandle parameter at most ({', '.join(params)})")
    (pname,) = params
    inner = sig

    async def call(**kwargs: Any) -> Any:
        ctx: Context = kwargs.pop(CONTEXT_PARAM)
        state = ctx._session_state = await open_handle(ctx, kwargs.get(pname))
        kwargs[pname] = state.handle
        return await invoke(inner, fn, kwargs, ctx, inline)

    outer = copy.copy(sig)
    outer.injected = [CONTEXT_PARAM]
    outer.is_async = True
    return call, outer
