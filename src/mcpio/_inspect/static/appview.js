// mcpio inspect: the host side of MCP Apps (ext-apps specification 2026-01-26). A tool whose
// definition has _meta.ui.resourceUri is shown with its view when it is called:
//   * the view's HTML is read with resources/read (through the inspector's session, so it is in
//     the wire view) and handed to the sandbox proxy, a page on the inspector's sandbox origin
//     (another port of 127.0.0.1), framed here with sandbox="allow-scripts allow-same-origin"
//     (§Sandbox proxy, 2); the proxy puts the view in an inner sandbox="allow-scripts" frame under
//     the Content-Security-Policy built from _meta.ui.csp (the server side: _sandbox.py);
//   * this page answers the view's ui/initialize with the host context, sends the call's
//     arguments (tool-input) and result (tool-result, or tool-cancelled) once the view said
//     ui/notifications/initialized, passes the view's tools/call and resources/read to the server
//     (shown in the wire view and the history like any call), applies size changes, asks the
//     user before opening a link (ui/open-link is never followed silently), and sends
//     ui/resource-teardown before the view is closed or replaced.
// Every message is checked: it must come from the sandbox origin AND from the current view's
// frame; messages go to the sandbox origin only. Everything the view sends is shown as text. A
// view's requests go to the server connection it was opened on, never to one made since (app.js
// closes the view before connecting again).
// Uses app.js's globals (el, clear, toast, request, state, api).
"use strict";

