// mcpio inspect: the Skills panel (the io.modelcontextprotocol/skills extension, SEP-2640;
// loaded after app.js, whose helpers it uses). The list is skills/list; a skill's SKILL.md and
// its other files are read through the inspector (POST /api/skill_file), which checks each
// against the skill's entry (size, SHA-256 digest, frontmatter) before the page gets it.
// SKILL.md is rendered by app.js's Markdown renderer (DOM nodes, never HTML) or as plain text.
"use strict";

(() => {
  const EXT = "io.modelcontextprotocol/skills";

  async function load() {
    const ul = $("#skill-list");
    if ((caps().extensions || {})[EXT] === undefined) {
      const why = state.info && state.info.era === "legacy" ? " (skills are an extension of 2026-07-28; this connection is legacy)" : " (it does not declare the skills extension)";
      listItems(ul, [], null, "This server offers no skills" + why + ".");
      return;
    }
    const data = await api("skills");
    if (data.error) { clear(ul).append(el("li", { class: "error-text list-error", text: "Could not list the skills: " + errorText(data.error) })); return; }
    const items = (data.skills || []).map((s) => {
      const fm = s.frontmatter || {};
      return { name: s.uri, title: typeof fm.name === "string" ? fm.name : s.uri, description: typeof fm.description === "string" ? fm.description : "", entry: s };
    });
    listItems(ul, items, show, "This server has no skills.");
  }

  function body(text) {  // SKILL.md without its frontmatter (shown from the verified entry instead)
    const m = /^---\r?\n[\s\S]*?\r?\n---\r?\n?/.exec(text);
    return m ? text.slice(m[0].length) : text;
  }

  async function read(entry, uri, out) {
    clear(out).append(el("p", { class: "muted", text: "reading " + uri + "…" }));
    const data = await api("skill_file", { skill: entry.uri, uri });
    clear(out).append(el("h3", {}, el("code", { text: uri })));
    if (data.error) { out.append(el("p", { class: "error-text", text: errorText(data.error) })); return; }
    const text = data.text || "";
    if (!/\.md$/i.test(uri)) { out.append(longText(text)); return; }
    const md = el("div", { class: "skill-md" }, markdown(uri === entry.uri ? body(text) : text));
    const raw = el("pre", { text });
    const toggle = el("button", { type: "button", class: "md-toggle", text: "as text", onclick: () => {
      if (md.isConnected) { md.replaceWith(raw); toggle.textContent = "as markdown"; } else { raw.replaceWith(md); toggle.textContent = "as text"; }
    } });
    out.append(toggle, md);
  }

  function show(item) {
    const entry = item.entry;
    const panel = clear($("#skill-panel"));
    const out = el("div", { class: "skill-file" });
    const files = el("ul", { class: "skill-files" });
    if (Array.isArray(entry.resources)) {
      for (const f of entry.resources) {
        if (!f || typeof f.uri !== "string") continue;
        files.append(el("li", {}, el("button", { type: "button", class: "link", "data-uri": f.uri, text: f.uri, onclick: () => read(entry, f.uri, out) }),
          el("small", { class: "muted", text: typeof f.size === "number" ? ` ${f.size} bytes` : "" })));
      }
    } else files.append(el("li", { class: "muted", text: "The files are listed on demand (\"resources\": \"dynamic\"): SKILL.md only here." }));
    panel.append(el("h2", { text: item.title }), el("code", { text: entry.uri }), item.description ? el("p", { text: item.description }) : null,
      el("details", {}, el("summary", { text: "frontmatter" }), tree(entry.frontmatter || {})),
      el("h3", { text: "Files" }), files, out);
    read(entry, entry.uri, out);
  }

  // listed: after every listing (a list_changed too), so a skill being read stays in the panel
  panels.push({ connected() { clear($("#skill-panel")); }, listed: load, disconnected() { clear($("#skill-list")); clear($("#skill-panel")); } });
})();
