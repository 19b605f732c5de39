"""Ready-made dependency providers: ``Depends(mcpio.deps.lifespan)`` and the like.

Each is a plain function of the call's :class:`~mcpio.Context`, so a parameter
``value: T = Depends(provider)`` gets what the Context already knows, and a test can replace it
with ``server.override(mcpio.deps.access_token, fake)``::

    from mcpio import Depends, deps

    @server.tool
    def whoami(token=Depends(deps.access_token)) -> str:
        return token.subject if token is not None else "anonymous"
"""

from __future__ import annotations

from typing import Any

from ._server._context import Context
from ._server._deps import Depends

__all__ = ["Depends", "access_token", "http_request", "lifespan", "token_claims"]


def lifespan(ctx: Context) -> Any:
    """The value the server's ``lifespan`` context manager yielded (None without one)."""
    return ctx.lifespan


def access_token(ctx: Context) -> Any:
    """The verified :class:`mcpio.auth.AuthInfo` of the caller over HTTP with ``auth=``, else None."""
    return ctx.auth


def token_claims(ctx: Context) -> dict[str, Any]:
    """The verified access token's claims (a copy), ``{}`` without auth."""
    info = ctx.auth
    claims = getattr(info, "claims", None) if info is not None else None
    return dict(claims) if claims else {}


def http_request(ctx: Context) -> Any:
    """The HTTP request that carried the call (``ctx.http``: method, path, query, headers with
    credentials redacted, client address), None over stdio."""
    return ctx.http
