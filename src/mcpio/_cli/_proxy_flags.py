"""``mcpio run -t http … --auth-proxy-upstream URL``: the OAuth proxy (:class:`mcpio.auth.OAuthProxy`)
without code, for IdPs MCP clients cannot register with (GitHub, Google, Entra).

* ``--auth-proxy-upstream URL`` — the IdP's issuer (its RFC 8414 / OIDC metadata is read at
  start) or the URL of its metadata document; or, for an IdP without metadata (GitHub),
  ``--auth-proxy-authorize-url`` and ``--auth-proxy-token-url``;
* ``--auth-proxy-client-id ID`` — this proxy's client at the IdP; its secret is read from the
  environment variable ``--auth-proxy-client-secret-env`` names (default
  ``MCPIO_AUTH_PROXY_CLIENT_SECRET``), never from the command line (it would show in ``ps``);
* ``--auth-proxy-issuer URL`` — the proxy's public URL (default on loopback:
  ``http://HOST:PORT``); register ``ISSUER/callback`` as the redirect URI at the IdP;
* ``$MCPIO_AUTH_PROXY_SECRET`` — at least 32 random characters from which the proxy's signing
  key and the key encrypting the IdP's tokens at rest are derived: tokens survive a restart and
  every process given it (``--workers``, replicas on one ``--redis``) agrees. Required with
  ``--redis`` (the proxy's state outlives the process there); without it, random per run;
* ``--auth-proxy-scopes a,b`` (offered to MCP clients, default ``mcp``),
  ``--auth-proxy-upstream-scopes a,b`` (asked of the IdP, default ``openid`` for an OIDC
  provider), ``--auth-proxy-userinfo URL`` + ``--auth-proxy-subject-claim`` (who logged in).
"""

from __future__ import annotations

import os
from typing import Any

KEYS_ENV = "MCPIO_AUTH_PROXY_SECRET"


def add_proxy_flags(p: Any) -> None:
    g = p.add_argument_group(
        "OAuth proxy (http)", "be the authorization server MCP clients see, delegating the login to an upstream IdP"
    )
    g.add_argument("--auth-proxy-upstream", metavar="URL", help="the upstream IdP's issuer or metadata URL")
    g.add_argument(
        "--auth-proxy-authorize-url", metavar="URL", help="the upstream authorization endpoint (no metadata)"
    )
    g.add_argument("--auth-proxy-token-url", metavar="URL", help="the upstream token endpoint (no metadata)")
    g.add_argument("--auth-proxy-client-id", metavar="ID", help="this proxy's client id at the upstream IdP")
    g.add_argument(
        "--auth-proxy-client-secret-env",
        metavar="VAR",
        help="the environment variable holding the client secret (default %(default)s)",
    )
    g.add_argument("--auth-proxy-issuer", metavar="URL", help="this proxy's public URL (default http://HOST:PORT)")
    g.add_argument("--auth-proxy-scopes", metavar="A,B", help="scopes offered to MCP clients (default mcp)")
    g.add_argument(
        "--auth-proxy-upstream-scopes",
        metavar="A,B",
        help="scopes asked of the IdP (default openid for an OIDC provider)",
    )
    g.add_argument(
        "--auth-proxy-userinfo",
        metavar="URL",
        help="the upstream endpoint naming the user "
        "(default: the OIDC userinfo endpoint is not used; the ID token's sub is)",
    )
    g.add_argument(
        "--auth-proxy-subject-claim",
        metavar="NAME",
        help="the userinfo field naming the user (default %(default)s; GitHub: id)",
    )


def _split(value: str | None) -> list[str] | None:
    return [s.strip() for s in value.split(",") if s.strip()] if value is not None else None


