"""The main demo: spawn examples/quickstart.py over stdio and use every feature it offers.

python examples/demo_client.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcpio import Client, InvalidParams

HERE = Path(__file__).resolve().parent


async def main() -> None:
    logs: list[str] = []
    async with Client.stdio(
        sys.executable, [str(HERE / "quickstart.py")], on_log=lambda p: logs.append(str(p.get("data")))
    ) as client:
        info = client.server_info
        print(
            f"connected to {info['name']} {info['version']} ({client.negotiated_era} era, protocol {client.negotiated_version})"
        )
        print(f"instructions: {client.instructions}")
        for tool in await client.list_tools():
            print(f"  tool {tool['name']:<10} {tool.get('description', '')}")
        result = await client.call_tool("add", {"a": 20, "b": 22})
        print(f"add(20, 22) -> {result['content'][0]['text']}  structured: {result.get('structuredContent')}")
        for tmpl in await client.list_resource_templates():
            print(f"  template {tmpl['uriTemplate']}")
        contents = await client.read_resource("greeting://Ada")
        print(f"greeting://Ada -> {contents[0]['text']}")
        prompt = await client.get_prompt("review_code", {"code": "print('hi')"})
        print(f"prompt review_code -> {prompt['messages'][0]['content']['text']!r}")
        progress: list[str] = []
        total = await client.call_tool(
            "slow_sum", {"values": [1.5, 2.5, 3]}, on_progress=lambda p, t, m: progress.append(f"{p:g}/{t:g}")
        )
        print(f"slow_sum -> {total['content'][0]['text']}  progress: {' '.join(progress)}  logs: {logs}")
        bad = await client.call_tool("add", {"a": "one", "b": 2})
        print(f"add('one', 2) -> isError={bad['isError']}: {bad['content'][0]['text']}")
        try:
            await client.call_tool("multiply", {"a": 6, "b": 7})
        except InvalidParams as exc:
            print(f"multiply -> {type(exc).__name__} {exc.code}: {exc.message}")


if __name__ == "__main__":
    asyncio.run(main())
