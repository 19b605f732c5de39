// mcpio inspect: the page. Plain JavaScript, no build step, no dependencies.
// Everything the server sends is untrusted: it is rendered with textContent / DOM nodes only,
// never as HTML (and the Content-Security-Policy forbids inline and foreign scripts anyway).
"use strict";

// The page's API calls are authorized by an HttpOnly, SameSite=Strict cookie, set when the
// one-time link that `mcpio inspect` opened was used, and by the page key, handed over once in
// this address's fragment (#k=…) and kept in localStorage, which (unlike cookies) is private to
// this port: a server on another port of 127.0.0.1 that got the cookie cannot use the API.
const KEY = (() => {
  const m = /^#k=([0-9a-f]+)$/.exec(location.hash);
  if (m) { localStorage.setItem("mcpio-inspect-key", m[1]); history.replaceState(null, "", "/"); }
  return localStorage.getItem("mcpio-inspect-key") || "";
})();
const $ = (sel) => document.querySelector(sel);
const MAX_TEXT = 100000;      // characters of one text block shown before "show all"
const MAX_WIRE_ROWS = 2000;   // wire rows kept in the page
const MAX_FORM_PROPS = 200;   // an object with more properties is edited as JSON
const MAX_DEPTH = 6;          // nesting (and $ref) depth rendered as form fields

// The panels in other files (tasks.js, skills.js) register here: { connected(), event(ev), disconnected() }.
const panels = [];
const state = { info: null, tools: [], resources: [], templates: [], prompts: [], history: [], seq: 0, initialSeq: 0,
                asks: new Map(), lastOut: new Map(), calls: 0 };

// ---------------------------------------------------------------- DOM helpers
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = String(v);
    else if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}
function clear(node) { while (node.firstChild) node.firstChild.remove(); return node; }
function toast(text) { const t = $("#toast"); t.textContent = text; t.hidden = false; clearTimeout(toast.timer); toast.timer = setTimeout(() => { t.hidden = true; }, 6000); }
function short(text, n) { text = String(text); return text.length > n ? text.slice(0, n) + "…" : text; }

// ---------------------------------------------------------------- API
async function api(op, body) {
  const r = await fetch("/api/" + op, { method: "POST", headers: { "Content-Type": "application/json", "X-Inspector-Key": KEY },
                                        body: JSON.stringify(body || {}) });
  let data;
  try { data = await r.json(); } catch (e) { throw new Error(`the inspector answered ${r.status} with no JSON`); }
  if (!r.ok && !data.error) data = { error: { message: `HTTP ${r.status}` } };
  return data;
}
function errorText(err) { return err ? `${err.message}${err.code !== undefined ? ` (code ${err.code})` : ""}` : ""; }

async function request(method, params, opts) {
  const started = performance.now();
  const data = await api("request", { method, params, call: opts && opts.call });
  const entry = { method, params, ms: Math.round(performance.now() - started) };
  if (data.error) entry.error = data.error; else entry.result = data.result;
  if (!(opts && opts.quiet)) addHistory(entry);
  if (data.error) { const e = new Error(errorText(data.error)); e.rpc = data.error; throw e; }
  return data.result;
}
async function listAll(method, key) {
  const items = []; let cursor;
  for (let page = 0; page < 100; page++) {
    const result = await request(method, cursor ? { cursor } : {}, { quiet: true });
    items.push(...(result[key] || []));
    cursor = result.nextCursor; if (!cursor) break;
  }
  return items;
}

