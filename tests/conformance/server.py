"""The conformance fixture server: every tool, resource and prompt the official MCP
conformance suite (``@modelcontextprotocol/conformance`` 0.2.0-alpha.12) calls, with the exact
names it expects (spec-notes §13), served over Streamable HTTP for both eras on one URL.

    python tests/conformance/server.py --port 3000     # http://127.0.0.1:3000/mcp

Written with mcpio's public API only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import msgspec

from mcpio import Audio, Context, EmbeddedResource, Image, MCPError, Message, Server, Text, ToolError

# A 1x1 red PNG and a minimal WAV file, base64 (what the suite's reference fixture returns).
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

server = Server(
    "mcp-conformance-test-server",
    "1.0.0",
    instructions="The mcpio fixture for the MCP conformance suite.",
    skills=Path(__file__).resolve().parent / "skills",  # the skills extension (sep-2640-* scenarios)
)


def _answer(result: dict[str, Any]) -> str:
    return f"action={result.get('action')}, content={json.dumps(result.get('content') or {})}"


# ============================================================================ tools: content
@server.tool
def test_simple_text() -> Text:
    """Tests simple text content response."""
    return Text("This is a simple text response for testing.")


@server.tool
def test_image_content() -> Image:
    """Tests image content response."""
    return Image(data=PNG, mime_type="image/png")


@server.tool
def test_audio_content() -> Audio:
    """Tests audio content response."""
    return Audio(data=WAV, mime_type="audio/wav")


@server.tool
def test_embedded_resource() -> EmbeddedResource:
    """Tests embedded resource content response."""
    return EmbeddedResource(
        "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
    )


@server.tool
def test_multiple_content_types() -> list[Text | Image | EmbeddedResource]:
    """Tests response with multiple content types (text, image, resource)."""
    return [
        Text("Multiple content types test:"),
        Image(data=PNG, mime_type="image/png"),
        EmbeddedResource(
            "test://mixed-content-resource",
            text=json.dumps({"test": "data", "value": 123}),
            mime_type="application/json",
        ),
    ]


@server.tool
async def test_tool_with_logging(ctx: Context) -> Text:
    """Tests tool that emits log messages during execution."""
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return Text("Tool with logging executed successfully")


@server.tool
async def test_tool_with_progress(ctx: Context) -> Text:
    """Tests tool that reports progress notifications."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        if step < 100:
            await asyncio.sleep(0.05)
    return Text(str(ctx.progress_token))


@server.tool
def test_error_handling() -> Text:
    """Tests error response handling."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool
async def test_reconnection(ctx: Context) -> Text:
    """Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes the
    stream mid-call and sends the result after the client reconnects."""
    await ctx.close_sse_stream()
    await asyncio.sleep(0.1)
    return Text(
        "Reconnection test completed successfully. If you received this, the client properly "
        "reconnected after stream closure."
    )


# ============================================================================ tools: the client's features
@server.tool
async def test_sampling(prompt: str, ctx: Context) -> Text:
    """Tests server-initiated sampling (LLM completion request).

    Args:
        prompt: The prompt to send to the LLM.
    """
    result = await ctx.sample(prompt, max_tokens=100)
    content = result.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    return Text(f"LLM response: {text or 'No response'}")


@server.tool
async def test_elicitation(message: str, ctx: Context) -> Text:
    """Tests server-initiated elicitation (user input request).

    Args:
        message: The message to show the user.
    """
    result = await ctx.elicit(
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )
    return Text(f"User response: {_answer(result)}")


@server.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> Text:
    """Tests elicitation with default values per SEP-1034."""
    result = await ctx.elicit(
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": True},
            },
            "required": [],
        },
    )
    return Text(f"Elicitation completed: {_answer(result)}")


@server.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> Text:
    """Tests elicitation with enum schema improvements per SEP-1330."""
    result = await ctx.elicit(
        "Please select options from the enum fields",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]
                    },
                },
            },
            "required": [],
        },
    )
    return Text(f"Elicitation completed: {_answer(result)}")


@server.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, Any] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> Text:
    """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)."""
    args = {
        k: v
        for k, v in {
            "name": name,
            "address": address,
            "contactMethod": contactMethod,
            "phone": phone,
            "email": email,
        }.items()
        if v is not None
    }
    return Text(f"JSON Schema 2020-12 tool called with: {json.dumps(args)}")


@server.tool
def test_custom_header(
    region: Annotated[
        str,
        msgspec.Meta(
            extra_json_schema={"x-mcp-header": "Region"}, description="Mirrored in the Mcp-Param-Region header"
        ),
    ],
    query: str = "",
) -> Text:
    """Tests Mcp-Param-* custom headers (SEP-2243): the region argument travels in a header too."""
    return Text(f"region={region} query={query}")


# ============================================================================ tools: 2026-07-28 diagnostics
@server.tool
async def test_missing_capability(ctx: Context) -> Text:
    """Needs the client's sampling capability (-32021 when the request does not declare it)."""
    result = await ctx.sample("Say hello", max_tokens=10)
    return Text(f"sampled: {result.get('content')}")