const AppView = (() => {
  const MAX_HEIGHT = 2000;       // px: the view's height follows ui/notifications/size-changed up to this
  const TEARDOWN_MS = 3000;      // how long a view may take to answer ui/resource-teardown
  const PROTOCOL = "2026-01-26";
  let sandboxOrigin = null, hostVersion = "";
  let current = null;            // the view on screen
  const live = new Set();        // views not yet removed (one being torn down still answers)
  let nextId = 1;

  async function setup() {
    if (sandboxOrigin) return;
    const initial = await api("initial");
    sandboxOrigin = initial.sandbox || null;
    hostVersion = initial.version || "";
  }
  function viewUri(tool) {
    const meta = (tool && tool._meta) || {};
    const uri = (meta.ui && meta.ui.resourceUri) || meta["ui/resourceUri"];  // the flat form is deprecated
    return typeof uri === "string" && uri.startsWith("ui://") ? uri : null;
  }
  function visibility(tool) {
    const v = tool && tool._meta && tool._meta.ui && tool._meta.ui.visibility;
    return Array.isArray(v) ? v : ["model", "app"];
  }
  function box() {
    let b = document.getElementById("app-view");
    if (!b) {
      b = el("section", { id: "app-view", class: "app-view", hidden: true });
      document.getElementById("tab-tools").append(b);
    }
    return b;
  }

  class View {
    constructor(tool, args) {
      this.tool = tool; this.args = args; this.uri = viewUri(tool);
      this.connection = state.info;  // the server connection it belongs to: its requests go there only
      this.initialized = false; this.closed = false; this.outcome = null;  // {result} | {cancelled}
      this.pending = new Map();  // id → resolve, for the host's own requests (teardown)
      this.frame = el("iframe", { class: "app-frame", title: "view of " + tool.name,
        sandbox: "allow-scripts allow-same-origin", referrerpolicy: "no-referrer" });
      this.frame.style.height = "120px";
      this.notes = el("div", { class: "app-notes" });
      this.info = el("div", { class: "muted" });
      const close = el("button", { type: "button", text: "Close view", onclick: () => this.close("closed by the user") });
      live.add(this);
      this.node = el("div", {}, el("h3", {}, "View of ", el("code", { text: tool.name }), " ", el("code", { text: this.uri })),
        this.info, close, this.notes, this.frame);
    }
    async open() {
      const b = clear(box()); b.hidden = false; b.append(this.node);
      let contents;
      try {
        const r = await request("resources/read", { uri: this.uri });
        contents = (r.contents || []).find((c) => c.uri === this.uri) || (r.contents || [])[0];
        if (!contents) throw new Error("resources/read returned no contents");
      } catch (e) { this.info.textContent = "The view could not be read: " + e.message; return; }
      const ui = (contents._meta && contents._meta.ui) || {};
      this.csp = ui.csp && typeof ui.csp === "object" ? ui.csp : {};
      this.html = typeof contents.text === "string" ? contents.text : decode(contents.blob);
      if (contents.mimeType !== "text/html;profile=mcp-app") this.note("warning", `served as ${contents.mimeType || "no mimeType"}, not text/html;profile=mcp-app`);
      this.perms = Object.keys(ui.permissions || {});
      this.describe();
      if (ui.prefersBorder === false) this.frame.classList.add("borderless");
      if (this.closed) return;
      // host: this page's origin (127.0.0.1 or localhost), the one the proxy lets frame it and talks to
      this.frame.src = `${sandboxOrigin}/proxy?csp=${encodeURIComponent(JSON.stringify(this.csp))}&host=${encodeURIComponent(location.origin)}`;
    }
    // The line under the view: the CSP its sandbox applies (told by sandbox-proxy-ready; until then,
    // pending), and the declared entries the sandbox dropped (no plain source expression).
    describe() {
      const applied = this.applied;
      const dropped = [];
      for (const [key, list] of Object.entries(this.csp)) {
        const kept = (applied && applied[key]) || [];
        for (const entry of Array.isArray(list) ? list : [list]) if (!kept.includes(entry)) dropped.push(`${key}: ${JSON.stringify(entry)}`);
      }
      this.info.textContent = `sandbox origin ${sandboxOrigin} · ` +
        (applied ? `CSP applied: ${JSON.stringify(applied)} (undeclared: denied)` +
          (dropped.length ? ` · declared in _meta.ui.csp, not applied: ${dropped.join(", ")}` : "")
          : "CSP: waiting for the sandbox") +
        (this.perms.length ? ` · permissions asked, not granted: ${this.perms.join(", ")}` : "");
    }
    post(msg) { if (this.frame.contentWindow) this.frame.contentWindow.postMessage(msg, sandboxOrigin); }
    reply(id, result) { this.post({ jsonrpc: "2.0", id, result }); }
    fail(id, code, message) { this.post({ jsonrpc: "2.0", id, error: { code, message } }); }
    notify(method, params) { if (this.initialized && !this.closed) this.post({ jsonrpc: "2.0", method, params }); }
    note(kind, text, ...extra) { this.notes.append(el("div", { class: "app-note " + kind }, el("strong", { text: kind + ": " }), short(text, 2000), ...extra)); }
    result(r) { this.outcome = { result: r }; this.notify("ui/notifications/tool-result", r); }
    cancelled(reason) { this.outcome = { cancelled: reason }; this.notify("ui/notifications/tool-cancelled", { reason }); }
    hostContext() {
      return { toolInfo: { tool: this.tool }, theme: matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
        displayMode: "inline", availableDisplayModes: ["inline"],
        containerDimensions: { width: this.frame.clientWidth, maxHeight: MAX_HEIGHT },
        locale: navigator.language, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone, userAgent: "mcpio inspect",
        platform: "web", deviceCapabilities: { touch: false, hover: true } };
    }
    async onMessage(msg) {
      if (msg.method === undefined) {  // an answer to the host's own request
        const done = this.pending.get(msg.id); if (done) { this.pending.delete(msg.id); done(msg); }
        return;
      }
      const { id, method } = msg;
      const params = msg.params && typeof msg.params === "object" ? msg.params : {};
      if (method === "ui/notifications/sandbox-proxy-ready") {  // from our proxy: the CSP it applies
        this.applied = params.csp && typeof params.csp === "object" ? params.csp : {};
        this.describe();
        this.post({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: { html: this.html, csp: this.applied } });
      } else if (method === "ui/initialize") {
        this.reply(id, { protocolVersion: PROTOCOL, hostInfo: { name: "mcpio inspect", version: hostVersion },
          hostCapabilities: { openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, sandbox: { permissions: {}, csp: this.applied || {} } },
          hostContext: this.hostContext() });
      } else if (method === "ui/notifications/initialized") {
        if (this.initialized) return;
        this.initialized = true;
        this.notify("ui/notifications/tool-input", { arguments: this.args });
        if (this.outcome && this.outcome.result) this.notify("ui/notifications/tool-result", this.outcome.result);
        else if (this.outcome) this.notify("ui/notifications/tool-cancelled", { reason: this.outcome.cancelled });
      } else if (method === "ui/notifications/size-changed") {
        const h = Number(params.height);
        const edges = this.frame.offsetHeight - this.frame.clientHeight;  // the frame's borders are not the view's
        if (Number.isFinite(h) && h >= 0) this.frame.style.height = Math.min(Math.ceil(h), MAX_HEIGHT) + edges + "px";
      } else if (method === "notifications/message") {
        this.note("log", `[${params.level || "info"}] ` + (typeof params.data === "string" ? params.data : JSON.stringify(params.data)));
      } else if (method === "tools/call" || method === "resources/read") {
        if (id === undefined) return;
        if (state.info !== this.connection) {  // §Visibility: the same server connection only
          this.fail(id, -32000, "the inspector is no longer connected to this view's server"); return;
        }
        if (method === "tools/call") {  // §Visibility: the host MUST reject a tool whose visibility lacks "app"
          const target = (state.tools || []).find((t) => t.name === params.name);
          if (!target) {  // its visibility is unknown: refused, never assumed
            this.fail(id, -32000, `the server does not list a tool named ${short(String(params.name), 100)}: views may call listed tools only`); return;
          }
          if (!visibility(target).includes("app")) {
            this.fail(id, -32000, `the tool ${params.name} is not callable by views (its visibility lacks "app")`); return;
          }
        }
        try { this.reply(id, await request(method, params)); }
        catch (e) { this.fail(id, (e.rpc && e.rpc.code) || -32603, e.rpc ? e.rpc.message : e.message); }
      } else if (method === "ui/open-link") {
        this.askOpen(id, params.url);
      } else if (method === "ui/message" || method === "ui/update-model-context") {
        this.note(method === "ui/message" ? "message" : "model context", JSON.stringify(params));
        if (id !== undefined) this.reply(id, {});
      } else if (method === "ui/request-display-mode") {
        if (id !== undefined) this.reply(id, { mode: "inline" });
      } else if (method === "ping") {
        if (id !== undefined) this.reply(id, {});
      } else if (id !== undefined) {
        this.fail(id, -32601, `mcpio inspect does not handle ${short(String(method), 100)} from views`);
      }
    }
    askOpen(id, url) {
      let parsed = null;
      try { parsed = new URL(String(url)); } catch (e) { /* not a URL */ }
      if (!parsed || !["http:", "https:"].includes(parsed.protocol)) { this.fail(id, -32000, "Invalid URL"); return; }
      const href = parsed.href;
      const row = el("div", { class: "app-link" });
      const answer = (open) => {
        row.remove();
        if (open) { window.open(href, "_blank", "noopener,noreferrer"); this.reply(id, {}); }
        else this.fail(id, -32000, "Link opening denied by user");
      };
      row.append("The view asks to open ", el("code", { text: href }), " ",
        el("button", { type: "button", class: "link-open", text: "Open", onclick: () => answer(true) }), " ",
        el("button", { type: "button", class: "link-deny", text: "Deny", onclick: () => answer(false) }));
      this.notes.append(row);
      toast("The view asks to open a link: confirm or deny it below the view");
    }
    async close(reason) {
      if (this.closed) return;
      this.closed = true;
      if (current === this) current = null;
      if (this.initialized && this.frame.contentWindow) {
        const id = "host-" + nextId++;
        const answered = new Promise((resolve) => { this.pending.set(id, resolve); setTimeout(resolve, TEARDOWN_MS); });
        this.post({ jsonrpc: "2.0", id, method: "ui/resource-teardown", params: { reason } });
        await answered;  // §Cleanup: wait for the view's answer (or the time limit) before removing it
      }
      this.node.remove();
      live.delete(this);
      const b = box(); if (!b.firstChild) b.hidden = true;
    }
  }
  function decode(blob) {
    try { return new TextDecoder().decode(Uint8Array.from(atob(blob || ""), (c) => c.charCodeAt(0))); } catch (e) { return ""; }
  }

  window.addEventListener("message", (event) => {
    if (!sandboxOrigin || event.origin !== sandboxOrigin) return;
    const view = [...live].find((v) => v.frame.contentWindow === event.source);
    const msg = event.data;
    if (!view || !msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    if (view.closed && msg.method !== undefined) return;  // a view being torn down may only answer
    view.onMessage(msg);
  });

  return {
    // A call of `tool` starts: its view (if it has one) replaces the one on screen. Returns the
    // view (for .result(r) / .cancelled(reason)) or null.
    forCall(tool, args) {
      if (!viewUri(tool)) return null;
      const previous = current;
      const view = new View(tool, args);
      current = view;
      (async () => {
        if (previous) await previous.close("replaced by a new call");
        await setup();
        if (!sandboxOrigin) { toast("this inspector has no sandbox origin: the view is not shown"); return; }
        await view.open();
      })();
      return view;
    },
    close(reason) { if (current) return current.close(reason); return Promise.resolve(); },
  };
})();
window.AppView = AppView;
