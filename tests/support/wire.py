"""Validate every JSON-RPC message a test sees against the official MCP schema of its version.

``WireValidator.check(msg, version, sent_by, method=None)`` finds the ``$defs`` entry of the
message's type (request and notification by method; a result by the method of the request it
answers) and raises ``AssertionError`` naming the schema path when it does not validate.

The 2026-07-28 schema is extended with the tasks extension's types (``tasks_schema.json``, a
hand transcription of the ext-tasks specification): tasks/* requests and results,
``notifications/tasks``, and a ``tools/call`` answered with ``resultType: "task"``.

One documented departure: an error response to a message whose id could not be read carries
``"id": null`` (JSON-RPC 2.0 §5 requires it); the MCP schemas of 2025-11-25 and later instead
allow the id to be absent, so such an envelope is checked with the null id left out.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

# Where the schemas are: tools/gen_types.py's rule ($MCPIO_SHARED, else shared/ beside the
# checkout, else the copy in schemas/), loaded from the tool itself so there is one rule.
_spec = importlib.util.spec_from_file_location(
    "_gen_types", Path(__file__).resolve().parents[2] / "tools" / "gen_types.py"
)
assert _spec is not None and _spec.loader is not None
_gen_types = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _gen_types  # its dataclasses look their module up
_spec.loader.exec_module(_gen_types)
SCHEMA_DIR: Path = _gen_types.default_schema_dir()

# method -> (request def, result def)
REQUESTS = {
    "initialize": ("InitializeRequest", "InitializeResult"),
    "ping": ("PingRequest", "EmptyResult"),
    "tools/list": ("ListToolsRequest", "ListToolsResult"),
    "tools/call": ("CallToolRequest", "CallToolResult"),
    "resources/list": ("ListResourcesRequest", "ListResourcesResult"),
    "resources/templates/list": ("ListResourceTemplatesRequest", "ListResourceTemplatesResult"),
    "resources/read": ("ReadResourceRequest", "ReadResourceResult"),
    "resources/subscribe": ("SubscribeRequest", "EmptyResult"),
    "resources/unsubscribe": ("UnsubscribeRequest", "EmptyResult"),
    "prompts/list": ("ListPromptsRequest", "ListPromptsResult"),
    "prompts/get": ("GetPromptRequest", "GetPromptResult"),
    "completion/complete": ("CompleteRequest", "CompleteResult"),
    "logging/setLevel": ("SetLevelRequest", "EmptyResult"),
    "sampling/createMessage": ("CreateMessageRequest", "CreateMessageResult"),
    "elicitation/create": ("ElicitRequest", "ElicitResult"),
    "roots/list": ("ListRootsRequest", "ListRootsResult"),
    "server/discover": ("DiscoverRequest", "DiscoverResult"),
    "subscriptions/listen": ("SubscriptionsListenRequest", "SubscriptionsListenResult"),
    "tasks/get": ("GetTaskRequest", "GetTaskResult"),  # the tasks extension (tasks_schema.json)
    "tasks/update": ("UpdateTaskRequest", "TaskAckResult"),
    "tasks/cancel": ("CancelTaskRequest", "TaskAckResult"),
    "tasks/result": ("GetTaskPayloadRequest", "GetTaskPayloadResult"),  # 2025-11-25 core tasks
    "tasks/list": ("ListTasksRequest", "ListTasksResult"),
}
# results whose type differs by version: (version, method) -> def
VERSION_RESULTS = {("2025-11-25", "tasks/cancel"): "CancelTaskResult"}
# result types by resultType (2026-07-28), beside the method's own complete result
RESULT_TYPES = {"input_required": "InputRequiredResult", "task": "CreateTaskResult"}
TASKS_SCHEMA = Path(__file__).with_name("tasks_schema.json")
NOTIFICATIONS = {
    "notifications/initialized": "InitializedNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/roots/list_changed": "RootsListChangedNotification",
    "notifications/elicitation/complete": "ElicitationCompleteNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/tasks": "TaskStatusNotification",
    "notifications/tasks/status": "TaskStatusNotification",  # 2025-11-25 core tasks
}


@cache
def _schema(version: str) -> tuple[dict[str, Any], str]:
    doc = json.loads((SCHEMA_DIR / version / "schema.json").read_text())
    key = "$defs" if "$defs" in doc else "definitions"
    if version == "2026-07-28":
        doc[key].update(json.loads(TASKS_SCHEMA.read_text())["$defs"])
    return doc, key


@cache
def _validator(version: str, name: str) -> jsonschema.protocols.Validator:
    doc, key = _schema(version)
    if name not in doc[key]:
        raise KeyError(f"{name} is not defined in the {version} schema")
    sub = {"$ref": f"#/{key}/{name}", key: doc[key]}
    if "$schema" in doc:
        sub["$schema"] = doc["$schema"]
    cls = jsonschema.validators.validator_for(doc)
    return cls(sub)


def has_def(version: str, name: str) -> bool:
    doc, key = _schema(version)
    return name in doc[key]


def validate_def(instance: Any, version: str, name: str) -> None:
    errors = sorted(_validator(version, name).iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise AssertionError(
            f"{version} {name} does not validate at {where}: {e.message}\nmessage: {json.dumps(instance)[:2000]}"
        )


def check(msg: Any, version: str, request_method: str | None = None) -> None:
    """Validate one message (or a batch) of protocol ``version``.

    ``request_method`` names the method of the request a response answers.
    """
    if isinstance(msg, list):
        for m in msg:
            check(m, version, request_method)
        return
    assert isinstance(msg, dict), f"not a JSON-RPC object: {msg!r}"
    if "method" in msg:
        method = msg["method"]
        if "id" in msg:
            name = REQUESTS[method][0] if method in REQUESTS else "JSONRPCRequest"
        else:
            name = NOTIFICATIONS.get(method, "JSONRPCNotification")
        validate_def(msg, version, name if has_def(version, name) else "JSONRPCMessage")
        return
    if "error" in msg:
        env = "JSONRPCErrorResponse" if has_def(version, "JSONRPCErrorResponse") else "JSONRPCError"
        inst = msg
        if msg.get("id", 0) is None:
            inst = {k: v for k, v in msg.items() if k != "id"}
            if env == "JSONRPCError":  # id was required before 2025-11-25: check the error alone
                inst = dict(inst, id=0)
        validate_def(inst, version, env)
        return
    env = "JSONRPCResultResponse" if has_def(version, "JSONRPCResultResponse") else "JSONRPCResponse"
    validate_def(msg, version, env)
    if request_method in REQUESTS:
        result = msg["result"]
        name = VERSION_RESULTS.get((version, request_method)) or REQUESTS[request_method][1]
        if isinstance(result, dict) and result.get("resultType") in RESULT_TYPES:
            name = RESULT_TYPES[result["resultType"]]
        elif (
            isinstance(result, dict) and request_method == "tools/call" and "task" in result and "content" not in result
        ):
            name = "CreateTaskResult"  # 2025-11-25: a task-augmented call
        if name == "EmptyResult" and not has_def(version, name):
            name = "Result"
        validate_def(result, version, name)