// ---------------------------------------------------------------- connection
function setStatus(text, cls) { const s = $("#status"); s.textContent = text; s.className = "status " + (cls || ""); }
function parseHeaders(text) {
  const out = {};
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const i = line.indexOf(":");
    if (i <= 0) throw new Error(`a header line needs "Name: value": ${line}`);
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
async function connect(ev) {
  if (ev) ev.preventDefault();
  let headers;
  try { headers = parseHeaders($("#headers").value); } catch (e) { setStatus(e.message, "err"); return; }
  setStatus("connecting…");
  // a view belongs to the connection it was opened on (ext-apps §Visibility): closed (its requests
  // refused at once, its frame removed once it answered ui/resource-teardown) before another one
  if (window.AppView) AppView.close("the inspector connects to a server again");
  state.info = null;
  $("#connect").disabled = true;
  const data = await api("connect", { target: $("#target").value, era: $("#era").value, headers });
  $("#connect").disabled = false;
  if (data.error) { setStatus("could not connect: " + errorText(data.error), "err"); showServer(null, data.error); return; }
  if (!state.info) await connected(data);  // else the "connected" event came first
}
async function connected(info) {
  state.info = info;
  state.loginPending = false;
  const si = info.serverInfo || {};
  setStatus(`connected: ${si.name || "?"} ${si.version || ""} · ${info.protocolVersion} (${info.era})`, "ok");
  $("#disconnect").disabled = false;
  showServer(info);
  for (const p of panels) if (p.connected) p.connected();
  await refreshAll();
}
async function disconnect() {
  if (window.AppView) await AppView.close("the inspector disconnected");
  await api("disconnect");
  state.info = null; $("#disconnect").disabled = true; setStatus("not connected");
  for (const id of ["#tool-list", "#resource-list", "#prompt-list", "#tool-panel", "#resource-panel", "#prompt-panel"]) clear($(id));
  for (const p of panels) if (p.disconnected) p.disconnected();
}
function caps() { return (state.info && state.info.capabilities) || {}; }
async function refreshAll() {
  const c = caps();
  const jobs = [];
  // a server without the capability has none (an empty state); a list that fails says why in its place
  const listFailed = (sel, what) => (e) => { clear($(sel)).append(el("li", { class: "error-text list-error", text: `Could not list ${what}: ${e.message}` })); throw e; };
  if (c.tools) jobs.push(listAll("tools/list", "tools").then((t) => { state.tools = t; renderTools(); }, listFailed("#tool-list", "the tools")));
  else { state.tools = []; renderTools(); }
  if (c.resources) {
    jobs.push(Promise.all([listAll("resources/list", "resources"), listAll("resources/templates/list", "resourceTemplates")])
      .then(([r, t]) => { state.resources = r; state.templates = t; renderResources(); }, listFailed("#resource-list", "the resources")));
  } else { state.resources = []; state.templates = []; renderResources(); }
  if (c.prompts) jobs.push(listAll("prompts/list", "prompts").then((p) => { state.prompts = p; renderPrompts(); }, listFailed("#prompt-list", "the prompts")));
  else { state.prompts = []; renderPrompts(); }
  const results = await Promise.allSettled(jobs);
  for (const p of panels) if (p.listed) p.listed();
  const failed = results.filter((r) => r.status === "rejected").map((r) => r.reason.message);
  if (failed.length) toast("Some lists failed: " + failed.join("; "));
}

function showServer(info, error) {
  const box = clear($("#server-info"));
  if (error) { box.append(el("p", { class: "error-text", text: "Could not connect: " + errorText(error) })); return; }
  if (!info) return;
  const si = info.serverInfo || {};
  box.append(
    el("h2", { text: `${si.title || si.name || "server"} ${si.version || ""}` }),
    el("p", {}, "Protocol version ", el("code", { text: info.protocolVersion || "?" }), ` (${info.era} era) · target `, el("code", { text: info.target || "" })),
  );
  if (info.instructions) box.append(el("h3", { text: "Instructions" }), el("pre", { text: info.instructions }));
  box.append(el("h3", { text: "Capabilities" }), tree(info.capabilities || {}), el("h3", { text: "Server info" }), tree(si));
}

// ---------------------------------------------------------------- JSON tree (collapsible)
function tree(value, depth) {
  depth = depth || 0;
  const wrap = el("div", { class: "tree" });
  const empty = (v) => v !== null && typeof v === "object" && Object.keys(v).length === 0;
  if (value === null || typeof value !== "object" || empty(value)) { wrap.append(el("code", { text: JSON.stringify(value) })); return wrap; }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of entries.slice(0, 500)) {
    if (v !== null && typeof v === "object" && !empty(v)) {  // an empty one is a leaf: {} or []
      const d = el("details", depth < 1 ? { open: true } : {}, el("summary", { text: `${k}: ${Array.isArray(v) ? `[${v.length}]` : "{…}"}` }));
      d.addEventListener("toggle", () => { if (d.open && d.childNodes.length === 1) d.append(tree(v, depth + 1)); }, { once: false });
      if (depth < 1) d.append(tree(v, depth + 1));
      wrap.append(d);
    } else wrap.append(el("div", {}, el("span", { text: `${k}: ` }), el("code", { text: short(JSON.stringify(v), 2000) })));
  }
  if (entries.length > 500) wrap.append(el("div", { class: "muted", text: `… ${entries.length - 500} more` }));
  return wrap;
}

