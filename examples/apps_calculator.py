"""An MCP App: a calculator tool with an interactive view (MCP Apps, io.modelcontextprotocol/ui).

``add`` answers with text, as every tool does, so hosts without apps show the sum; a host that
renders apps shows ``ui://calculator/view`` instead. The view talks to the host over the ``ui/*``
JSON-RPC bridge on postMessage (ext-apps specification 2026-01-26): ``ui/initialize``, then
``ui/notifications/initialized``; it shows the arguments and result the host sends
(``ui/notifications/tool-input``, ``ui/notifications/tool-result``), and its button calls the
app-only tool ``double`` through the host (``tools/call``) and shows the answer. It reports its
size (``ui/notifications/size-changed``), asks the host to open a link (``ui/open-link``: a host
asks the user first) and answers ``ui/resource-teardown``. ``mcpio inspect examples/apps_calculator.py``
shows it: call ``add``.
The ``acme/history`` custom method (an extension of our own) returns the sums computed so far.

Run it: ``python examples/apps_calculator.py`` (stdio) or ``... --http`` (http://127.0.0.1:8000/mcp).
"""

from __future__ import annotations

import sys
from typing import Any

from mcpio import Server

VIEW = """<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>Calculator</title>
<style>
  body { font-family: var(--font-sans, sans-serif); color: var(--color-text-primary, #171717); margin: 12px; }
  #answer { font-size: 1.6em; font-weight: 600; }
</style>
</head>
<body>
  <div>Sum of <span id="input">…</span>: <span id="sum">…</span></div>
  <button id="double">Double it</button>
  <div>Answer: <span id="answer">…</span></div>
  <button id="docs">MCP Apps docs</button> <span id="link"></span>
<script>
  let nextId = 1;
  const pending = new Map();
  let sum = null;
  function request(method, params) {
    const id = nextId++;
    window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  function notify(method, params) {
    window.parent.postMessage({ jsonrpc: "2.0", method, params }, "*");
  }
  function textOf(result) {
    return (result.content || []).filter(c => c.type === "text").map(c => c.text).join(" ");
  }
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;  // only the host speaks to the view
    const msg = event.data;
    if (!msg || msg.jsonrpc !== "2.0") return;
    if (msg.method === "ui/resource-teardown") {  // the host closes the view: nothing to save here
      window.parent.postMessage({ jsonrpc: "2.0", id: msg.id, result: {} }, "*");
    } else if (msg.method === "ui/notifications/tool-input") {
      const args = msg.params.arguments || {};
      document.getElementById("input").textContent = `${args.a} + ${args.b}`;
    } else if (msg.id !== undefined && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      msg.error ? reject(new Error(msg.error.message)) : resolve(msg.result);
    } else if (msg.method === "ui/notifications/tool-result") {
      sum = msg.params.structuredContent ? msg.params.structuredContent.result : null;
      document.getElementById("sum").textContent = textOf(msg.params);
    }
  });
  document.getElementById("double").addEventListener("click", async () => {
    const result = await request("tools/call", { name: "double", arguments: { value: sum || 0 } });
    document.getElementById("answer").textContent = textOf(result);
  });
  document.getElementById("docs").addEventListener("click", async () => {
    const out = document.getElementById("link");
    try {
      await request("ui/open-link", { url: "https://modelcontextprotocol.io/extensions/apps/overview" });
      out.textContent = "opened";
    } catch (e) {
      out.textContent = "not opened: " + e.message;
    }
  });
  (async () => {
    await request("ui/initialize", {
      appCapabilities: {},
      appInfo: { name: "calculator-view", version: "1.0.0" },
      protocolVersion: "2026-01-26",
    });
    notify("ui/notifications/initialized", {});
    const size = () => {  // the content's own size (scrollHeight would never go below the frame's)
      const box = document.documentElement.getBoundingClientRect();
      notify("ui/notifications/size-changed", { width: Math.ceil(box.width), height: Math.ceil(box.height) });
    };
    new ResizeObserver(size).observe(document.documentElement);
  })();
</script>
</body>
</html>
"""

server = Server("calculator", instructions="Adds numbers; hosts with MCP Apps show an interactive view.")
server.ui_resource("ui://calculator/view", html=VIEW, name="calculator_view", prefers_border=True)
history: list[int] = []


@server.app_tool(view="ui://calculator/view", title="Add", annotations={"readOnlyHint": True})
def add(a: int, b: int) -> int:
    """Add two integers."""
    history.append(a + b)
    return a + b


@server.app_tool(view="ui://calculator/view", visibility=["app"], title="Double", annotations={"readOnlyHint": True})
def double(value: int) -> int:
    """Double a number (called by the view's button)."""
    return 2 * value


@server.extension("com.example/history").method("acme/history")
def sums(last: int = 10) -> dict[str, Any]:
    """The last ``last`` sums ``add`` computed."""
    return {"sums": history[-last:] if last > 0 else []}


if __name__ == "__main__":
    server.run("http" if "--http" in sys.argv else "stdio")