@server.tool
async def test_streaming_elicitation(ctx: Context) -> Text:
    """Asks the user for input; on 2026-07-28 as an InputRequiredResult, never a request on the stream."""
    result = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return Text(f"Hello, {(result.get('content') or {}).get('name')}!")


@server.tool
async def test_logging_tool(ctx: Context) -> Text:
    """Logs at info level (sent only when the request asks for logs)."""
    await ctx.info("test_logging_tool ran")
    return Text("logged")


def test_dynamic_tool() -> Text:
    """A tool that comes and goes (test_trigger_tool_change)."""
    return Text("dynamic")


def test_dynamic_prompt() -> str:
    """A prompt that comes and goes (test_trigger_prompt_change)."""
    return "dynamic"


@server.tool
def test_trigger_tool_change() -> Text:
    """Adds or removes test_dynamic_tool: listeners get notifications/tools/list_changed."""
    try:
        server.remove_tool("test_dynamic_tool")
        return Text("removed test_dynamic_tool")
    except KeyError:
        server.add_tool(test_dynamic_tool)
        return Text("added test_dynamic_tool")


@server.tool
def test_trigger_prompt_change() -> Text:
    """Adds or removes test_dynamic_prompt: listeners get notifications/prompts/list_changed."""
    try:
        server.remove_prompt("test_dynamic_prompt")
        return Text("removed test_dynamic_prompt")
    except KeyError:
        server.add_prompt(test_dynamic_prompt)
        return Text("added test_dynamic_prompt")


# ============================================================================ tools: input_required (MRTR)
@server.tool
async def test_input_required_result_elicitation(ctx: Context) -> Text:
    """Asks for the user's name (key user_name), then greets them."""
    result = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return Text(f"Hello, {(result.get('content') or {}).get('name')}!")


@server.tool
async def test_input_required_result_sampling(ctx: Context) -> Text:
    """Asks the client's LLM a question (key capital_question)."""
    result = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    content = result.get("content")
    return Text(f"The LLM said: {content.get('text') if isinstance(content, dict) else content}")


@server.tool
async def test_input_required_result_list_roots(ctx: Context) -> Text:
    """Asks for the client's roots (key client_roots)."""
    roots = await ctx.list_roots(key="client_roots")
    return Text("Roots: " + ", ".join(r.get("uri", "?") for r in roots))


@server.tool
async def test_input_required_result_request_state(ctx: Context) -> Text:
    """Asks for a confirmation (key confirm); the answer comes back with the signed requestState."""
    result = await ctx.elicit(
        "Please confirm",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        key="confirm",
    )
    return Text(f"state-ok: confirmed={(result.get('content') or {}).get('ok')}")


@server.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> Text:
    """Asks for a name, a greeting and the roots in one round."""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    return Text(f"name={(name.get('content') or {}).get('name')} greeting={greeting.get('content')} roots={len(roots)}")


@server.tool
async def test_input_required_result_multi_round(ctx: Context) -> Text:
    """Two rounds: a name (step1), then a favourite colour (step2)."""
    first = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
    second = await ctx.elicit(
        "Step 2: What is your favorite color?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
        key="step2",
    )
    return Text(f"{(first.get('content') or {}).get('name')} likes {(second.get('content') or {}).get('color')}")


@server.tool
async def test_input_required_result_tampered_state(ctx: Context) -> Text:
    """Asks for a confirmation; a modified requestState is refused (-32602)."""
    result = await ctx.elicit(
        "Please confirm",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        key="confirm",
    )
    return Text(f"confirmed={(result.get('content') or {}).get('ok')}")


