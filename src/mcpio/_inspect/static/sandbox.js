// mcpio inspect: the sandbox proxy of an MCP Apps view (ext-apps specification 2026-01-26,
// §Sandbox proxy). This page runs on the inspector's sandbox origin (another port: another
// origin), framed by the inspector's page only (frame-ancestors). It loads the view's HTML into
// an inner iframe with sandbox="allow-scripts" (no allow-same-origin: the view gets an opaque
// origin) through srcdoc, which inherits this page's Content-Security-Policy (the one built
// from the view's _meta.ui.csp), and relays JSON-RPC messages both ways:
//   host → view: only from window.parent, only from the inspector's origin;
//   view → host: only from the inner frame's window, sent to the inspector's origin only.
// Messages named ui/notifications/sandbox-* are this proxy's own and never relayed (§6). Its
// sandbox-proxy-ready carries the declared origins this page's policy applies (csp: the server
// keeps those that are plain source expressions, _sandbox.allowed_sources), which the host page
// tells the view as hostCapabilities.sandbox.csp.
"use strict";
(() => {
  const HOST = document.documentElement.dataset.host;  // the inspector's origin, set by the server
  const CSP = JSON.parse(document.documentElement.dataset.csp || "{}");  // the origins applied, set by the server
  let inner = null;
  const own = (msg) => typeof msg.method === "string" && msg.method.startsWith("ui/notifications/sandbox-");
  function load(params) {
    inner = document.createElement("iframe");
    inner.setAttribute("sandbox", "allow-scripts");  // a host-sent "sandbox" override is not taken
    inner.setAttribute("title", "MCP App view");
    inner.srcdoc = typeof params.html === "string" ? params.html : "";
    document.body.appendChild(inner);
  }
  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    if (event.source === window.parent && event.origin === HOST) {
      if (msg.method === "ui/notifications/sandbox-resource-ready") { if (!inner) load(msg.params || {}); return; }
      if (!own(msg) && inner && inner.contentWindow) inner.contentWindow.postMessage(msg, "*");  // an opaque origin has no name
    } else if (inner && event.source === inner.contentWindow && event.origin === "null") {
      if (!own(msg)) window.parent.postMessage(msg, HOST);
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: { csp: CSP } }, HOST);
})();
