"""A server whose MCP Apps views probe the inspector's sandbox (tests/inspect/test_inspector_apps_browser.py).

``BEACON`` (an http://127.0.0.1:PORT origin, from the environment) counts the requests it gets.
Each view reports what it could do in its own page (``#out``), for the test to read:

* ``sealed``: a view with no ``_meta.ui.csp`` — its fetch to the beacon must be blocked (the
  spec's restrictive default), it must not reach the inspector's page (``window.top``), its
  ``tools/call`` of a model-only tool must be refused, and so must its call of a tool the server
  does not list (``unlisted``: the host cannot know its visibility), and a message it posts straight to the
  inspector's page (around the sandbox proxy) must be ignored;
* ``loose``: a view whose ``_meta.ui.csp`` (made by hand, as another SDK's server may send it)
  has entries that are no plain source expression: the host tells it (``hostCapabilities.sandbox.csp``)
  the CSP the sandbox applies, without them;
* ``open``: the beacon declared in ``connectDomains`` — its fetch gets through; and it asks the
  host to open a beacon link (``ui/open-link``), which happens only once the user confirms; it
  tells the beacon when the host tears it down (``ui/resource-teardown``), then answers.
"""

import os
from typing import Any

from mcpio import Server

BEACON = os.environ.get("BEACON", "http://127.0.0.1:9")

PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>probe</title></head>
<body><ol id="out"></ol><button id="link">link</button>
<script>
  const BEACON = %(beacon)s, NAME = %(name)s;
  const out = (text) => { const li = document.createElement("li"); li.textContent = text; document.getElementById("out").append(li); };
  let nextId = 1; const pending = new Map();
  function request(method, params) {
    const id = nextId++;
    window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const msg = event.data;
    if (msg && msg.id !== undefined && pending.has(msg.id)) {
      const p = pending.get(msg.id); pending.delete(msg.id);
      msg.error ? p.reject(new Error(msg.error.message)) : p.resolve(msg.result);
    } else if (msg && msg.method === "ui/notifications/tool-result") out("result: " + msg.params.content[0].text);
    else if (msg && msg.method === "ui/resource-teardown") {  // tell the beacon (if allowed), then answer
      fetch(BEACON + "/teardown-" + NAME, { mode: "no-cors" }).catch(() => null)
        .then(() => window.parent.postMessage({ jsonrpc: "2.0", id: msg.id, result: {} }, "*"));
    }
  });
  document.addEventListener("securitypolicyviolation", (e) => out("csp violation: " + e.violatedDirective));
  document.getElementById("link").addEventListener("click", () => {
    request("ui/open-link", { url: BEACON + "/link-" + NAME }).then(() => out("link opened"), (e) => out("link refused: " + e.message));
  });
  (async () => {
    const init = await request("ui/initialize", { appCapabilities: {}, appInfo: { name: "probe", version: "1" }, protocolVersion: "2026-01-26" });
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
    out("origin: " + location.origin);
    out("host context tool: " + init.hostContext.toolInfo.tool.name);
    out("sandbox csp: " + JSON.stringify(init.hostCapabilities.sandbox.csp));
    try { out("top: " + window.top.document.title); } catch (e) { out("top: blocked"); }
    try { await fetch(BEACON + "/fetch-" + NAME, { mode: "no-cors" }); out("fetch: sent"); } catch (e) { out("fetch: blocked"); }
    try { await request("tools/call", { name: "model_only", arguments: {} }); out("model_only: called"); }
    catch (e) { out("model_only: refused: " + e.message); }
    try { await request("tools/call", { name: "unlisted", arguments: {} }); out("unlisted: called"); }
    catch (e) { out("unlisted: refused: " + e.message); }
    window.top.postMessage({ jsonrpc: "2.0", id: 999, method: "tools/call", params: { name: "spoofed", arguments: {} } }, "*");
    out("ready");
  })();
</script></body></html>
"""

server = Server("apps-probe")


def probe(name: str) -> str:
    import json

    return PROBE % {"beacon": json.dumps(BEACON), "name": json.dumps(name)}


server.ui_resource("ui://probe/sealed", html=probe("sealed"), name="sealed_view")
server.ui_resource("ui://probe/open", html=probe("open"), name="open_view", connect_domains=[BEACON])


@server.app_tool(view="ui://probe/sealed")
def sealed() -> str:
    """A view under the default CSP."""
    return "sealed"


@server.app_tool(view="ui://probe/open")
def open_view() -> str:
    """A view that declares the beacon in connectDomains."""
    return "open"


@server.resource("ui://probe/loose", mime_type="text/html;profile=mcp-app")
def loose_view() -> dict[str, Any]:
    """A view's contents with a ``_meta.ui.csp`` that ``ui_resource`` would refuse."""
    bad = ["https://x.example; script-src *", "www.example.com"]
    csp = {"connectDomains": [BEACON, *bad], "resourceDomains": bad}
    return {
        "uri": "ui://probe/loose",
        "mimeType": "text/html;profile=mcp-app",
        "text": probe("loose"),
        "_meta": {"ui": {"csp": csp}},
    }


@server.app_tool(view="ui://probe/loose")
def loose() -> str:
    """A view whose declared CSP the sandbox applies in part."""
    return "loose"


@server.app_tool(view="ui://probe/sealed", visibility=["model"])
def model_only() -> str:
    """Only the model may call this: a view's tools/call of it must be refused by the host."""
    return "model"


@server.tool(meta={"ui": {"visibility": ["model"]}})
def unlisted() -> str:
    """Left out of tools/list (below): the host cannot know its visibility, so a view's call of it must be refused."""
    return "unlisted"


@server.middleware
async def hide_unlisted(request: Any, call_next: Any) -> Any:
    result = await call_next(request)
    if request.method == "tools/list":
        result["tools"] = [t for t in result["tools"] if t["name"] != "unlisted"]
    return result


@server.tool
def spoofed() -> str:
    """Called only if the host took a message that did not come through the sandbox proxy."""
    return "spoofed"


if __name__ == "__main__":
    server.run()
