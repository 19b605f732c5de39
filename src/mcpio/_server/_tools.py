"""Tools: a function becomes a tool definition and a ``tools/call`` handler.

The definition (name, title, description, inputSchema, outputSchema, annotations, icons) is
built once from the signature (``_schema.analyze_function``) and cut per protocol version
(fields a version lacks are left out, so every message validates against its schema).

Calling: arguments are validated and converted by the signature (one it does not take is
refused with -32602 and a did-you-mean, never dropped); a sync function runs in a
worker thread (it never blocks the event loop), an async one on the loop. Errors of the *call*
(bad arguments, an exception in the function) are tool results with ``isError: true`` and a
message an LLM can act on, and so are failures of what the tool asked of the client through
its Context (missing capability, the client's error, a timeout). Only a protocol problem
(unknown tool or argument), or an :class:`MCPError` the function raises on purpose, is a
JSON-RPC error. A returned value that does not match the return annotation (the outputSchema)
is the tool's bug: an isError result saying so, and an error in the server's log.

Timeout: ``@server.tool(timeout=30)`` (else ``Server(tool_timeout=)``, else none): past it the
call is cancelled as a cancelled request is — an async function at its ``await``, a sync one's
worker thread left to finish with ``ctx.cancelled`` set — and the client gets an ``isError``
result naming the tool and the limit; the request's in-flight slot is free at once. A tool with a
timeout never runs on the event loop (nothing could stop it there).

Result budget (hosts warn on large results and refuse larger ones; each token costs): the
text of a result's content blocks is capped at
``max_result_bytes`` (UTF-8 bytes, all text blocks together; the tool's own setting, else the
server's, 1 MiB by default, None = no cap). Past it the text is cut at a character boundary and
ends with a marker saying how much there was and that the rest was dropped, later text blocks
are left out, and ``_meta["io.mcpio/truncated"]`` carries the figures. Other blocks (images,
audio, resources) and ``structuredContent`` (it must match the output schema) are not cut.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from .. import _log
from .._content import CONTENT_TYPES, ToolResult, json_text, to_blocks
from .._errors import HIDDEN_DETAIL, InvalidParams, MCPError, RequestTimeout, ResourceNotFound, SafePathError
from .._handle import HANDLE_TYPE
from .._schema import ArgumentError, FunctionSignature, UnknownArguments, analyze_function
from .._schema_output import OutputMismatch
from .._suggest import exception_text
from .._versions import Rules
from ._context import ClientCapabilityError, ClientRequestError, Context
from ._inline import Speed
from ._loopwatch import Watched
from ._result_cap import DEFAULT_MAX_RESULT_BYTES, cap_text, check_max_result_bytes

if TYPE_CHECKING:
    from ._threads import Workers

log = _log.logger("mcpio.server", globals())


TASK_SUPPORT = ("forbidden", "optional", "required")  # a tool's execution.taskSupport


class ToolError(Exception):
    """Raise from a tool to return ``isError: true`` with exactly this message."""


# A tool's name: spec 2025-11-25 server/tools §Tool Names (SHOULD be 1-128 characters of
# A-Z a-z 0-9 _ - .), as the conformance suite checks it (tools-name-format: 1-64 characters,
# "/" allowed). Checked at registration and by ``mcpio doctor`` (a server mcpio did not write).
NAME_RULE = r"^[A-Za-z0-9_./-]{1,64}$"
NAME_PROBLEM = "the name must be 1-64 characters of A-Z a-z 0-9 _ . / -"


def check_name(name: Any) -> None:
    """Refuse a tool name outside :data:`NAME_RULE` (ValueError naming it and the rule)."""
    import re  # at registration, compiled once by re's cache

    if not isinstance(name, str) or not re.match(NAME_RULE, name):
        raise ValueError(f"tool name {name!r}: {NAME_PROBLEM} (spec: server/tools, Tool Names); pass name=...")


async def invoke(
    sig: FunctionSignature,
    fn: Callable[..., Any],
    kwargs: dict[str, Any],
    ctx: Context | None,
    inline: bool = False,
    speed: Speed | None = None,
    owner: Any = None,
) -> Any:
    """Call ``fn`` with validated ``kwargs`` plus injected Context parameters.

    ``owner``: the mounted server whose handler ``fn`` is (an item's ``owner``, ``_catalog``),
    None for the serving server's own: ``ctx.owner`` while it runs (its ``ctx.lifespan``).

    A sync ``fn`` runs in a worker thread (the loop keeps serving), unless ``inline``: then it
    runs on the event loop itself — for quick functions only, since nothing else is served
    while it runs (it saves the thread hand-off: ~30 µs of CPU and ~100 µs of latency a call).
    With ``speed`` (adaptive inlining, :mod:`._inline`) it runs inline once it has proved quick
    and goes back to worker threads for good once it was not.
    """
    if owner is not None and ctx is not None:
        ctx.owner = owner
    for name in sig.injected:
        kwargs[name] = ctx
    try:
        if sig.is_async:  # watched for blocking unless ``inline``: vouched never to block (a proxy's forwarding)
            return await (fn(**kwargs) if inline else Watched(fn(**kwargs), sig.name))
        if inline:
            return fn(**kwargs)
        if speed is not None:
            if speed.inline:
                return speed.call(fn, kwargs)
            return await (_pool if _pool is not None else _workers()).run(fn, kwargs, speed)
        return await (_pool if _pool is not None else _workers()).run(fn, kwargs)
    except (SystemExit, KeyboardInterrupt) as exc:  # sys.exit() in a library ends a call, not the server
        raise _exited(exc) from None
    except BaseException as exc:  # asyncio is looked up here, not on every call (the hot path)
        if ctx is not None and isinstance(exc, _cancelled_error()):
            ctx._cancelled = True  # a sync function's thread runs on: ctx.cancelled tells it to stop
        raise


def injected() -> tuple[type, ...]:
    """What the framework supplies to a handler (``analyze_function(injected=)``): a Context, and
    ``Depends(...)`` markers once ``mcpio.Depends`` was imported — a function cannot declare one
    before, and a server without dependencies never loads ``_deps``."""
    deps = sys.modules.get("mcpio._server._deps")
    return (Context,) if deps is None else cast("tuple[type, ...]", deps.INJECTED)


_pool: Workers | None = None  # _threads.WORKERS, from the first call that needs a thread


def _workers() -> Workers:
    """The worker pool: loaded at the first call that runs in a thread, not at start-up
    (it and ``threading`` are ~5 M instructions of a cold start, and the first answer needs neither)."""
    global _pool
    from ._threads import WORKERS

    _pool = WORKERS
    return WORKERS


def _exited(exc: BaseException) -> RuntimeError:
    """What a call that raised SystemExit or KeyboardInterrupt fails with (as worker threads do)."""
    return RuntimeError(f"the handler raised {type(exc).__name__}: {exc}")


def _cancelled_error() -> type[BaseException]:
    import asyncio  # loaded by then: a loop runs the call (not at import: _stdio answers first)

    return asyncio.CancelledError


class _Inline:
    """The ``Tool.on_loop`` of a tool that always runs inline (``inline=True``): like its
    :class:`Speed`, it says whether the tool runs on the event loop now, and it always does."""

    __slots__ = ()
    inline = True


_INLINE = _Inline()


class _FromSignature:
    """A tool attribute that is, until set, its signature's attribute of the same name, read once
    and then kept as the tool's own. Unlike ``functools.cached_property`` it stores the value with
    ``setattr``, not through ``__dict__``, which in CPython would give the tool a materialized dict
    and slow every later attribute read of it (~3k instructions per HTTP tools/call)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, tool: Any, owner: type | None = None) -> Any:
        if tool is None:
            return self
        value = getattr(tool.sig, self.name)
        setattr(tool, self.name, value)
        return value


