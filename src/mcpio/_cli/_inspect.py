"""``mcpio inspect [TARGET]``: serve the web inspector (``mcpio._inspect``) for TARGET."""

from __future__ import annotations

from typing import Any

from ._gateway import gateway_specs
from ._targets import _env, _headers, client_for


def inspect(args: Any) -> int:
    """Serve the inspector until Ctrl-C; exit 0, or 3 when its port cannot be had."""
    from .._inspect import serve

    specs = gateway_specs(args.target) if args.target else None
    if specs is not None:  # a gateway: each upstream's state first
        import asyncio
        import sys

        from ._gateway import upstream_lines, upstream_states

        text, problems = upstream_lines(asyncio.run(upstream_states(args.target, specs)))
        sys.stderr.write(text + "\n" + "".join(f"PROBLEM: {p}\n" for p in problems))

    def make_client(target: str, **options: Any) -> Any:
        if options.get("timeout") is None:
            options["timeout"] = args.timeout  # none unless --timeout: the page has a Cancel button
        return client_for(target, args, **options)

    return serve(
        make_client,
        target=args.target or None,
        era=args.era,
        headers=_headers(args) or None,
        port=args.port,
        open_browser=args.browser,
        env=_env(args) or None,
        cwd=args.cwd,
    )