// ---------------------------------------------------------------- forms from JSON Schema
function deref(schema, root, depth) {
  let n = 0;
  while (schema && typeof schema === "object" && typeof schema.$ref === "string" && schema.$ref.startsWith("#/") && n < 16) {
    let node = root;
    for (const part of schema.$ref.slice(2).split("/")) node = node && node[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    schema = node || {}; n++;
  }
  return schema || {};
}
function typeOf(schema) {
  let t = schema.type;
  if (Array.isArray(t)) t = t.find((x) => x !== "null");
  if (!t && schema.enum) t = "enum";
  if (!t && schema.properties) t = "object";
  return t;
}
// field(name, schema, root, required, depth) -> { node, read() } ; read() returns {value} | {missing} or throws Error(message)
function field(name, schema, root, required, depth) {
  schema = deref(schema, root);
  const options = schema.anyOf || schema.oneOf;  // Optional[X]: X with null allowed, shown as X (empty: not sent)
  if (Array.isArray(options) && options.length === 2) {
    const real = options.map((o) => deref(o, root)).filter((o) => o.type !== "null");
    if (real.length === 1) {
      const merged = { ...real[0] };
      for (const k of ["title", "description", "default"]) if (k in schema && schema[k] !== null) merged[k] = schema[k];
      schema = merged;
    }
  }
  const t = schema.enum ? "enum" : typeOf(schema);
  const label = el("label", { class: required ? "req" : "", text: (schema.title || name) + (t ? ` (${t})` : "") });
  const hint = schema.description ? el("div", { class: "hint", text: schema.description }) : null;
  const msg = el("div", { class: "invalid" });
  const box = el("div", { class: "field" }, label, hint);
  let input, read;
  const fail = (text) => { msg.textContent = text; input && input.classList.add("bad"); throw new Error(`${name}: ${text}`); };
  const ok = () => { msg.textContent = ""; input && input.classList.remove("bad"); };
  if (t === "enum") {
    input = el("select", { name }, el("option", { value: "", text: "—" }), ...schema.enum.map((v, i) => el("option", { value: String(i), text: JSON.stringify(v) })));
    if ("default" in schema) { const i = schema.enum.findIndex((v) => JSON.stringify(v) === JSON.stringify(schema.default)); if (i >= 0) input.value = String(i); }
    read = () => { ok(); if (input.value === "") { if (required) fail("required"); return { missing: true }; } return { value: schema.enum[Number(input.value)] }; };
  } else if (t === "boolean") {
    input = el("input", { type: "checkbox", name }); input.checked = schema.default === true;
    read = () => ({ value: input.checked });
  } else if (t === "string" || t === "number" || t === "integer") {
    input = el("input", { name, type: t === "string" ? "text" : "text", inputmode: t === "string" ? undefined : "decimal", size: 40,
                          placeholder: schema.default !== undefined ? `default: ${JSON.stringify(schema.default)}` : (schema.format || "") });
    read = () => {
      ok();
      const raw = input.value;
      if (raw === "") { if (required && schema.default === undefined) fail("required"); return { missing: true }; }
      if (t === "string") {
        if (schema.minLength !== undefined && raw.length < schema.minLength) fail(`at least ${schema.minLength} characters`);
        if (schema.maxLength !== undefined && raw.length > schema.maxLength) fail(`at most ${schema.maxLength} characters`);
        if (schema.pattern) { let re; try { re = new RegExp(schema.pattern, "u"); } catch (e) { re = null; } if (re && !re.test(raw)) fail(`must match ${schema.pattern}`); }
        return { value: raw };
      }
      const num = Number(raw);
      if (!Number.isFinite(num)) fail(`not a number: ${raw}`);
      if (t === "integer" && !Number.isInteger(num)) fail("must be a whole number");
      if (schema.minimum !== undefined && num < schema.minimum) fail(`must be ≥ ${schema.minimum}`);
      if (schema.maximum !== undefined && num > schema.maximum) fail(`must be ≤ ${schema.maximum}`);
      if (schema.exclusiveMinimum !== undefined && num <= schema.exclusiveMinimum) fail(`must be > ${schema.exclusiveMinimum}`);
      if (schema.exclusiveMaximum !== undefined && num >= schema.exclusiveMaximum) fail(`must be < ${schema.exclusiveMaximum}`);
      return { value: num };
    };
  } else if (t === "object" && depth < MAX_DEPTH && Object.keys(schema.properties || {}).length <= MAX_FORM_PROPS && schema.properties) {
    const sub = objectForm(schema, root, depth + 1);
    input = null;
    box.append(el("fieldset", {}, sub.node));
    read = () => { const v = sub.read(); if (Object.keys(v).length === 0 && !required) return { missing: true }; return { value: v }; };
  } else if (t === "array" && ["string", "number", "integer"].includes(typeOf(deref(schema.items || {}, root)))) {
    // a list of strings or numbers: comma-separated values, or a JSON array
    const it = typeOf(deref(schema.items || {}, root));
    input = el("input", { name, type: "text", size: 40, placeholder: `comma-separated ${it}s, or a JSON array${schema.default !== undefined ? "; default " + JSON.stringify(schema.default) : ""}` });
    read = () => {
      ok();
      const raw = input.value.trim();
      if (raw === "") { if (required && schema.default === undefined) fail("required"); return { missing: true }; }
      let v;
      if (raw.startsWith("[")) { try { v = JSON.parse(raw); } catch (e) { fail("not a valid JSON array: " + e.message); } if (!Array.isArray(v)) fail("must be a JSON array"); }
      else v = raw.split(",").map((s) => s.trim()).filter((s) => s !== "");
      if (it !== "string") v = v.map((x) => { const n = Number(x); if (typeof x === "string" && (x === "" || !Number.isFinite(n))) fail(`not a number: ${x}`); if (it === "integer" && !Number.isInteger(n)) fail(`not a whole number: ${x}`); return n; });
      if (schema.minItems !== undefined && v.length < schema.minItems) fail(`at least ${schema.minItems} items`);
      if (schema.maxItems !== undefined && v.length > schema.maxItems) fail(`at most ${schema.maxItems} items`);
      return { value: v };
    };
  } else {
    // other arrays, anyOf/oneOf, free-form objects, deep or huge schemas: JSON
    input = el("textarea", { name, rows: 3, cols: 50, placeholder: `JSON${t ? " " + t : ""}${schema.default !== undefined ? ", default " + JSON.stringify(schema.default) : ""}` });
    read = () => {
      ok();
      if (input.value.trim() === "") { if (required && schema.default === undefined) fail("required"); return { missing: true }; }
      let v; try { v = JSON.parse(input.value); } catch (e) { fail("not valid JSON: " + e.message); }
      if (t === "array" && !Array.isArray(v)) fail("must be a JSON array");
      if (t === "object" && (v === null || typeof v !== "object" || Array.isArray(v))) fail("must be a JSON object");
      return { value: v };
    };
  }
  if (input) box.append(input);
  box.append(msg);
  return { node: box, read, input };
}
function objectForm(schema, root, depth) {
  schema = deref(schema || {}, root || schema);
  root = root || schema;
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  const node = el("div");
  const names = Object.keys(props);
  if (names.length > MAX_FORM_PROPS) {
    const f = field("arguments", { type: "object" }, root, false, MAX_DEPTH);
    node.append(el("p", { class: "muted", text: `${names.length} properties: edit the arguments as JSON.` }), f.node);
    return { node, read: () => { const r = f.read(); return r.missing ? {} : r.value; }, fields: {} };
  }
  const fields = {};
  for (const name of names) { fields[name] = field(name, props[name], root, required.has(name), depth || 0); node.append(fields[name].node); }
  const read = () => {
    const out = {}; const errors = [];
    for (const [name, f] of Object.entries(fields)) {
      try { const r = f.read(); if (!r.missing) out[name] = r.value; } catch (e) { errors.push(e.message); }
    }
    if (errors.length) throw new Error(errors.join("; "));
    return out;
  };
  return { node, read, fields };
}

// ---------------------------------------------------------------- completion
function attachCompletion(input, ref, argName, others) {
  if (!caps().completions || !input) return;
  const list = el("datalist", { id: "dl-" + Math.random().toString(36).slice(2) });
  input.setAttribute("list", list.id); input.after(list);
  let timer;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      try {
        const params = { ref, argument: { name: argName, value: input.value } };
        const ctx = others ? others() : null; if (ctx && Object.keys(ctx).length) params.context = { arguments: ctx };
        const r = await request("completion/complete", params, { quiet: true });
        clear(list); for (const v of ((r.completion || {}).values || []).slice(0, 100)) list.append(el("option", { value: v }));
      } catch (e) { /* completion is a convenience */ }
    }, 200);
  });
}

