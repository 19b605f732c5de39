"""``mcpio doctor TARGET``: what a host will experience with this server, and what to fix.

It reports the time from spawning the server to its first answer (``server/discover`` or
``initialize``, in the era ``--era`` picks; hosts give up after 5–60 s), the eras and protocol
versions it serves (the modern era with a ``server/discover`` on its own connection, as
spec-notes §7 describes; each legacy version with its own ``initialize``), its capabilities, the size of ``tools/list`` in bytes
and approximate tokens (bytes / 4) per tool, and these findings:

* problems (exit status 1): a tool name outside the conformance rule (1–64 characters of
  ``[A-Za-z0-9_./-]``), duplicate names, an ``inputSchema``/``outputSchema`` that is not a
  valid JSON Schema (or whose ``type`` is not ``"object"``), a server that does not connect;
* warnings: tools without a ``title`` or without ``annotations`` (hosts then ask before every
  call, since ``destructiveHint`` defaults to true), descriptions over 2 KB;
* MCP Apps (``_doctor_apps``): each linked view exists and is ``text/html;profile=mcp-app``, each
  UI tool returns text content for hosts without apps.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from typing import Any

from .._client._client import Client
from .._errors import MCPError, RemoteProtocolError, TransportError, UnsupportedProtocolVersion
from .._server._tools import NAME_PROBLEM
from .._server._tools import NAME_RULE as TOOL_NAME
from .._shown import shown
from .._versions import LEGACY_VERSIONS
from . import _advice
from ._dispatch import _child_failure
from ._exit import FAILED, OK, UNAVAILABLE
from ._gateway import gateway_specs
from ._main import _fetch
from ._output import dump_json, out, table
from ._targets import client_for
from ._validate import schema_problems

NAME_RULE = re.compile(TOOL_NAME)  # the rule registration checks (a server mcpio did not write is checked here)


def _size(obj: Any) -> int:
    return len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())


async def _legacy_version(args: Any, version: str) -> str | None:
    """The version the server settles on when asked for ``version`` (None if it fails)."""
    try:
        async with client_for(
            args.target, args, protocol_version=version, era="legacy", timeout=min(args.timeout, 15)
        ) as c:
            return c.negotiated_version
    except Exception:
        return None


async def _modern(args: Any) -> dict[str, Any]:
    """Whether the server speaks 2026-07-28: a ``server/discover`` on its own connection
    (``era="modern"``: what a recognised modern error or a DiscoverResult shows, spec-notes §7)."""
    try:
        async with client_for(args.target, args, era="modern", timeout=min(args.timeout, 15)) as c:
            versions = c.server_result.get("supportedVersions")
            return {
                "modern": True,
                "versions": versions if isinstance(versions, list) else [c.negotiated_version],
                "detail": "server/discover answered",
            }
    except UnsupportedProtocolVersion as exc:  # modern, but none of our modern versions
        return {"modern": True, "versions": exc.supported, "detail": f"modern error {exc.code}: {exc.message}"}
    except (MCPError, TransportError, OSError) as exc:
        return {"modern": False, "detail": str(getattr(exc, "message", exc))}


def _tool_findings(tools: Sequence[dict[str, Any]]) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    problems: list[str] = []
    warnings: list[str] = []
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for t in tools:
        name = t.get("name")
        label = json.dumps(name)
        if not isinstance(name, str) or not NAME_RULE.match(name):
            problems.append(f"tool {label}: {NAME_PROBLEM}")
        if name in seen:
            problems.append(f"tool {label} is listed twice")
        seen.add(name)  # type: ignore[arg-type]
        for key in ("inputSchema", "outputSchema"):
            if key not in t:
                if key == "inputSchema":
                    problems.append(f"tool {label}: no inputSchema")
                continue
            schema = t[key]
            found = schema_problems(schema)
            if isinstance(schema, dict) and schema.get("type") != "object":
                found.insert(0, 'its "type" must be "object"')
            problems.extend(f"tool {label}: {key} {p}" for p in found)
        annotations = t.get("annotations")
        if not t.get("title") and not (isinstance(annotations, dict) and annotations.get("title")):
            warnings.append(f"tool {label} has no title")
        if not isinstance(annotations, dict) or not annotations:
            warnings.append(
                f"tool {label} has no annotations (readOnlyHint, destructiveHint …); hosts will ask before each call"
            )
        if len(str(t.get("description") or "")) > 2048:
            warnings.append(f"tool {label}: the description is {len(t['description'])} characters long")
        size = _size(t)
        rows.append({"name": name, "bytes": size, "tokens": round(size / 4)})
    return problems, warnings, rows


async def doctor(args: Any) -> int:
    skipped: list[tuple[str, str]] = []
    if getattr(args, "openapi", None) or args.target is None:  # the server `mcpio run --openapi SPEC` makes
        from ._openapi import doctor_target

        # off this loop: a URL's download refuses to block a running one (Server.from_openapi_async)
        args.target, target, skipped = await asyncio.to_thread(doctor_target, args)
    else:
        target = shown(args.target)  # named so in the report, connected to as given
    report: dict[str, Any] = {"target": target, "problems": [], "warnings": []}
    if skipped:
        report["skipped_operations"] = [{"operation": op, "reason": why} for op, why in skipped]
        report["warnings"] += [f"operation {op} is not served: {why}" for op, why in skipped]
    specs = gateway_specs(args.target)
    if specs is not None:  # a gateway: each upstream's state, then the gateway as a host sees it
        from ._gateway import upstream_lines, upstream_states

        report["upstreams"] = await upstream_states(args.target, specs)
        report["problems"] += upstream_lines(report["upstreams"])[1]
    client: Client = client_for(args.target, args)
    t0 = time.perf_counter()
    try:
        async with client:
            report["first_response_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            report["server_info"] = client.server_info
            report["era"] = client.negotiated_era
            report["protocol_version"] = client.negotiated_version
            report["capabilities"] = client.server_capabilities
            lists: dict[str, Sequence[dict[str, Any]]] = {}
            for kind in ("tools", "resources", "templates", "prompts"):
                try:
                    lists[kind], note, _ = await _fetch(client, kind)
                except RemoteProtocolError as exc:  # the server's fault: a finding, the rest goes on
                    lists[kind], note = [], f"{exc.message}"
                if note:
                    report["problems"].append(note)
            tools = lists["tools"]
            report["counts"] = {kind: len(items) for kind, items in lists.items()}
    except (MCPError, TransportError, OSError) as exc:
        child = _child_failure(str(getattr(exc, "message", exc)))
        hint = _advice.not_found(exc, args) if isinstance(exc, MCPError) else None  # a URL without /mcp: the one to try
        report["problems"].append(
            f"the server did not start: {child[0]}"
            if child
            else f"cannot connect: {exc}" + (f"; {hint}" if hint else "")
        )
        report["unavailable"] = True
        return _print(args, report)
    problems, warnings, rows = _tool_findings(tools)
    report["problems"] += problems
    report["warnings"] += warnings
    report["tools_list_bytes"] = _size({"tools": tools})
    report["tools_list_tokens"] = round(report["tools_list_bytes"] / 4)
    report["tools"] = sorted(rows, key=lambda r: -r["bytes"])
    extensions = report["capabilities"].get("extensions") or {}
    if "io.modelcontextprotocol/ui" in extensions or any("ui" in (t.get("_meta") or {}) for t in tools):
        from .._client._apps import APPS_HOST  # MCP Apps: as a host that renders them
        from ._doctor_apps import check_apps

        async with client_for(args.target, args, extensions=APPS_HOST) as apps_client:
            found_p, found_w, report["ui_tools"] = await check_apps(apps_client)
        report["problems"] += found_p
        report["warnings"] += found_w
    found = await asyncio.gather(_modern(args), *(_legacy_version(args, v) for v in LEGACY_VERSIONS))
    legacy = [v for v, got in zip(LEGACY_VERSIONS, found[1:], strict=True) if got == v]
    report["eras"] = {"legacy": legacy, "modern": found[0]}
    return _print(args, report)


def _print(args: Any, report: dict[str, Any]) -> int:
    failed = bool(report["problems"])
    status = UNAVAILABLE if report.pop("unavailable", False) else FAILED if failed else OK
    if args.json:
        dump_json(report)
        return status
    lines = [f"target: {report['target']}"]
    if "server_info" in report:
        info = report["server_info"]
        lines.append(f"server: {info.get('name')} {info.get('version', '')}".rstrip())
        first = "initialize" if report["era"] == "legacy" else "server/discover"
        start = "first request" if str(report["target"]).startswith(("http://", "https://")) else "spawn"
        lines.append(
            f"time to first response: {report['first_response_ms']:.0f} ms ({start} to {first} result, "
            f"{report['era']} era, {report['protocol_version']})"
        )
        eras = report.get("eras", {})
        modern = eras.get("modern", {})
        lines.append("legacy era: " + (", ".join(eras.get("legacy", [])) or "no"))
        lines.append(
            "modern era: "
            + (
                f"yes (server/discover lists {', '.join(map(str, modern.get('versions') or []))})"
                if modern.get("modern")
                else f"no ({modern.get('detail')})"
            )
        )
        lines.append("capabilities: " + (", ".join(sorted(report["capabilities"])) or "none"))
        counts = report["counts"]
        lines.append("catalog: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    if "upstreams" in report:
        from ._gateway import upstream_lines

        lines.append(upstream_lines(report["upstreams"])[0])
    if "server_info" in report:
        lines.append(f"tools/list: {report['tools_list_bytes']} bytes, ≈{report['tools_list_tokens']} tokens")
        if report["tools"]:
            lines.append(
                table(["TOOL", "BYTES", "≈TOKENS"], [[r["name"], r["bytes"], r["tokens"]] for r in report["tools"]])
            )
    for p in report["problems"]:
        lines.append(f"PROBLEM: {p}")
    for w in report["warnings"]:
        lines.append(f"warning: {w}")
    lines.append(f"{len(report['problems'])} problems, {len(report['warnings'])} warnings")
    out("\n".join(lines))
    return status
