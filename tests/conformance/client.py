"""The conformance CLIENT harness: what the official suite runs as "the client under test".

    conformance client --command "python tests/conformance/client.py" --scenario tools_call

The suite starts a mock server for a scenario and runs this script with the server's URL as
the last argument and (spec-notes §14):

* ``MCP_CONFORMANCE_SCENARIO`` — the scenario to play;
* ``MCP_CONFORMANCE_PROTOCOL_VERSION`` — the revision under test: through 2025-11-25 the
  legacy era (``initialize``), 2026-07-28 the stateless era;
* ``MCP_CONFORMANCE_CONTEXT`` — JSON with scenario data (``toolCalls`` for http-custom-headers;
  ``client_id``/``client_secret`` for auth/pre-registration and auth/client-credentials-basic;
  ``client_id``/``private_key_pem``/``signing_algorithm`` for auth/client-credentials-jwt;
  ``client_id``/``valid_jwt`` for auth/wif-jwt-bearer; the IdP's token endpoint, client id and
  the user's ID token for auth/enterprise-managed-authorization).

The ``auth/*`` scenarios run with mcpio's OAuth client: the mock authorization server approves
without a user, so the user agent fetches the authorization URL without following the redirect
and hands back its ``Location`` (``fetch_redirect``); tokens are kept in memory only.

It uses only mcpio's public API (``mcpio.Client``) over Streamable HTTP, does what the scenario
asks, and exits 0 (the suite judges the traffic, not our output); an exception exits 1 with the
reason on stderr.

``MCPIO_CONFORMANCE_LOCK=PATH``: hold an exclusive lock on that file for the whole run, taken
before anything else is loaded. The suite starts every client of a ``--requirements`` run at
once; with the lock they play one at a time, so a run never takes both cores from the tests
running beside it (test_client_conformance.py).
"""

from __future__ import annotations

import os
import sys

if os.environ.get("MCPIO_CONFORMANCE_LOCK") and sys.platform != "win32":
    import fcntl

    fcntl.flock(os.open(os.environ["MCPIO_CONFORMANCE_LOCK"], os.O_CREAT | os.O_RDWR, 0o600), fcntl.LOCK_EX)

# after the lock: a client waiting its turn loads nothing
import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcpio import Client, MCPError, SkillVerificationError

MODERN_VERSIONS = ("2026-07-28",)
KNOWN_VERSIONS = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


# ---------------------------------------------------------------------- handlers (a stand-in user)
def elicitation(params: dict[str, Any]) -> dict[str, Any]:
    """Accept every form; fields with a default get it (mcpio fills them in), booleans are yes."""
    props = (params.get("requestedSchema") or {}).get("properties") or {}
    return {
        k: True for k, p in props.items() if isinstance(p, dict) and p.get("type") == "boolean" and "default" not in p
    }


def sampling(params: dict[str, Any]) -> str:
    return "A reply from the conformance client's model."


ROOTS = ["file:///tmp/conformance-root"]