// ---------------------------------------------------------------- results
function renderContent(blocks) {
  const out = el("div");
  for (const b of blocks || []) {
    if (b.type === "text") out.append(longText(b.text || ""));
    else if (b.type === "image") out.append(el("img", { class: "content", alt: "image from the server", src: `data:${safeMime(b.mimeType, "image/")};base64,${b.data}` }));
    else if (b.type === "audio") out.append(el("audio", { class: "content", controls: true, src: `data:${safeMime(b.mimeType, "audio/")};base64,${b.data}` }));
    else if (b.type === "resource_link") out.append(el("div", {}, "resource link: ", el("code", { text: b.uri }), b.name ? ` (${b.name})` : "",
      el("button", { type: "button", text: "read", onclick: () => readResource(b.uri, $("#tool-panel")) })));
    else if (b.type === "resource") {
      const r = b.resource || {};
      out.append(el("div", {}, el("div", {}, "embedded resource ", el("code", { text: r.uri || "" }), r.mimeType ? ` (${r.mimeType})` : ""),
        r.text !== undefined ? longText(r.text) : el("div", { class: "muted", text: `binary, ${Math.round((r.blob || "").length * 0.75)} bytes` })));
    } else out.append(el("div", {}, el("span", { class: "muted", text: `${b.type || "unknown"} block:` }), tree(b)));
  }
  return out;
}
function safeMime(m, prefix) { return typeof m === "string" && m.startsWith(prefix) && /^[\w.+\/-]+$/.test(m) ? m : prefix + "octet-stream"; }
function longText(text) {
  const pre = el("pre", { text: text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text });
  const box = el("div", { class: "text-block" }, pre);
  if (text.length > MAX_TEXT) {
    const more = el("button", { type: "button", text: `show all ${text.length} characters`, onclick: () => { pre.textContent = text; more.remove(); } });
    box.append(more);
  } else if (/(^|\n)(#{1,6} |[-*] |\d+\. |```)|\*\*|`[^`]+`/.test(text)) {
    let md = null;
    const toggle = el("button", { type: "button", class: "md-toggle", text: "as markdown", onclick: () => {
      md = md || markdown(text);
      const showing = md.isConnected;
      if (showing) { md.replaceWith(pre); toggle.textContent = "as markdown"; } else { pre.replaceWith(md); toggle.textContent = "as text"; }
    } });
    box.append(toggle);
  }
  return box;
}
// A small Markdown renderer that builds DOM nodes (never HTML strings): headings, paragraphs,
// fenced code, lists, quotes, **bold**, *italic*, `code`, and [links](url) shown as text + URL.
function inline(text) {
  const span = el("span");
  const re = /(\*\*[^*]+\*\*|\*[^*]+\*|`[^`]+`|\[[^\]]+\]\([^)\s]+\))/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    span.append(text.slice(last, m.index));
    const t = m[0];
    if (t.startsWith("**")) span.append(el("strong", { text: t.slice(2, -2) }));
    else if (t.startsWith("`")) span.append(el("code", { text: t.slice(1, -1) }));
    else if (t.startsWith("[")) { const i = t.indexOf("]("); span.append(el("span", { class: "md-link", text: t.slice(1, i) }), el("small", { class: "muted", text: ` <${t.slice(i + 2, -1)}>` })); }
    else span.append(el("em", { text: t.slice(1, -1) }));
    last = m.index + t.length;
  }
  span.append(text.slice(last));
  return span;
}
function markdown(text) {
  const root = el("div", { class: "markdown" });
  const lines = text.split("\n");
  let list = null, para = [];
  const flush = () => { if (para.length) { root.append(el("p", {}, inline(para.join(" ")))); para = []; } };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      flush(); list = null;
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      root.append(el("pre", { text: code.join("\n") }));
      continue;
    }
    const h = /^(#{1,6}) (.*)$/.exec(line);
    const li = /^\s*(?:[-*]|\d+\.) (.*)$/.exec(line);
    if (h) { flush(); list = null; root.append(el("h" + Math.min(6, h[1].length + 2), {}, inline(h[2]))); }
    else if (li) { flush(); if (!list) { list = el(/^\s*\d/.test(line) ? "ol" : "ul"); root.append(list); } list.append(el("li", {}, inline(li[1]))); }
    else if (line.startsWith("> ")) { flush(); list = null; root.append(el("blockquote", {}, inline(line.slice(2)))); }
    else if (!line.trim()) { flush(); list = null; }
    else { list = null; para.push(line); }
  }
  flush();
  return root;
}
function renderResult(result) {
  const box = el("div", { class: "result" + (result.isError ? " error" : "") });
  if (result.isError) box.append(el("p", { class: "error-text", text: "The tool reported an error (isError: true)" }));
  box.append(renderContent(result.content));
  if (result.structuredContent !== undefined) box.append(el("h4", { text: "structuredContent" }), tree(result.structuredContent));
  return box;
}

