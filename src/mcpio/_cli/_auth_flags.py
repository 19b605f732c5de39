"""``mcpio run -t http … --auth-issuer ISSUER``: protect a served file without code.

``add_auth_flags`` adds the ``--auth-*`` options to a parser; ``resource_server_from`` turns
them into a :class:`mcpio.auth.ResourceServer` (None when no ``--auth-*`` option is given):

* ``--auth-issuer URL`` — the authorization server (advertised in the protected resource
  metadata; JWT access tokens are checked against the JWKS its metadata names);
* ``--auth-audience URL`` — this server's canonical URI, the audience tokens must carry
  (default on loopback: ``http://HOST:PORT/PATH``; required otherwise);
* ``--auth-scopes a,b`` — scopes every request needs;
* ``--auth-jwks URL`` — take the keys from this JWKS instead of discovering it;
* ``--auth-introspect URL`` — opaque tokens: RFC 7662 introspection, authenticating with
  ``--auth-client-id`` and the secret in ``$MCPIO_AUTH_CLIENT_SECRET`` (never on the command line).

Or, with no authorization server at all, ``--auth-token-env VAR``: the environment variable
``VAR`` holds one or more shared-secret bearer tokens (separated by commas, newlines or spaces)
— a :class:`mcpio.auth.StaticTokens`. The variable's name goes on the command line, never a
token (argv is readable by every local user in ``/proc``).
"""

from __future__ import annotations

import os
from typing import Any


def add_auth_flags(p: Any) -> None:
    g = p.add_argument_group("authorization (http)", "protect the server with OAuth 2.1 bearer tokens")
    g.add_argument("--auth-issuer", metavar="URL", help="the authorization server issuing the tokens")
    g.add_argument(
        "--auth-audience",
        metavar="URL",
        help="this server's canonical URI, the tokens' audience (default: http://HOST:PORT/PATH on loopback)",
    )
    g.add_argument("--auth-scopes", metavar="A,B", help="scopes every request needs (comma-separated)")
    g.add_argument(
        "--auth-jwks", metavar="URL", help="the JWKS to check JWTs with (default: from the issuer's metadata)"
    )
    g.add_argument(
        "--auth-introspect",
        metavar="URL",
        help="verify opaque tokens with this RFC 7662 endpoint (secret in $MCPIO_AUTH_CLIENT_SECRET)",
    )
    g.add_argument("--auth-client-id", metavar="ID", help="--auth-introspect: this server's client id at the issuer")
    g.add_argument(
        "--auth-token-env",
        metavar="VAR",
        help="no authorization server: accept the shared-secret bearer tokens in $VAR (comma- or newline-separated)",
    )


def resource_server_from(args: Any) -> Any:
    """The ResourceServer the flags describe, or None; UsageError when they do not add up."""
    from ._exit import UsageError  # not at import: ``mcpio --help`` builds the parser and must stay fast

    issuer = getattr(args, "auth_issuer", None)
    if getattr(args, "auth_token_env", None):
        return _static_tokens(args, issuer)
    others = [
        f
        for f in ("auth_audience", "auth_scopes", "auth_jwks", "auth_introspect", "auth_client_id")
        if getattr(args, f, None)
    ]
    if issuer is None:
        if others:
            raise UsageError(f"--{others[0].replace('_', '-')} needs --auth-issuer (the authorization server)")
        return None
    if getattr(args, "transport", "http") != "http":
        raise UsageError(
            "--auth-issuer protects Streamable HTTP: add -t http (stdio takes credentials from the environment)"
        )
    try:
        from .._protocol._http import is_loopback
        from ..auth import IntrospectionVerifier, JWTVerifier, ResourceServer
    except ImportError as exc:  # pragma: no cover - the auth extra is missing
        raise UsageError(f"--auth-issuer needs the auth extra: pip install 'mcpio[auth]' ({exc})") from None
    audience = args.auth_audience
    if audience is None:
        if not is_loopback(args.host):
            raise UsageError(
                "--auth-audience URL is required when binding a non-loopback address: give the URI "
                "clients use to reach this server (e.g. https://mcp.example.com/mcp)"
            )
        host = f"[{args.host}]" if ":" in args.host else args.host
        scheme = "https" if getattr(args, "certfile", None) else "http"  # --certfile: served over TLS
        audience = f"{scheme}://{host}:{args.port}{args.path}"
    scopes = [s.strip() for s in (args.auth_scopes or "").split(",") if s.strip()]
    try:
        if args.auth_introspect:
            secret = os.environ.get("MCPIO_AUTH_CLIENT_SECRET")
            verifier: Any = IntrospectionVerifier(
                args.auth_introspect,
                client_id=args.auth_client_id,
                client_secret=secret,
                audience=audience,
                issuer=issuer,
            )
        else:
            if args.auth_client_id:
                raise UsageError("--auth-client-id goes with --auth-introspect")
            verifier = JWTVerifier(issuer, audience, jwks_url=args.auth_jwks)
        return ResourceServer(resource=audience, issuer=issuer, verifier=verifier, required_scopes=scopes)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _static_tokens(args: Any, issuer: str | None) -> Any:
    """``--auth-token-env VAR``: the StaticTokens in ``$VAR`` (UsageError naming the variable, never a token)."""
    from ._exit import UsageError

    var = args.auth_token_env
    others = [
        f
        for f in ("auth_audience", "auth_scopes", "auth_jwks", "auth_introspect", "auth_client_id")
        if getattr(args, f, None)
    ]
    if issuer is not None or others:
        flag = "--auth-issuer" if issuer is not None else "--" + others[0].replace("_", "-")
        raise UsageError(f"--auth-token-env and {flag} do not go together: shared tokens need no authorization server")
    if getattr(args, "transport", "http") != "http":
        raise UsageError(
            "--auth-token-env protects Streamable HTTP: add -t http (a stdio server has one client, its host)"
        )
    if var.startswith("$") or not var.replace("_", "").isalnum():
        raise UsageError(
            "--auth-token-env takes the NAME of an environment variable (e.g. --auth-token-env TEAM_TOKEN), "
            "not a token: a command line is readable by every local user"
        )
    text = os.environ.get(var)
    from .._auth._static import StaticTokens, split_tokens

    if not text or not split_tokens(text):
        raise UsageError(
            f"--auth-token-env {var}: ${var} is {'empty' if text is not None else 'not set'}; put the tokens "
            "in it (comma-separated), e.g. export "
            f'{var}=$(python -c "import secrets; print(secrets.token_urlsafe(32))")'
        )
    try:
        return StaticTokens(split_tokens(text))
    except ValueError as exc:
        raise UsageError(f"--auth-token-env {var}: {exc}") from None


def serve_options(auth: Any) -> dict[str, Any]:
    """``Server.run("http", …)`` options for a server protected by ``auth`` (a ResourceServer):
    the auth itself, and the audience's host among the allowed ``Host`` names (DNS-rebinding
    protection otherwise admits loopback names only, and clients reach the server by that name)."""
    if auth is None:
        return {}
    from urllib.parse import urlsplit

    from .._protocol._http import LOOPBACK_HOSTS, is_loopback

    options: dict[str, Any] = {"auth": auth}
    if auth.resource is None:  # StaticTokens: every request needs the token, so any Host name may reach it
        options["allowed_hosts"] = ["*"]
        return options
    name = urlsplit(auth.resource).hostname
    if name and not is_loopback(name):
        options["allowed_hosts"] = [*LOOPBACK_HOSTS, f"[{name}]" if ":" in name else name]
    return options