class _ParamHeaders:
    """``Tool.param_headers``: the ``Mcp-Param-*`` headers the tool's input schema declares
    (``_protocol._http.param_headers``), read by the HTTP app on every modern ``tools/call``
    (not per call). Made on first read and kept as the tool's own, as
    :class:`_FromSignature`; a tool's schema is fixed once it is made (a tool registered again is
    a new Tool)."""

    def __get__(self, tool: Any, owner: type | None = None) -> Any:
        if tool is None:
            return self
        from .._protocol._http import param_headers  # once per tool, over HTTP only (not at start-up)

        value = param_headers(tool.input_schema)
        tool.param_headers = value
        return value


class Tool:
    """A registered tool. Build with :meth:`from_function`."""

    # Catalog shaping (_catalog): the item's tags; for an item mounted from another server, that
    # server (whose lifespan value and completer serve it) and the item's name or URI there.
    tags: frozenset[str] = frozenset()
    owner: Any = None
    source: str | None = None
    links: Any = None  # mounted under a namespace: the _catalog.Links of its results' resource URIs
    # relay(server, session, event) -> Relayed | None: a tool that forwards its calls answers one by
    # callback, no task (Session's relay; _answer.relayed); None: never, or not this one.
    relay: Callable[[Any, Any, Any], Any] | None = None

    def __init__(
        self,
        fn: Callable[..., Any],
        sig: FunctionSignature,
        *,
        name: str,
        title: str | None,
        description: str | None,
        annotations: dict[str, Any] | None,
        icons: list[dict[str, Any]] | None,
        meta: dict[str, Any] | None,
        structured_output: bool,
        input_schema: dict[str, Any] | None = None,
        inline: bool | None = None,
        max_result_bytes: Any = ...,
        task_support: str = "forbidden",
        task_after: float | None = 0.0,
        heartbeat: Any = ...,
        timeout: float | None = None,
    ) -> None:
        self.timeout = self.check_timeout(timeout)  # seconds the call may take (the module docstring)
        if timeout is not None and inline is True:
            raise ValueError(
                f"tool {name}: inline=True cannot be combined with timeout= (a call on the event loop cannot be stopped)"
            )
        if sig.provided:  # Depends(...) parameters: an async function resolving them (_deps), decided here
            from ._deps import wrap

            fn, sig = wrap(fn, sig, name, False if timeout is not None else inline)
        # A StateHandle parameter (a function's, not a schema-defined tool's): opened or minted per call.
        if any(f[1] is HANDLE_TYPE for f in getattr(sig, "_fields", ())):
            from ._session_state import wrap as opening

            fn, sig = opening(fn, sig, name, inline is True)
        self.fn = fn
        check_heartbeat(heartbeat, allow_default=True)
        self.heartbeat = heartbeat  # ... = the server's setting
        if task_support not in TASK_SUPPORT:
            raise ValueError(f"task_support must be one of {', '.join(TASK_SUPPORT)}, not {task_support!r}")
        if task_after is not None and not (isinstance(task_after, (int, float)) and task_after >= 0):
            raise ValueError(
                f"task_after must be seconds >= 0 or None (the function calls ctx.start_task()), not {task_after!r}"
            )
        self.task_support = task_support  # tasks extension (_tasks): forbidden / optional / required
        self.task_after = task_after
        check_max_result_bytes(max_result_bytes, allow_default=True)
        self.max_result_bytes = max_result_bytes  # ... = the server's setting
        self.sig = sig
        # What tools/list shows: the schema from the signature (input_schema below), or one given
        # as is (any JSON Schema 2020-12, e.g. with $defs, allOf, if/then/else); arguments are
        # still bound and validated by the signature.
        if input_schema is not None:
            self.input_schema = input_schema
        if description is not None:  # else the docstring's (description below)
            self.description = description
        check_name(name)  # after the options: a lambda with a bad option hears of the option first
        self.name = name
        self.title = title
        self.annotations = annotations
        self.icons = icons
        self.meta = meta
        self.structured_output = structured_output and sig.output_schema is not None
        if inline not in (None, True, False):
            raise ValueError(f"inline must be True, False or None (adaptive), not {inline!r}")
        # inline: True = always on the event loop; False = always on worker threads; None
        # (default) = adaptive for a sync function without a Context parameter (_inline).
        self.inline = inline is True
        adaptive = inline is None and not sig.is_async and not sig.injected and timeout is None
        self.speed = Speed(name) if adaptive else None  # a timed tool stays on worker threads: it can be left
        # None when a call may wait (an async function, a Context parameter, a task tool, worker
        # threads only), else whether the tool runs on the event loop now (its .inline): always
        # (inline=True), or as its adaptive record says (_answer.sync_tool reads it).
        static = not sig.is_async and not sig.injected and task_support == "forbidden" and timeout is None
        self.on_loop: _Inline | Speed | None = (_INLINE if self.inline else self.speed) if static else None
        self._definitions: dict[str, dict[str, Any]] = {}

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool = True,
        input_schema: dict[str, Any] | None = None,
        inline: bool | None = None,
        max_result_bytes: Any = ...,
        task_support: str = "forbidden",
        task_after: float | None = 0.0,
        heartbeat: Any = ...,
        timeout: float | None = None,
    ) -> Tool:
        sig = analyze_function(fn, injected=injected(), content_types=CONTENT_TYPES + (ToolResult,), name=name)
        return cls(
            fn,
            sig,
            name=name or sig.name,
            title=title,
            description=description or None,
            annotations=annotations,
            icons=icons,
            meta=meta,
            structured_output=structured_output,
            input_schema=input_schema,
            inline=inline,
            max_result_bytes=max_result_bytes,
            task_support=task_support,
            task_after=task_after,
            heartbeat=heartbeat,
            timeout=timeout,
        )

    @classmethod
    def from_schema(
        cls,
        handler: Callable[[dict[str, Any], Context], Any],
        *,
        name: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None = None,
        description: str | None = None,
        **options: Any,
    ) -> Tool:
        """A tool defined by its JSON Schemas rather than a function's signature (a generated
        tool, e.g. one per OpenAPI operation): ``async def handler(arguments, ctx)`` receives the
        arguments object as the client sent it (checked only for being an object with the
        schema's ``required`` keys: the schema is the handler's to enforce). It returns a value
        for ``outputSchema`` (an object) or a :class:`ToolResult`. Register it with
        ``server.add_tool(tool)``; other ``options`` as :meth:`from_function`."""
        from ._schema_tool import SchemaSignature

        sig = cast("FunctionSignature", SchemaSignature(name, input_schema, output_schema))  # the same duck
        fields: dict[str, Any] = {"title": None, "annotations": None, "icons": None, "meta": None}
        fields.update(options, structured_output=output_schema is not None, input_schema=input_schema)
        return cls(handler, sig, name=name, description=description, **fields)

    # The signature's schema and docstring description are made on first read (tools/list, or
    # anything else that reads them), not at registration (cold start); __init__ sets
    # them when given.
    if TYPE_CHECKING:
        input_schema: dict[str, Any]
        description: str | None
        param_headers: dict[str, tuple[str, ...]]
    else:
        input_schema = _FromSignature()
        description = _FromSignature()
        param_headers = _ParamHeaders()

    def definition(self, rules: Rules) -> dict[str, Any]:
        """The ``Tool`` object for tools/list in ``rules.version`` (cached)."""
        d = self._definitions.get(rules.version)
        if d is not None:
            return d
        d = {"name": self.name}
        if self.title is not None and rules.titles:
            d["title"] = self.title
        if self.description:
            d["description"] = self.description
        d["inputSchema"] = self.input_schema
        if self.structured_output and rules.structured_output:
            d["outputSchema"] = self.sig.output_schema
        if self.annotations and rules.tool_annotations:
            d["annotations"] = self.annotations
        if self.icons and rules.icons:
            d["icons"] = self.icons
        if self.task_support != "forbidden" and rules.core_tasks:  # 2025-11-25 execution.taskSupport
            d["execution"] = {"taskSupport": self.task_support}
        if self.meta and rules.titles:  # _meta on Tool: 2025-06-18+
            d["_meta"] = self.meta
        self._definitions[rules.version] = d
        return d

    async def call(self, arguments: Any, ctx: Context, rules: Rules) -> dict[str, Any]:
        """Run the tool; always returns a CallToolResult dict (errors as isError results)."""
        try:
            kwargs = self.sig.bind(arguments)
        except ArgumentError as exc:
            return self._refused(exc)
        interval = self.beats(ctx.server)
        try:
            if interval and (ctx.progress_token is not None or ctx._task is not None):
                call = _with_heartbeat(
                    invoke(self.sig, self.fn, kwargs, ctx, self.inline, self.speed, self.owner), ctx, interval
                )
            else:
                call = invoke(self.sig, self.fn, kwargs, ctx, self.inline, self.speed, self.owner)
            if self.timeout is not None:
                from ._timeouts import within  # (after _tools: it builds on ToolError)

                call = within(call, self.timeout, self.name)
            value = await call
        except Exception as exc:
            return self._failed(exc, ctx.session, rules)
        return self._answer(value, ctx.server, ctx.session, rules)

    def _refused(self, exc: ArgumentError) -> dict[str, Any]:
        """A call's arguments refused: -32602 for an unknown one (a misspelt name is the caller's:
        with did-you-mean), else an isError result; the tool named as the caller called it (a
        mounted copy's served name, not its function's)."""
        message = str(exc if exc.tool in (None, self.name) else type(exc)(exc.detail, self.name))
        if isinstance(exc, UnknownArguments):
            raise InvalidParams(message) from None
        return _error_result(message)

    def beats(self, server: Any) -> float | None:
        """Seconds between the heartbeats of a call of this tool on ``server`` that carries a progress
        token or runs as a task (its own ``heartbeat=``, else the server's), or None (off)."""
        return self.heartbeat if self.heartbeat is not ... else getattr(server, "heartbeat", None)

    @staticmethod
    def check_timeout(value: Any) -> float | None:
        """``timeout`` (of a tool, or ``Server(tool_timeout=)``): seconds > 0, or None (no limit)."""
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0):
            raise ValueError(f"timeout must be seconds > 0 or None (no limit), not {value!r}")
        return value

    def call_sync(self, arguments: Any, server: Any, session: Any, rules: Rules) -> dict[str, Any]:
        """:meth:`call` for a call that cannot wait (``_answer.sync_tool``: a sync tool run on the
        loop, no Context, no task), as a plain function: the same answers. No heartbeat: none
        could be sent while the function holds the loop."""
        try:
            kwargs = self.sig.bind(arguments, False)  # only unpacked below: no copy
        except ArgumentError as exc:
            return self._refused(exc)
        try:
            speed = self.speed  # None when inline=True (False: never called here)
            value = speed.call(self.fn, kwargs) if speed is not None else self.fn(**kwargs)
        except Exception as exc:
            return self._failed(exc, session, rules)
        except (SystemExit, KeyboardInterrupt) as exc:  # as invoke
            return self._failed(_exited(exc), session, rules)
        return self._answer(value, server, session, rules)

    def outcome(self, value: Any, exc: Exception | None, server: Any, session: Any, rules: Rules) -> dict[str, Any]:
        """The CallToolResult of a call that returned ``value`` or raised ``exc``, as :meth:`call`
        makes it (an :class:`MCPError` ``exc`` is raised: the JSON-RPC error)."""
        return self._answer(value, server, session, rules) if exc is None else self._failed(exc, session, rules)

    def _failed(self, exc: Exception, session: Any, rules: Rules) -> dict[str, Any]:
        """The isError result for an exception of the call, or raise it: a JSON-RPC error."""
        if isinstance(exc, ToolError):
            return _error_result(str(exc))
        if isinstance(exc, (ClientCapabilityError, ClientRequestError, RequestTimeout, ResourceNotFound)):
            if isinstance(exc, ClientCapabilityError) and rules.missing_capability_is_error:
                raise exc  # 2026-07-28: -32021 with data.requiredCapabilities
            # What the tool asked of the client (or of ctx.read_resource) failed: an execution
            # error the model should see, not a protocol error (spec: server/tools §Error Handling).
            return _error_result(f"Error executing tool {self.name}: {exc.message}")
        if isinstance(exc, MCPError):
            raise exc  # raised on purpose: answer with exactly this JSON-RPC error
        if isinstance(exc, SafePathError):  # a refused path: the client's mistake, one line in the log
            log.warning("tool %s refused a path: %s", self.name, exc)
            return _error_result(f"Error executing tool {self.name}: {exc}")
        log.exception("tool %s raised %s", self.name, _summary(exc), exc_info=exc)
        return _exception_result(self.name, exc, _expose(session))

    def _answer(self, value: Any, server: Any, session: Any, rules: Rules) -> dict[str, Any]:
        """The CallToolResult for the function's ``value``, its text capped (module docstring)."""
        try:
            limit = self.max_result_bytes
            if limit is ...:
                limit = getattr(server, "max_result_bytes", DEFAULT_MAX_RESULT_BYTES)
            links = self.links  # mounted under a namespace: links rewritten, then in the era's shape
            made = self.result(value, rules if links is None else links.made_under(rules))
            result = made if links is None else links.result(made, rules)
            return result if limit is None else cap_text(result, limit)  # no call without a cap
        except OutputMismatch as exc:  # the tool broke its own outputSchema: its author's bug, said so
            log.error("tool %s broke its return annotation (a bug in the tool): %s", self.name, exc)
            shown = str(exc) if _expose(session) else f"OutputMismatch ({HIDDEN_DETAIL})"
            return _error_result(
                f"Error executing tool {self.name}: its result does not match its output schema: {shown}"
            )
        except Exception as exc:  # e.g. a value that cannot be serialized
            log.exception("tool %s returned a value that cannot be sent", self.name)
            return _exception_result(self.name, exc, _expose(session))

    def result(self, value: Any, rules: Rules) -> dict[str, Any]:
        kind = type(value)
        if (
            (kind is int or kind is str)
            and kind is self.sig.output_type
            and self.structured_output
            and rules.structured_output
        ):
            # spec 2025-06-18 server/tools §Structured Content (below): the common scalar, built
            # at once
            return {
                "content": [{"type": "text", "text": value if kind is str else str(value)}],
                "structuredContent": {"result": value},
            }
        if isinstance(value, ToolResult):
            content = value.content  # an empty list is no blocks (the default), not the text "[]"
            out: dict[str, Any] = {
                "content": [] if type(content) is list and not content else to_blocks(content, rules)
            }
            if value.structured_content is not None and rules.structured_output:
                out["structuredContent"] = value.structured_content
            if value.is_error:
                out["isError"] = True
            if value.meta:
                out["_meta"] = value.meta
            return out
        if self.structured_output and rules.structured_output:
            # spec 2025-06-18 server/tools §Structured Content: the structured result, and for
            # backwards compatibility its serialized JSON in a text block (a string result is
            # its own text, not a JSON string literal).
            structured = self.sig.to_structured(value)
            raw = structured["result"] if self.sig.wrap_output else structured
            text = raw if isinstance(raw, str) else json_text(raw)
            return {"content": [{"type": "text", "text": text}], "structuredContent": structured}
        return {"content": to_blocks(value, rules)}


