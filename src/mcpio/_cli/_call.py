"""``mcpio call TARGET TOOL k=v …``: call one tool, its arguments checked against its schema first.

The tool list is fetched before the call: an unknown tool is refused with "did you mean" and
the list of tools; ``k=v`` values are coerced by the tool's ``inputSchema`` (``k:=JSON`` for
raw JSON, ``--args`` for one JSON object) and then checked (unknown names, missing required
ones, wrong types), with the tool's signature in the message. Nothing is sent when the check
fails (exit status 2); ``--no-validate`` sends the arguments as they are. ``--`` ends the options:
``mcpio call -- TARGET TOOL k=v`` (a tool name starting with ``-`` is taken only after it).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from typing import Any

from .._shown import shown
from ._exit import FAILED, OK, USAGE, CLIFailure, UsageError
from ._output import clean, content_text, dump_json, err, error, to_json
from ._signature import argument_problems, signature, suggest
from ._targets import parse_pairs


def _progress(args: Any) -> Any:
    if not (args.verbose or sys.stderr.isatty()):
        return None

    def show(progress: float, total: float | None, message: str | None) -> None:
        of = f"/{total:g}" if isinstance(total, (int, float)) else ""
        err(f"progress {progress:g}{of}" + (f" {clean(message, multiline=False)}" if message else ""))

    return show


def _json_arguments(args: Any) -> dict[str, Any]:
    if args.args_json is None:
        return {}
    try:
        arguments = json.loads(args.args_json)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--args is not valid JSON ({exc.msg})") from None
    if not isinstance(arguments, dict):
        raise UsageError("--args must be a JSON object")
    return arguments


def find_tool(tools: Sequence[dict[str, Any]], name: str, target: str) -> dict[str, Any]:
    """The tool called ``name``, or a usage failure naming the close ones and the list."""
    for tool in tools:
        if tool.get("name") == name:
            return tool
    names = [str(t.get("name")) for t in tools]
    listing = ", ".join(clean(n, multiline=False) for n in names[:30]) + (" …" if len(names) > 30 else "")
    raise CLIFailure(
        f"the server has no tool {clean(name, multiline=False)!r}{suggest(name, names)}",
        USAGE,
        f"its tools: {listing}" if names else f"it lists no tools (mcpio list {shown(target)} shows what it has)",
    )


def _check_positionals(args: Any) -> None:
    """A tool name that starts with ``-`` is taken only after ``--``: without it, the name was
    most likely an option put in the wrong place, or a hostile one pasted from elsewhere."""
    if args.tool.startswith("-") and not getattr(args, "end_of_options", False):
        raise UsageError(
            f"the tool name {clean(args.tool, multiline=False)!r} starts with '-', like an option: to call "
            "a tool with such a name, put -- before the positional arguments (mcpio call -- TARGET TOOL KEY=VALUE …)"
        )
    elif args.tool.startswith("-") and " " not in args.target and shutil.which(args.target) is not None:
        # `mcpio call -- python -m pkg TOOL`: the command line was meant as one argument
        err(
            f"mcpio: note: the server is the program {clean(args.target, multiline=False)!r} alone, called "
            f"with the tool {clean(args.tool, multiline=False)!r}; if that belongs to the command, quote "
            f"the command line: mcpio call -- {clean(repr(args.target + ' ' + args.tool + ' …'), multiline=False)} TOOL"
        )
    args.arguments = [a for a in args.arguments if a != "--"]  # some Pythons keep a `--` among them


async def cmd_call(args: Any) -> int:
    from ._main import connect

    _check_positionals(args)
    arguments = _json_arguments(args)
    async with connect(args) as c:
        if args.validate:
            tool = find_tool(await c.list_tools(), args.tool, args.target)
            schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
            shown = clean(signature(args.tool, schema), multiline=False)
            hint = f"usage: {shown}   (nothing was sent; --no-validate sends it anyway)"
            try:
                arguments.update(parse_pairs(args.arguments, schema, tool=args.tool))
            except UsageError as exc:
                raise CLIFailure(str(exc), USAGE, hint) from None
            problems = argument_problems(arguments, schema)
            if problems:
                raise CLIFailure(f"{args.tool}: " + "; ".join(problems), USAGE, hint)
        else:
            arguments.update(parse_pairs(args.arguments, None))
        result = await c.call_tool(args.tool, arguments, on_progress=_progress(args))
    failed = bool(result.get("isError"))
    if args.json:
        dump_json(result)
    else:
        blocks = result.get("content") or []
        texts = [content_text(b) for b in blocks if isinstance(b, dict)]
        if not texts and "structuredContent" in result:
            texts = [to_json(result["structuredContent"])]
        out = "\n".join(texts)
        (sys.stderr if failed else sys.stdout).write(out + ("\n" if out else ""))
        if failed:
            error(f"the tool {clean(args.tool, multiline=False)!r} reported an error (the server's answer is above)")
    return FAILED if failed else OK