def example_value(schema: Any) -> Any:
    """A value of the type ``schema`` names (for calling a tool with its required arguments)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if isinstance(schema, dict) and "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    return {"string": "example", "integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}.get(
        kind, "example"
    )


def example_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool.get("inputSchema") or {}
    props = schema.get("properties") or {}
    return {name: example_value(props.get(name)) for name in schema.get("required") or []}


# ---------------------------------------------------------------------- scenarios
Scenario = Callable[[Client, dict[str, Any]], Awaitable[None]]


async def list_only(c: Client, context: dict[str, Any]) -> None:
    await c.list_tools()


async def tools_call(c: Client, context: dict[str, Any]) -> None:
    tools = {t["name"]: t for t in await c.list_tools()}
    if "add_numbers" in tools:
        await c.call_tool("add_numbers", {"a": 2, "b": 3})
    else:
        for tool in tools.values():
            await c.call_tool(tool["name"], example_arguments(tool))


async def call_every_tool(c: Client, context: dict[str, Any]) -> None:
    """List the tools and call each one that survived the listing (valid definitions only)."""
    for tool in await c.list_tools():
        await c.call_tool(tool["name"], example_arguments(tool))


async def custom_headers(c: Client, context: dict[str, Any]) -> None:
    await c.list_tools()  # the x-mcp-header annotations come from the tools' inputSchemas
    for call in context.get("toolCalls") or []:
        await c.call_tool(call["name"], call.get("arguments") or {})


async def request_state(c: Client, context: dict[str, Any]) -> None:
    await c.list_tools()
    await c.call_tool("test_mrtr_echo_state")
    await c.call_tool("test_mrtr_unrelated")
    await c.call_tool("test_mrtr_no_state")
    await c.call_tool("test_mrtr_no_result_type")


async def standard_headers(c: Client, context: dict[str, Any]) -> None:
    """One request of each kind that carries Mcp-Method (and Mcp-Name where it applies)."""
    tools = await c.list_tools()
    if tools:
        await c.call_tool(tools[0]["name"], example_arguments(tools[0]))
    resources = await c.list_resources()
    if resources:
        await c.read_resource(resources[0]["uri"])
    prompts = await c.list_prompts()
    if prompts:
        args = {a["name"]: "example" for a in prompts[0].get("arguments") or [] if a.get("required")}
        await c.get_prompt(prompts[0]["name"], args or None)


async def schema_echo(c: Client, context: dict[str, Any]) -> None:
    tools = {t["name"]: t for t in await c.list_tools()}
    source = tools.get("json_schema_2020_12_tool")
    if "json_schema_echo" in tools and source is not None:
        await c.call_tool("json_schema_echo", {"schema": source["inputSchema"]})


async def list_skills(c: Client, context: dict[str, Any]) -> None:
    """SEP-2640: list the skills and fetch nothing (no prefetch on listing)."""
    await c.list_skills()


async def load_skills(c: Client, context: dict[str, Any]) -> None:
    """SEP-2640: load each listed skill (SKILL.md, verified), then read its other files, each
    verified; a skill that fails verification is refused and none of its files is read."""
    for skill in await c.list_skills():
        try:
            await c.load_skill(skill)
            for f in skill.files or []:
                if f.uri != skill.uri:
                    await c.read_skill_file(skill, f.uri)
        except SkillVerificationError as exc:
            print(f"refused skill {skill.uri}: {exc}", file=sys.stderr)


SCENARIOS: dict[str, Scenario] = {
    "initialize": list_only,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": call_every_tool,
    "sse-retry": call_every_tool,
    "request-metadata": tools_call,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": call_every_tool,
    "json-schema-ref-no-deref": list_only,
    "json-schema-2020-12-preservation": schema_echo,
    "sep-2640-client-no-prefetch": list_skills,
    "sep-2640-client-verify-digest": load_skills,
    "sep-2640-client-verify-size": load_skills,
    "sep-2640-client-verify-frontmatter": load_skills,
}


# The Client ID Metadata Document URL the suite's mock authorization server expects (auth/basic-cimd).
CIMD_URL = "https://conformance-test.local/client-metadata.json"


def make_auth(scenario: str, context: dict[str, Any]) -> Any:
    """mcpio's OAuth client for an ``auth/*`` scenario (None for the others)."""
    if not scenario.startswith("auth/"):
        return None
    from mcpio._auth._browser import fetch_redirect
    from mcpio._auth._oauth_client import OAuth

    if scenario == "auth/enterprise-managed-authorization":
        from mcpio._auth._enterprise import id_jag_assertion

        exchange = id_jag_assertion(context["idp_token_endpoint"], context["idp_id_token"], context["idp_client_id"])
        return OAuth(
            grant="jwt_bearer",
            client_id=context["client_id"],
            client_secret=context["client_secret"],
            issuer=context["issuer"],
            assertion=exchange,
            store="memory",
        )
    if scenario == "auth/wif-jwt-bearer":
        return OAuth(
            grant="jwt_bearer",
            client_id=context["client_id"],
            assertion=context["valid_jwt"],
            issuer=context["issuer"],
            store="memory",
        )
    if scenario.startswith("auth/client-credentials"):
        return OAuth(
            grant="client_credentials",
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            issuer=context.get("issuer"),
            private_key=context.get("private_key_pem"),
            signing_alg=context.get("signing_algorithm") or "ES256",
            store="memory",
        )
    return OAuth(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        issuer=context.get("issuer"),
        client_metadata_url=CIMD_URL,
        user_agent=fetch_redirect,
        redirect_uri="http://127.0.0.1:33418/callback",
        store="memory",
        client_name="mcpio-conformance-client",
    )


async def _issuer_of(url: str) -> str:
    """The authorization server the scenario's server names. The suite hands out pre-registered
    secrets and fixed assertions without their issuer; mcpio sends them only to the issuer they
    are bound to, so this harness (which trusts the server it tests) looks it up first."""
    from mcpio._auth._discovery import discover, oauth_http, parse_www_authenticate

    async with oauth_http(20) as http:
        probe = await http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "ping"})
        found = await discover(http, url, parse_www_authenticate(probe.headers.get("www-authenticate")))
    return found.issuer


async def run(url: str, scenario: str, version: str | None, context: dict[str, Any]) -> None:
    play = SCENARIOS.get(scenario, call_every_tool)
    if (context.get("client_secret") or context.get("valid_jwt")) and not context.get("issuer"):
        context = {**context, "issuer": await _issuer_of(url)}
    era = "modern" if version in MODERN_VERSIONS else "legacy"
    async with Client(
        url,
        era=era,
        protocol_version=version if version in KNOWN_VERSIONS else None,
        name="mcpio-conformance-client",
        elicitation=elicitation,
        sampling=sampling,
        roots=ROOTS,
        timeout=20,
        auth=make_auth(scenario, context),
    ) as c:
        await play(c, context)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: client.py URL (scenario in MCP_CONFORMANCE_SCENARIO)", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        asyncio.run(run(argv[-1], scenario, version, context))
    except (MCPError, OSError) as exc:
        print(f"{scenario}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
