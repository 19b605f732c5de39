"""``mcpio login URL``, ``mcpio logout URL`` and ``mcpio auth URL``: OAuth from the command line.

* ``login`` connects to the server with mcpio's OAuth client (system browser plus a loopback
  redirect listener; the URL is printed when no browser opens) and keeps the token in the token
  store, so later commands against the URL use it (and refresh it).
* ``logout`` forgets the stored tokens of that server.
* ``auth`` explains, without logging in: what the server answers without a token, each
  discovery step (what was fetched, and why each document was accepted or refused), what the
  authorization server supports, and what the store holds for the server (never the token).

The command table in ``mcpio.cli`` declares the three commands; :func:`run` runs one. httpx and the OAuth
client are imported only when a command runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from .._shown import shown

if TYPE_CHECKING:
    from .._auth._tokens import FileTokenStore, TokenStore


def _store(args: argparse.Namespace) -> FileTokenStore:
    from .._auth._tokens import FileTokenStore

    return FileTokenStore(args.store) if args.store else FileTokenStore()


def _entries(store: TokenStore, url: str) -> list[tuple[str, dict[str, Any]]]:
    from .._auth._discovery import server_identity  # the key the OAuth client stores a token under

    out = []
    for key in store.keys():  # noqa: SIM118 (a TokenStore is not iterable: keys() is its listing)
        if key.startswith("token "):
            entry = store.load(key)
            if entry and entry.get("server_url") == server_identity(url):
                out.append((key, entry))
    return out


def _describe(entry: dict[str, Any]) -> str:
    expires = entry.get("expires_at")
    left = f"expires in {int(expires - time.time())} s" if isinstance(expires, (int, float)) else "no expiry given"
    scope = entry.get("scope") or entry.get("requested_scope") or "no scopes"
    refresh = "a refresh token" if entry.get("refresh_token") else "no refresh token"
    return f"issuer {entry.get('issuer')}, resource {entry.get('resource')}, scopes: {scope}; {left}; {refresh}"


async def login(args: argparse.Namespace) -> int:
    from .._auth._browser import LoopbackBrowser
    from .._auth._oauth_client import OAuth
    from .._client._client import Client

    secret = None
    if args.client_secret_env:
        secret = os.environ.get(args.client_secret_env)
        if not secret:
            print(f"mcpio: the environment variable {args.client_secret_env} is not set", file=sys.stderr)
            return 2
    agent = LoopbackBrowser(
        port=args.callback_port, timeout=args.timeout, open_browser=(lambda url: False) if args.no_browser else None
    )
    scopes = args.scopes.replace(",", " ").split() if args.scopes else None
    store = _store(args)
    try:
        auth = OAuth(
            client_id=args.client_id,
            client_secret=secret,
            issuer=args.issuer,
            scopes=scopes,
            user_agent=agent,
            store=store,
        )
    except ValueError as exc:
        message = str(exc).replace("client_secret=", "--client-secret-env").replace("issuer=", "--issuer URL")
        print(f"mcpio: {message.replace('client_id=', '--client-id')}", file=sys.stderr)
        return 2
    async with Client(args.url, auth=auth, timeout=args.timeout):
        pass
    if auth.token is None:
        print(f"{shown(args.url)} did not ask for authorization: nothing to log in to")
        return 0
    how = "logged in" if auth.authorizations else "already logged in (a stored token works)"
    print(f"{how}: {shown(args.url)}\n  {_describe(auth.token)}\n  kept in {store.path}")
    return 0


def logout(args: argparse.Namespace) -> int:
    store = _store(args)
    entries = _entries(store, args.url)
    for key, _ in entries:
        store.delete(key)
    url = shown(args.url)
    print(f"forgot {len(entries)} token(s) for {url}" if entries else f"no stored token for {url}")
    return 0


async def explain(args: argparse.Namespace) -> int:
    import httpx

    from .._auth._discovery import AuthorizationError, discover, oauth_http, parse_www_authenticate, server_identity

    steps: list[str] = []
    report: dict[str, Any] = {"url": shown(args.url)}
    probe = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcpio-auth", "version": "0"},
        },
    }
    code = 0
    async with httpx.AsyncClient(follow_redirects=False, timeout=30) as http, oauth_http(30) as guarded:
        try:
            resp = await http.post(args.url, json=probe, headers={"accept": "application/json, text/event-stream"})
        except httpx.HTTPError as exc:
            print(f"mcpio: cannot reach {shown(args.url)}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        header = resp.headers.get("www-authenticate")
        challenge = parse_www_authenticate(header)
        steps.append(
            f"POST {shown(args.url)} without a token -> HTTP {resp.status_code}"
            + (f"; WWW-Authenticate: {header}" if header else "; no WWW-Authenticate header")
        )
        if resp.status_code != 401:
            steps.append("the server did not answer 401: it does not ask for authorization (or not for this request)")
        try:
            found = await discover(
                guarded, server_identity(args.url), challenge, steps
            )  # the https rule on every fetch
            meta = found.metadata
            report.update(
                resource=found.resource,
                issuer=found.issuer,
                endpoints={
                    k: meta.get(k) for k in ("authorization_endpoint", "token_endpoint", "registration_endpoint")
                },
            )
            pkce = meta.get("code_challenge_methods_supported")
            steps.append(
                f"PKCE: {'S256 supported' if isinstance(pkce, list) and 'S256' in pkce else 'S256 NOT listed: mcpio will refuse this server'}"
            )
            steps.append(
                "registration: "
                + ", ".join(
                    filter(
                        None,
                        [
                            "client ID metadata documents"
                            if meta.get("client_id_metadata_document_supported")
                            else None,
                            "dynamic client registration" if meta.get("registration_endpoint") else None,
                        ],
                    )
                )
                + " (else a pre-registered client id)"
                if meta.get("registration_endpoint") or meta.get("client_id_metadata_document_supported")
                else "registration: neither CIMD nor DCR: a pre-registered client id is needed"
            )
            steps.append(
                f"scopes the resource lists: {' '.join(found.prm.get('scopes_supported') or []) or 'none'}; "
                f"the challenge asks for: {challenge.get('scope') or 'nothing'}"
            )
            steps.append(
                f"RFC 9207 iss in the authorization response: "
                f"{'advertised' if meta.get('authorization_response_iss_parameter_supported') else 'not advertised'}"
            )
        except AuthorizationError as exc:
            steps.append(f"FAILED: {exc}")
            code = 1
    stored = _entries(_store(args), args.url)
    steps.append(
        f"stored: {_describe(stored[0][1])}" if stored else "stored: no token for this URL (run: mcpio login URL)"
    )
    report["steps"] = steps
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for i, step in enumerate(steps, 1):
            print(f"{i:2}. {step}")
    return code


async def run(args: argparse.Namespace) -> int:
    """Run ``login``, ``logout`` or ``auth``."""
    if args.command == "login":
        return await login(args)
    if args.command == "logout":
        return logout(args)
    return await explain(args)