def proxy_from(args: Any) -> Any:
    """The OAuthProxy the flags describe, or None; UsageError when they do not add up."""
    from ._exit import UsageError

    upstream = getattr(args, "auth_proxy_upstream", None)
    endpoints = (getattr(args, "auth_proxy_authorize_url", None), getattr(args, "auth_proxy_token_url", None))
    given = [
        f
        for f in (
            "auth_proxy_client_id",
            "auth_proxy_issuer",
            "auth_proxy_scopes",
            "auth_proxy_upstream_scopes",
            "auth_proxy_userinfo",
            "auth_proxy_authorize_url",
            "auth_proxy_token_url",
        )
        if getattr(args, f, None)
    ]
    if upstream is None and not any(endpoints):
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} needs --auth-proxy-upstream (the IdP's issuer)")
        return None
    if getattr(args, "auth_issuer", None):
        raise UsageError("--auth-proxy-upstream and --auth-issuer exclude each other: the proxy is the issuer")
    if getattr(args, "transport", "http") != "http":
        raise UsageError("the OAuth proxy serves Streamable HTTP: add -t http")
    if upstream is not None and any(endpoints):
        raise UsageError("give --auth-proxy-upstream or --auth-proxy-authorize-url/--auth-proxy-token-url, not both")
    if upstream is None and not all(endpoints):
        raise UsageError("--auth-proxy-authorize-url and --auth-proxy-token-url go together")
    if not args.auth_proxy_client_id:
        raise UsageError("--auth-proxy-client-id is required: register this proxy at the IdP first")
    from ..cli import RUN_DEFAULTS  # the flags' defaults (the run parser's)

    var = args.auth_proxy_client_secret_env
    secret = os.environ.get(var)
    if not secret:
        # never echo a custom name: argparse takes --auth-proxy-client-secret as an abbreviation of
        # --auth-proxy-client-secret-env, so the "name" may be a secret typed on the command line
        where = (
            f"${var}"
            if var == RUN_DEFAULTS["auth_proxy_client_secret_env"]
            else "the variable named by --auth-proxy-client-secret-env"
        )
        raise UsageError(
            f"the upstream client secret is read from the environment ({where}), which is empty; "
            "export it (never put a secret on the command line)"
        )
    try:
        from .._auth._jwks import AuthUnavailable
        from .._auth._proxy_upstream import discover
        from .._protocol._http import is_loopback
        from ..auth import OAuthProxy
    except ImportError as exc:  # pragma: no cover - the auth extra is missing
        raise UsageError(f"the OAuth proxy needs the auth extra: pip install 'mcpio[auth]' ({exc})") from None
    issuer = args.auth_proxy_issuer
    if issuer is None:
        if not is_loopback(args.host):
            raise UsageError(
                "--auth-proxy-issuer URL is required when binding a non-loopback address: give the "
                "URL clients reach this server at (e.g. https://mcp.example.com)"
            )
        host = f"[{args.host}]" if ":" in args.host else args.host
        scheme = "https" if getattr(args, "certfile", None) else "http"  # --certfile: served over TLS
        issuer = f"{scheme}://{host}:{args.port}"
    upstream_scopes = _split(args.auth_proxy_upstream_scopes)
    userinfo = args.auth_proxy_userinfo
    authorize_url, token_url = endpoints
    upstream_issuer = None
    if upstream is not None:
        import asyncio

        try:
            meta = asyncio.run(discover(upstream))
        except AuthUnavailable as exc:  # the IdP is down or slow: not a usage error (exit 3)
            from ._exit import UNAVAILABLE, CLIFailure

            raise CLIFailure(
                f"cannot read the upstream IdP's metadata: {exc}",
                UNAVAILABLE,
                "check that --auth-proxy-upstream is reachable from here, then start again",
            ) from None
        except ValueError as exc:
            raise UsageError(f"--auth-proxy-upstream: {exc}") from None
        authorize_url, token_url = meta.get("authorization_endpoint"), meta.get("token_endpoint")
        if not isinstance(authorize_url, str) or not isinstance(token_url, str):
            raise UsageError(
                f"--auth-proxy-upstream: the metadata of {upstream} lacks authorization_endpoint or token_endpoint"
            )
        upstream_issuer = meta.get("issuer") if isinstance(meta.get("issuer"), str) else None
        if upstream_scopes is None and "openid" in (meta.get("scopes_supported") or ["openid"]):
            upstream_scopes = ["openid"]
    path = args.path.rstrip("/") or "/"
    assert isinstance(authorize_url, str) and isinstance(token_url, str)  # both checked above
    keys = os.environ.get(KEYS_ENV) or None
    if keys is None and getattr(args, "redis", None):
        raise UsageError(
            f"the OAuth proxy with --redis needs ${KEYS_ENV} (32+ random characters, the same for every "
            "process): its clients and grants outlive this process on Redis, so its signing and "
            "encryption keys must too (python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    try:
        return OAuthProxy(
            issuer=issuer,
            resource=issuer.rstrip("/") + path,
            upstream_authorize_url=authorize_url,
            upstream_token_url=token_url,
            client_id=args.auth_proxy_client_id,
            client_secret=secret,
            scopes=_split(args.auth_proxy_scopes) or ["mcp"],
            upstream_scopes=upstream_scopes or [],
            upstream_userinfo_url=userinfo,
            subject_claim=args.auth_proxy_subject_claim,
            upstream_issuer=upstream_issuer,
            secret=keys,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
