"""Protocol revisions and what each allows: the one table of era and version differences.

Every version-dependent decision in mcpio reads a :class:`Rules` row from ``RULES``; no other
module compares version strings. Sources: spec-notes §1 (version history), §2–3 (method
catalogues), §6 (error codes).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ._errors import INVALID_PARAMS, RESOURCE_NOT_FOUND

LEGACY: Final = "legacy"
MODERN: Final = "modern"

# Newest first. 2026-07-28 is the stateless revision ("modern era").
LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MODERN_VERSIONS: Final = ("2026-07-28",)
LATEST_LEGACY: Final = LEGACY_VERSIONS[0]
LATEST: Final = MODERN_VERSIONS[0]
SUPPORTED_VERSIONS: Final = MODERN_VERSIONS + LEGACY_VERSIONS  # as -32022 and server/discover list them

# Modern request/result/notification _meta keys (spec 2026-07-28 basic/index §_meta).
META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
# The tasks extension of 2026-07-28 (ext-tasks spec; SEP-2663): its capability key under
# ``extensions`` and the methods it adds.
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
# MCP Apps (ext-apps specification 2026-01-26): the extension and the mimeType of its views.
UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
UI_MIME_TYPE: Final = "text/html;profile=mcp-app"
APPS_HOST: Final = {UI_EXTENSION: {"mimeTypes": [UI_MIME_TYPE]}}  # what a host that renders apps declares
# The 2025-11-25 ``tasks`` capability a server with task-capable tools announces (``_core_tasks``).
CORE_TASKS_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"  # SEP-2640 (the rest of it is in _skills)
TASKS_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
# The skills extension (SEP-2640; its rules are in ``_skills``): the methods it adds, 2026-07-28.
SKILLS_METHODS: Final = frozenset({"skills/list", "skills/get", "resources/directory/read"})

# RFC 5424 severities, as MCP names them (spec-notes §5), least severe first.
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# Results that carry ttlMs + cacheScope in the modern era (CacheableResult, spec-notes §5).
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "skills/list",
        "skills/get",
    }  # SEP-2640: ListSkillsResult and GetSkillResult are CacheableResults
)
# The only requests that may be answered with an InputRequiredResult (MRTR §Supported Requests).
INPUT_REQUIRED_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})

_CLIENT_REQUESTS_2024 = frozenset(
    {
        "initialize",
        "ping",
        "completion/complete",
        "logging/setLevel",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "tools/list",
        "tools/call",
    }
)
# 2025-11-25 added the experimental core tasks (basic/utilities/tasks).
CORE_TASKS_METHODS: Final = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
_CLIENT_REQUESTS_2025_11 = _CLIENT_REQUESTS_2024 | CORE_TASKS_METHODS
_CLIENT_REQUESTS_MODERN = (
    frozenset(
        {
            "server/discover",
            "completion/complete",
            "prompts/list",
            "prompts/get",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "subscriptions/listen",
            "tools/list",
            "tools/call",
        }
    )
    | TASKS_METHODS
    | SKILLS_METHODS
)

# Every request method of MCP in any version: a server connection leaves a name outside it (an
# extension's method, SEP-2133) to the framework, which knows the extensions it serves.
ALL_CLIENT_REQUESTS: Final = _CLIENT_REQUESTS_2025_11 | _CLIENT_REQUESTS_MODERN
LEGACY_ONLY_METHODS: Final = _CLIENT_REQUESTS_2024 - _CLIENT_REQUESTS_MODERN
MODERN_ONLY_METHODS: Final = _CLIENT_REQUESTS_MODERN - _CLIENT_REQUESTS_2024


class Rules(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass
    """What one protocol revision allows. Field names say the feature; True means present."""

    version: str
    era: str
    client_requests: frozenset[str]
    batching: bool = False  # JSON-RPC batches (2025-03-26 only)
    tool_annotations: bool = False  # Tool.annotations (2025-03-26+)
    audio_content: bool = False  # AudioContent (2025-03-26+)
    progress_message: bool = False  # ProgressNotification.message (2025-03-26+)
    completions_capability: bool = False  # server capability "completions" (2025-03-26+)
    structured_output: bool = False  # Tool.outputSchema, CallToolResult.structuredContent (2025-06-18+)
    titles: bool = False  # BaseMetadata.title (2025-06-18+)
    resource_links: bool = False  # ResourceLink content (2025-06-18+)
    elicitation: bool = False  # elicitation/create (2025-06-18+)
    icons: bool = False  # icons on tools/resources/prompts/implementation (2025-11-25+)
    implementation_description: bool = False  # Implementation.description (2025-11-25 only)
    sse_polling: bool = False  # HTTP SSE priming events + retry; the server may close streams (2025-11-25 only)
    # ---- the modern (stateless) era, 2026-07-28: spec-notes §3, §7, §11
    stateless: bool = False  # per-request _meta carries version and client capabilities; no initialize
    result_type: bool = False  # every result carries "resultType" and _meta serverInfo
    cache_hints: bool = False  # ttlMs + cacheScope on the results named in CACHEABLE_METHODS
    input_required: bool = False  # server→client requests become InputRequiredResult round trips (MRTR)
    log_level_per_request: bool = False  # notifications/message only when the request's _meta has a logLevel
    missing_capability_is_error: bool = False  # -32021 instead of an isError tool result
    tasks_extension: bool = False  # io.modelcontextprotocol/tasks: tools/call may answer a task handle
    core_tasks: bool = False  # experimental core tasks: task-augmented tools/call, tasks/* (2025-11-25 only)
    resource_not_found_code: int = RESOURCE_NOT_FOUND


RULES: Final[dict[str, Rules]] = {
    "2024-11-05": Rules("2024-11-05", LEGACY, _CLIENT_REQUESTS_2024),
    "2025-03-26": Rules(
        "2025-03-26",
        LEGACY,
        _CLIENT_REQUESTS_2024,
        batching=True,
        tool_annotations=True,
        audio_content=True,
        progress_message=True,
        completions_capability=True,
    ),
    "2025-06-18": Rules(
        "2025-06-18",
        LEGACY,
        _CLIENT_REQUESTS_2024,
        tool_annotations=True,
        audio_content=True,
        progress_message=True,
        completions_capability=True,
        structured_output=True,
        titles=True,
        resource_links=True,
        elicitation=True,
    ),
    "2025-11-25": Rules(
        "2025-11-25",
        LEGACY,
        _CLIENT_REQUESTS_2025_11,
        tool_annotations=True,
        audio_content=True,
        progress_message=True,
        completions_capability=True,
        structured_output=True,
        titles=True,
        resource_links=True,
        elicitation=True,
        icons=True,
        implementation_description=True,
        sse_polling=True,
        core_tasks=True,
    ),
    "2026-07-28": Rules(
        "2026-07-28",
        MODERN,
        _CLIENT_REQUESTS_MODERN,
        tool_annotations=True,
        audio_content=True,
        progress_message=True,
        completions_capability=True,
        structured_output=True,
        titles=True,
        resource_links=True,
        elicitation=True,
        icons=True,
        stateless=True,
        result_type=True,
        cache_hints=True,
        input_required=True,
        log_level_per_request=True,
        missing_capability_is_error=True,
        resource_not_found_code=INVALID_PARAMS,
        tasks_extension=True,
    ),
}


def negotiate(requested: object) -> str:
    """Legacy version negotiation (spec lifecycle §Version Negotiation).

    Echo the client's version when we support it in the legacy era; otherwise answer with our
    latest legacy version (a normal result: the client decides whether it can use it).
    """
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY


# SEP-2133 / 2026-07-28 MetaObject key rules: a prefix of dot-separated labels, a slash, a name.
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
EXTENSION_ID = rf"^{_LABEL}(?:\.{_LABEL})*/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$"  # compiled at first use (re)
# Requests MCP servers send (every version): an extension's own method may not take one's name.
SERVER_REQUESTS: Final = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})


def checked_extension(id: object, settings: object, who: str) -> dict[str, Any]:
    """``settings`` of extension ``id`` as a new dict (None: ``{}``), or ValueError/TypeError
    saying what ``who`` (``server.extension``, ``Client(extensions=...)``) was given wrong: the
    identifier's form (SEP-2133) or settings that are not a JSON object
    (``capabilities.extensions`` maps identifiers to JSON objects, 2026-07-28 schema)."""
    import re  # not at start-up: only a declared extension needs it

    if not isinstance(id, str) or not re.match(EXTENSION_ID, id):
        raise ValueError(f"{who}: extension identifier {id!r} must be a prefixed name such as 'com.example/search'")
    if settings is not None and not isinstance(settings, dict):
        raise TypeError(f"{who}: the settings of extension {id!r} must be a dict (a JSON object), not {settings!r}")
    try:
        msgspec.json.encode(settings or {})
    except (TypeError, msgspec.EncodeError) as exc:
        raise TypeError(f"{who}: the settings of extension {id!r} must be JSON data: {exc}") from None
    return dict(settings or {})