// ---------------------------------------------------------------- tools
function listItems(ul, items, onpick, empty) {
  clear(ul);
  for (const item of items) {
    const li = el("li", { tabindex: 0, "data-name": item.name || item.uri || item.uriTemplate }, el("span", { text: item.title || item.name || item.uri || item.uriTemplate }),
      el("small", { text: short(item.description || item.uri || item.uriTemplate || "", 140) }));
    li.addEventListener("click", () => { for (const x of ul.children) x.classList.remove("active"); li.classList.add("active"); onpick(item); });
    ul.append(li);
  }
  if (!items.length) ul.append(el("li", { class: "muted empty", text: empty || "none" }));
}
function renderTools() { listItems($("#tool-list"), state.tools, showTool, "This server has no tools."); }
function showTool(tool) {
  const panel = clear($("#tool-panel"));
  const form = objectForm(tool.inputSchema || {}, tool.inputSchema || {}, 0);
  for (const [name, f] of Object.entries(form.fields)) attachCompletion(f.input, { type: "ref/tool", name: tool.name }, name);
  const progress = el("progress", { max: 1, value: 0, hidden: true });
  const progressText = el("span", { class: "muted" });
  const result = el("div", { class: "call-result" });
  const cancel = el("button", { type: "button", text: "Cancel", disabled: true });
  const copy = el("button", { type: "button", text: "Copy as mcpio call" });
  const call = el("button", { type: "submit", text: "Call" });
  const f = el("form", { class: "tool-form" }, form.node, call, " ", cancel, " ", copy, " ", progress, " ", progressText);
  panel.append(el("h2", { text: tool.title || tool.name }), el("code", { text: tool.name }),
    tool.description ? el("p", { text: tool.description }) : null, f, result);
  if (tool.annotations) panel.append(el("details", {}, el("summary", { text: "annotations" }), tree(tool.annotations)));
  if (tool.outputSchema) panel.append(el("details", {}, el("summary", { text: "output schema" }), tree(tool.outputSchema)));
  panel.append(el("details", {}, el("summary", { text: "input schema" }), tree(tool.inputSchema || {})));
  copy.addEventListener("click", async () => {
    let args; try { args = form.read(); } catch (e) { toast(e.message); return; }
    const data = await api("command", { name: tool.name, arguments: args });
    try { await navigator.clipboard.writeText(data.command); toast("copied: " + data.command); } catch (e) { toast(data.command); }
  });
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    let args;
    try { args = form.read(); } catch (e) { clear(result).append(el("p", { class: "error-text", text: "Not sent: " + e.message })); return; }
    const id = "call-" + (++state.calls);
    clear(result).append(el("p", { class: "muted", text: "calling…" }));
    progress.hidden = false; progress.removeAttribute("value"); progressText.textContent = ""; call.disabled = true; cancel.disabled = false;
    state.progress = { id, bar: progress, text: progressText };
    cancel.onclick = () => api("cancel", { call: id });
    const view = window.AppView ? AppView.forCall(tool, args) : null;  // an MCP Apps view: appview.js
    try {
      const r = await request("tools/call", { name: tool.name, arguments: args }, { call: id });
      clear(result).append(renderResult(r));
      if (view) view.result(r);
    } catch (e) {
      clear(result).append(el("p", { class: "error-text", text: (e.rpc ? "Error: " : "Failed: ") + e.message }));
      if (view) view.cancelled(e.message);
    } finally { call.disabled = false; cancel.disabled = true; progress.hidden = true; }
  });
}