@server.tool
async def test_input_required_result_capabilities(ctx: Context) -> Text:
    """Asks only for what the request's clientCapabilities declare."""
    caps = ctx.client_capabilities
    asks = []
    if "sampling" in caps:
        asks.append(ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question"))
    if "elicitation" in caps:
        asks.append(ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name"))
    if "roots" in caps:
        asks.append(ctx.list_roots(key="client_roots"))
    answers = await asyncio.gather(*asks)
    return Text(f"{len(answers)} answers")


# ============================================================================ tools: tasks extension
# io.modelcontextprotocol/tasks (2026-07-28): the fixtures of the suite's tasks-* scenarios.
CONFIRM_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


@server.tool
def greet(name: str) -> Text:
    """Greets someone (never a task)."""
    return Text(f"Hello, {name}!")


@server.tool(task_support="optional")
async def slow_compute(seconds: float = 1.0, label: str = "") -> Text:
    """Sleeps `seconds` seconds, then answers: a task when the client allows it."""
    await asyncio.sleep(seconds)
    return Text(f"Computed {label or 'result'} after {seconds:g} s")


@server.tool(task_support="required")
async def failing_job() -> Text:
    """Fails after about a second with a tool execution error (isError)."""
    await asyncio.sleep(1.0)
    raise ToolError("failing_job failed, as it always does")


@server.tool(task_support="optional")
async def protocol_error_job() -> Text:
    """Fails with a JSON-RPC (protocol) error: the task ends as failed."""
    await asyncio.sleep(0.1)
    raise MCPError("protocol_error_job hit an internal error", -32603)


@server.tool(task_support="optional")
async def confirm_delete(filename: str, ctx: Context) -> Text:
    """Asks the user to confirm, then deletes (pretends to)."""
    answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_SCHEMA)
    confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm")
    return Text(f"{'Deleted' if confirmed else 'Kept'} {filename}")


@server.tool(task_support="optional")
async def multi_input(ctx: Context) -> Text:
    """Asks two questions at once (two inputRequests pending together)."""
    first, second = await asyncio.gather(
        ctx.elicit("First name?", NAME_SCHEMA), ctx.elicit("Second name?", NAME_SCHEMA)
    )
    names = [(a.get("content") or {}).get("name") for a in (first, second)]
    return Text(f"Got {names[0]} and {names[1]}")


@server.tool(task_support="required", task_after=None)
async def test_tool_with_task(ctx: Context) -> Text:
    """Asks for a name through an MRTR round trip, then goes on as a task."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    await ctx.start_task()
    await asyncio.sleep(0.2)
    return Text(f"Hello, {(answer.get('content') or {}).get('name')}!")


# ============================================================================ resources
@server.resource(
    "test://static-text",
    name="static-text",
    title="Static Text Resource",
    description="A static text resource for testing",
    mime_type="text/plain",
)
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary",
    name="static-binary",
    title="Static Binary Resource",
    description="A static binary resource (image) for testing",
    mime_type="image/png",
)
def static_binary() -> bytes:
    import base64

    return base64.b64decode(PNG)


@server.resource(
    "test://template/{id}/data",
    name="template",
    title="Resource Template",
    description="A resource template with parameter substitution",
    mime_type="application/json",
)
def template(id: str) -> EmbeddedResource:
    return EmbeddedResource(
        f"test://template/{id}/data",
        mime_type="application/json",
        text=json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}),
    )


@server.resource(
    "test://watched-resource",
    name="watched-resource",
    title="Watched Resource",
    description="A resource clients may subscribe to",
    mime_type="text/plain",
)
def watched_resource() -> str:
    return "Watched resource content"


# ============================================================================ prompts
@server.prompt(title="Simple Test Prompt")
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt(title="Prompt With Arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(title="Prompt With Embedded Resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
    """A prompt that includes an embedded resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [
        Message(
            "user", EmbeddedResource(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")
        ),
        Message("user", "Please process the embedded resource above."),
    ]


@server.prompt(title="Prompt With Image")
def test_prompt_with_image() -> list[Message]:
    """A prompt that includes image content."""
    return [Message("user", Image(data=PNG, mime_type="image/png")), Message("user", "Please analyze the image above.")]


@server.prompt
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that first asks the user for context (key user_context)."""
    result = await ctx.elicit(
        "What context should the prompt use?",
        {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
        key="user_context",
    )
    return f"Use this context: {(result.get('content') or {}).get('context')}"


@server.completion
def complete(ref: dict[str, Any], argument: dict[str, Any], context: Any) -> list[str]:
    values = ["paris", "park", "party"] if argument.get("name") == "arg1" else ["alpha", "beta"]
    prefix = argument.get("value") or ""
    return [v for v in values if v.startswith(prefix)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--redis", default=None, help="state on Redis (several processes share it)")
    args = parser.parse_args()
    server.run("http", host=args.host, port=args.port, legacy_sse=True, redis=args.redis)


if __name__ == "__main__":
    main()