async def _with_heartbeat(call: Any, ctx: Context, interval: float) -> Any:
    """Await ``call`` while telling the client, every ``interval`` seconds, that it still runs:
    ``notifications/progress`` with the seconds elapsed (a client that resets its timeout on
    progress then waits for a long tool instead of giving up at its timeout), or the task's
    statusMessage. It stops for good once the tool reports progress of its own."""
    import asyncio

    beat = asyncio.get_running_loop().create_task(_beat(ctx, interval))
    try:
        return await call
    finally:
        beat.cancel()


async def _beat(ctx: Context, interval: float) -> None:
    import asyncio

    started = time.monotonic()
    sent: float | None = None
    while True:
        await asyncio.sleep(interval)
        if ctx._last_progress != sent:  # the tool reports progress itself: leave it to the tool
            return
        sent = round(time.monotonic() - started, 3)
        with contextlib.suppress(Exception):  # a heartbeat that cannot be sent is not the tool's failure
            await ctx.report_progress(sent, None, f"still working ({sent:.1f} s)")


def check_heartbeat(value: Any, allow_default: bool = False) -> None:
    if value is None or (allow_default and value is ...):
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"heartbeat must be seconds > 0 or None (off), not {value!r}")


def check_task_options(ttl: float, poll_interval: float, max_tasks: int, max_per_requester: int | None) -> None:
    """The task store's options (``Server(task_ttl=, task_poll_interval=, max_tasks=,
    max_tasks_per_requester=)``), checked by the Server at construction, before its store exists."""
    if ttl <= 0 or poll_interval <= 0 or max_tasks < 1:
        raise ValueError("task_ttl and task_poll_interval must be > 0 and max_tasks at least 1")
    if max_per_requester is not None and max_per_requester < 1:
        raise ValueError(f"max_tasks_per_requester must be at least 1, not {max_per_requester!r}")


def _expose(session: Any) -> bool:
    """Whether this request's client may read unexpected exceptions' text (``expose_errors``)."""
    return bool(getattr(session, "expose_errors", True))


def _exception_result(tool: str, exc: BaseException, detail: bool = True) -> dict[str, Any]:
    """The isError result for an exception: its type and text (only its type without ``detail``:
    see ``Server(expose_errors=…)``), never a traceback."""
    if not detail:
        return _error_result(f"Error executing tool {tool}: {type(exc).__name__} ({HIDDEN_DETAIL})")
    return _error_result(f"Error executing tool {tool}: {_summary(exc)}")


def _summary(exc: BaseException) -> str:
    """``Type: message`` (CPython's "Did you mean" kept), on one line for the log and the result."""
    try:
        text = exception_text(exc)
    except Exception:  # an exception whose __str__ fails still gets its type reported
        text = "(its message could not be read)"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}