// ---------------------------------------------------------------- resources and prompts
function renderResources() {
  const items = [...state.resources, ...state.templates.map((t) => ({ ...t, template: true }))];
  listItems($("#resource-list"), items, showResource, "This server has no resources or resource templates.");
}
function templateVars(tpl) { const vars = []; for (const m of tpl.matchAll(/\{([+#./;?&]?)([^}]+)\}/g)) for (const v of m[2].split(",")) vars.push(v.replace(/\*$|:\d+$/, "")); return vars; }
function expand(tpl, values) { return tpl.replace(/\{([+#./;?&]?)([^}]+)\}/g, (_, op, names) => names.split(",").map((n) => encodeURIComponent(values[n.replace(/\*$|:\d+$/, "")] || "")).join(",")); }
async function readResource(uri, where) {
  const out = el("div", {}, el("p", { class: "muted", text: "reading " + uri + "…" }));
  where.append(out);
  try {
    const r = await request("resources/read", { uri });
    clear(out).append(el("h4", { text: uri }), renderContent((r.contents || []).map((c) => ({ type: "resource", resource: c }))));
  } catch (e) { clear(out).append(el("p", { class: "error-text", text: e.message })); }
}
function showResource(item) {
  const panel = clear($("#resource-panel"));
  state.shownResource = item.template ? null : item.uri;
  panel.append(el("h2", { text: item.title || item.name || item.uri || item.uriTemplate }), el("code", { text: item.uri || item.uriTemplate }),
    item.description ? el("p", { text: item.description }) : null);
  if (item.template) {
    const inputs = {};
    const box = el("div");
    for (const v of templateVars(item.uriTemplate)) {
      inputs[v] = el("input", { name: v, size: 30 });
      box.append(el("div", { class: "field" }, el("label", { text: v }), inputs[v]));
      attachCompletion(inputs[v], { type: "ref/resource", uri: item.uriTemplate }, v,
        () => Object.fromEntries(Object.entries(inputs).filter(([k, i]) => k !== v && i.value).map(([k, i]) => [k, i.value])));
    }
    const values = () => Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value]));
    panel.append(box, el("button", { type: "button", text: "Read", onclick: () => readResource(expand(item.uriTemplate, values()), panel) }));
    return;
  }
  panel.append(el("button", { type: "button", text: "Read", onclick: () => readResource(item.uri, panel) }));
  if ((caps().resources || {}).subscribe) {
    panel.append(" ", el("button", { type: "button", text: "Subscribe", onclick: async () => {
      const data = await api("subscribe", { uri: item.uri });
      toast(data.error ? errorText(data.error) : "subscribed to " + item.uri + ": updates are read again as they arrive");
    } }));
  }
}
function renderPrompts() { listItems($("#prompt-list"), state.prompts, showPrompt, "This server has no prompts."); }
function showPrompt(prompt) {
  const panel = clear($("#prompt-panel"));
  const schema = { type: "object", properties: {}, required: [] };
  for (const a of prompt.arguments || []) { schema.properties[a.name] = { type: "string", description: a.description, title: a.title }; if (a.required) schema.required.push(a.name); }
  const form = objectForm(schema, schema, 0);
  for (const [name, f] of Object.entries(form.fields)) attachCompletion(f.input, { type: "ref/prompt", name: prompt.name }, name);
  const out = el("div");
  const f = el("form", {}, form.node, el("button", { type: "submit", text: "Get prompt" }));
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    let args; try { args = form.read(); } catch (e) { clear(out).append(el("p", { class: "error-text", text: "Not sent: " + e.message })); return; }
    try {
      const r = await request("prompts/get", { name: prompt.name, arguments: args });
      clear(out);
      if (r.description) out.append(el("p", { text: r.description }));
      for (const m of r.messages || []) out.append(el("h4", { text: m.role }), renderContent(Array.isArray(m.content) ? m.content : [m.content]));
    } catch (e) { clear(out).append(el("p", { class: "error-text", text: e.message })); }
  });
  panel.append(el("h2", { text: prompt.title || prompt.name }), prompt.description ? el("p", { text: prompt.description }) : null, f, out);
}

// ---------------------------------------------------------------- the server's requests (sampling, elicitation)
function updateAskCount() { const b = $("#ask-count"); b.textContent = String(state.asks.size); b.hidden = state.asks.size === 0; }
function showAsk(ev) {
  const box = el("div", { class: "ask", id: "ask-" + ev.id });
  const answer = async (result) => { await api("answer", { id: ev.id, result }); };
  if (ev.method === "elicitation/create") {
    const p = ev.params || {};
    box.append(el("h3", { text: "The server asks for input (elicitation)" }), el("p", { text: p.message || "" }));
    if (p.mode === "url") {
      box.append(el("p", {}, "It asks you to open: ", el("code", { text: p.url || "" })),
        el("button", { type: "button", text: "Done (accept)", onclick: () => answer({ action: "accept" }) }));
    } else {
      const form = objectForm(p.requestedSchema || {}, p.requestedSchema || {}, 0);
      const f = el("form", {}, form.node, el("button", { type: "submit", text: "Accept" }));
      f.addEventListener("submit", (e) => { e.preventDefault(); let content; try { content = form.read(); } catch (err) { toast(err.message); return; } answer({ action: "accept", content }); });
      box.append(f);
    }
    box.append(el("button", { type: "button", text: "Decline", onclick: () => answer({ action: "decline" }) }), " ",
      el("button", { type: "button", text: "Cancel", onclick: () => answer({ action: "cancel" }) }));
  } else if (ev.method === "sampling/createMessage") {
    const p = ev.params || {};
    box.append(el("h3", { text: "The server asks for an LLM completion (sampling)" }));
    if (p.systemPrompt) box.append(el("p", { class: "muted", text: "system: " + p.systemPrompt }));
    for (const m of p.messages || []) box.append(el("h4", { text: m.role }), renderContent(Array.isArray(m.content) ? m.content : [m.content]));
    const reply = el("textarea", { rows: 4, cols: 60, name: "reply", placeholder: "the assistant's reply" });
    const model = el("input", { name: "model", value: "human-in-the-loop", size: 24 });
    box.append(el("div", { class: "field" }, el("label", { text: "Reply" }), reply), el("div", { class: "field" }, el("label", { text: "Model" }), model),
      el("button", { type: "button", text: "Send reply", onclick: () => answer({ role: "assistant", content: { type: "text", text: reply.value }, model: model.value, stopReason: "endTurn" }) }), " ",
      el("button", { type: "button", text: "Reject", onclick: () => answer({ error: "the user rejected the sampling request" }) }));
  }
  box.append(el("details", {}, el("summary", { text: "raw request" }), tree(ev.params || {})));
  $("#asks").append(box);
  state.asks.set(ev.id, box); updateAskCount();
  if (!$("#tab-asks").classList.contains("active")) toast("The server is asking you something: see Requests");
}

// ---------------------------------------------------------------- OAuth login (the server asked for a token)
function showLogin(text) {
  const box = clear($("#server-info"));
  box.append(el("h2", { text: "The server asks you to log in" }));
  for (const line of text.split("\n")) {
    const url = line.trim();
    if (/^https?:\/\/\S+$/.test(url)) {  // only http(s) links: the URL comes from the server's metadata
      box.append(el("p", {}, el("a", { id: "login-link", href: url, target: "_blank", rel: "noopener noreferrer", text: "Log in" }),
        " ", el("code", { text: short(url, 200) })));
    } else if (url) box.append(el("p", { text: url }));
  }
  box.append(el("p", { class: "muted", text: "After the login the inspector connects by itself; the token is kept for next time (mcpio logout URL forgets it)." }));
  selectTab("server");
  setStatus("waiting for the login…");
}

// ---------------------------------------------------------------- roots
function rootRow(r) {
  const uri = el("input", { name: "root-uri", size: 50, value: r.uri || "file:///" }), name = el("input", { name: "root-name", size: 20, value: r.name || "" });
  const row = el("div", { class: "field root" }, uri, " ", name, " ", el("button", { type: "button", text: "remove", onclick: () => row.remove() }));
  return row;
}
async function saveRoots() {
  const roots = [...document.querySelectorAll("#roots .root")].map((row) => {
    const [u, n] = row.querySelectorAll("input"); const r = { uri: u.value }; if (n.value) r.name = n.value; return r;
  });
  const data = await api("roots", { roots });
  toast(data.error ? errorText(data.error) : `roots saved (${roots.length})`);
}

// ---------------------------------------------------------------- logs, wire, history
function addLog(params) {
  const lvl = String(params.level || "info");
  const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
  const li = el("li", { class: "lvl-" + lvl.replace(/\W/g, "") }, `[${lvl}]${params.logger ? " " + params.logger : ""} `, short(data, 5000));
  $("#logs").append(li);
  while ($("#logs").children.length > 2000) $("#logs").firstChild.remove();
}
function summary(msg) {
  if (!msg || typeof msg !== "object") return "";
  if (msg.method) return msg.method + (msg.params && msg.params.name ? " " + msg.params.name : "") + (msg.id !== undefined ? ` #${msg.id}` : "");
  if (msg.error) return `error #${msg.id}: ${msg.error.message}`;
  return `result #${msg.id}`;
}
function addWire(ev) {
  let msg = null; try { msg = JSON.parse(ev.frame); } catch (e) { /* cut or not JSON */ }
  let delta = "";
  if (msg && msg.id !== undefined) {
    const key = JSON.stringify(msg.id);
    if (msg.method && ev.direction === "out") state.lastOut.set(key, ev.time);
    else if (!msg.method && ev.direction === "in" && state.lastOut.has(key)) { delta = Math.round((ev.time - state.lastOut.get(key)) * 1000); state.lastOut.delete(key); }
  }
  const text = short(ev.frame, 300) + (ev.cut ? ` (cut: ${ev.size} characters)` : "");
  const cell = el("td", { class: "msg", text, title: "click to expand" });
  cell.addEventListener("click", () => { clear(cell); if (msg) cell.append(tree(msg)); else cell.append(el("pre", { text: ev.frame })); }, { once: true });
  const actions = el("td");
  if (msg && msg.method === "tools/call" && ev.direction === "out" && msg.params) {
    actions.append(el("button", { type: "button", text: "mcpio call", onclick: async () => {
      const data = await api("command", { name: msg.params.name, arguments: msg.params.arguments || {} });
      try { await navigator.clipboard.writeText(data.command); toast("copied: " + data.command); } catch (e) { toast(data.command); }
    } }));
  }
  const row = el("tr", { "data-search": (ev.frame || "").slice(0, 20000).toLowerCase() },
    el("td", { text: new Date(ev.time * 1000).toISOString().slice(11, 23) }),
    el("td", { class: "dir-" + ev.direction, text: ev.direction === "out" ? "→" : "←", title: ev.direction === "out" ? "sent to the server" : "from the server" }),
    el("td", {}, el("strong", { text: summary(msg) + " " }), cell), el("td", { text: String(delta) }), actions);
  const body = $("#wire tbody");
  row.hidden = !matches(row);
  body.append(row);
  while (body.children.length > MAX_WIRE_ROWS) body.firstChild.remove();
}
function matches(row) { const f = $("#wire-filter").value.toLowerCase(); return !f || row.dataset.search.includes(f); }
function addHistory(entry) {
  state.history.push(entry);
  const toolError = !entry.error && entry.result && entry.result.isError === true;  // a tool call that failed
  const firstText = toolError ? ((entry.result.content || []).find((c) => c && c.type === "text") || {}).text : "";
  const outcome = entry.error ? el("span", { class: "error-text", text: "error: " + entry.error.message })
    : toolError ? el("span", { class: "error-text", text: "tool error" + (firstText ? ": " + short(firstText, 200) : " (isError: true)") })
    : "ok";
  const li = el("li", { class: entry.error || toolError ? "failed" : "" }, el("code", { text: entry.method }), " ", short(JSON.stringify(entry.params || {}), 200), ` · ${entry.ms} ms · `,
    outcome, " ",
    el("button", { type: "button", text: "re-run", onclick: () => request(entry.method, entry.params).then(() => toast("re-ran " + entry.method), (e) => toast(e.message)) }));
  $("#history").append(li);
}
async function exportTest() {
  const data = await api("export", { history: state.history });
  const box = $("#export-source");
  if (data.error) { toast(errorText(data.error)); return; }
  box.value = data.source; box.hidden = false;
  const a = el("a", { href: URL.createObjectURL(new Blob([data.source], { type: "text/x-python" })), download: "test_inspector_session.py" });
  document.body.append(a); a.click(); a.remove();
}

// ---------------------------------------------------------------- events from the inspector
function onEvent(ev) {
  state.seq = Math.max(state.seq, ev.seq);
  for (const p of panels) if (p.event) p.event(ev);
  if (ev.kind === "wire") addWire(ev);
  else if (ev.kind === "log") addLog(ev.params || {});
  else if (ev.kind === "progress" && state.progress && state.progress.id === ev.call) {
    const p = state.progress;
    if (ev.total) { p.bar.max = ev.total; p.bar.value = ev.progress; } else p.bar.removeAttribute("value");
    p.text.textContent = `${ev.progress}${ev.total ? " / " + ev.total : ""}${ev.message ? " · " + ev.message : ""}`;
  } else if (ev.kind === "ask") showAsk(ev);
  else if (ev.kind === "login" && (ev.seq > state.initialSeq || state.loginPending)) showLogin(ev.text || "");  // not an old one
  else if (ev.kind === "asked") { const box = state.asks.get(ev.id); if (box) box.remove(); state.asks.delete(ev.id); updateAskCount(); }
  else if (ev.kind === "notification") {
    if (/list_changed$/.test(ev.method || "") && state.info) refreshAll();
    if (ev.method === "notifications/resources/updated") {
      const uri = (ev.params || {}).uri || "";
      toast("resource updated: " + uri);
      if (state.shownResource === uri) readResource(uri, clear($("#resource-panel")));  // live: read it again
    }
  } else if (ev.kind === "connected" && !state.info && ev.seq > state.initialSeq) connected(ev.info);  // e.g. after a login
  else if (ev.kind === "disconnected" && state.info) { setStatus("disconnected (the server went away?)", "err"); }
}
async function poll() {
  for (;;) {
    try {
      const r = await fetch(`/api/events?after=${state.seq}`, { headers: { "X-Inspector-Key": KEY } });
      if (r.status === 403) { setStatus("refused: open the link that mcpio inspect printed (it works once; restart mcpio inspect for a new one)", "err"); return; }
      const data = await r.json();
      for (const ev of data.events || []) onEvent(ev);
    } catch (e) {
      setStatus("the inspector is not answering (stopped?)", "err");
      await new Promise((res) => setTimeout(res, 2000));
    }
  }
}

// ---------------------------------------------------------------- start
function selectTab(name) {
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll(".tab")) s.classList.toggle("active", s.id === "tab-" + name);
}
async function start() {
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => selectTab(b.dataset.tab));
  $("#connect-form").addEventListener("submit", connect);
  $("#disconnect").addEventListener("click", disconnect);
  $("#wire-filter").addEventListener("input", () => { for (const row of $("#wire tbody").children) row.hidden = !matches(row); });
  $("#wire-clear").addEventListener("click", () => clear($("#wire tbody")));
  $("#log-clear").addEventListener("click", () => clear($("#logs")));
  $("#log-level").addEventListener("change", async (e) => {
    try { await request("logging/setLevel", { level: e.target.value }); toast("log level: " + e.target.value); } catch (err) { toast(err.message); }
  });
  $("#root-add").addEventListener("click", () => $("#roots").append(rootRow({})));
  $("#roots-save").addEventListener("click", saveRoots);
  $("#export").addEventListener("click", exportTest);
  const initial = await api("initial");
  if (initial.error) { setStatus(errorText(initial.error), "err"); return; }
  $("#target").value = initial.target || "";
  $("#era").value = initial.era || "auto";
  $("#headers").value = Object.entries(initial.headers || {}).map(([k, v]) => `${k}: ${v}`).join("\n");
  state.initialSeq = initial.seq || 0;
  poll();
  if (initial.connected && initial.info) await connected(initial.info);
  else if (initial.connecting) { state.loginPending = true; setStatus("connecting… (a login may be waiting)"); }
  else if (initial.target) await connect();
}
document.addEventListener("DOMContentLoaded", start);  // after every deferred script (the panels) ran
