// mcpio inspect: the Tasks panel (loaded after app.js, whose helpers it uses).
// A tool the server runs as a task is started with POST /api/task; the inspector follows the
// task (tasks/get at the server's poll interval) and reports every status as a "task" event.
// A task in input_required asks its question through the inspector's Requests tab (the same
// forms as for a plain call); Cancel sends tasks/cancel. 2025-11-25 (core tasks: the client
// asks, tasks/list exists) and 2026-07-28 (the tasks extension: the server decides).
// Everything the server sends is rendered as text (DOM nodes), never as HTML.
"use strict";

(() => {
  const EXT = "io.modelcontextprotocol/tasks";
  const DONE = new Set(["completed", "failed", "cancelled"]);
  const tasks = new Map();  // taskId -> { taskId, tool, task, result, error }
  let shown = null;         // the taskId in the panel

  const extension = () => ((caps().extensions || {})[EXT] !== undefined);
  const supported = () => !!caps().tasks || extension();
  function taskTools() {
    return state.tools.filter((t) => {
      const support = (t.execution || {}).taskSupport;
      // 2025-11-25 lists it per tool; under the 2026-07-28 extension the server decides for each call
      return support === "optional" || support === "required" || (extension() && support !== "forbidden");
    });
  }
  function renderTools() {
    const empty = !state.info ? "Connect to a server to see its tools."
      : supported() ? "No tool of this server runs as a task (execution.taskSupport)."
      : "This server does not support tasks (it announces neither the tasks capability nor the tasks extension).";
    listItems($("#task-tool-list"), supported() ? taskTools() : [], showStart, empty);
  }

  function showStart(tool) {
    shown = null;
    const panel = clear($("#task-panel"));
    const form = objectForm(tool.inputSchema || {}, tool.inputSchema || {}, 0);
    const out = el("div", { class: "task-start-result" });
    const f = el("form", { class: "task-form" }, form.node, el("button", { type: "submit", text: "Start as task" }));
    f.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      let args;
      try { args = form.read(); } catch (e) { clear(out).append(el("p", { class: "error-text", text: "Not sent: " + e.message })); return; }
      clear(out).append(el("p", { class: "muted", text: "starting…" }));
      const data = await api("task", { name: tool.name, arguments: args });
      if (data.error) { clear(out).append(el("p", { class: "error-text", text: "Error: " + errorText(data.error) })); return; }
      if (data.result) {  // the server answered at once (it made no task for this call)
        clear(out).append(el("p", { class: "muted", text: "The server answered at once (no task was made):" }), renderResult(data.result));
        return;
      }
      update({ taskId: data.task.taskId, tool: tool.name, task: data.task });
      showTask(data.task.taskId);
    });
    panel.append(el("h2", { text: tool.title || tool.name }), el("code", { text: tool.name }),
      tool.description ? el("p", { text: tool.description }) : null,
      el("p", { class: "muted", text: `task support: ${(tool.execution || {}).taskSupport || "decided by the server (tasks extension)"}` }), f, out);
  }

  // one task's latest state: from the start, a "task" event, tasks/list or tasks/get
  function update(ev) {
    const entry = tasks.get(ev.taskId) || { taskId: ev.taskId, tool: ev.tool || "?" };
    if (ev.tool) entry.tool = ev.tool;
    if (ev.task) {
      entry.task = { ...(entry.task || {}), ...ev.task };
      const step = entry.task.status + (entry.task.statusMessage ? " · " + entry.task.statusMessage : "");
      entry.history = entry.history || [];
      if (entry.history[entry.history.length - 1] !== step) entry.history.push(step);  // the way it went
    }
    if (ev.result !== undefined) entry.result = ev.result;
    if (ev.error !== undefined) entry.error = ev.error;
    tasks.set(ev.taskId, entry);
    renderList();
    if (shown === ev.taskId) showTask(ev.taskId);
  }
  const statusOf = (entry) => (entry.task && entry.task.status) || "unknown";
  function renderList() {
    const ul = clear($("#task-list"));
    for (const entry of [...tasks.values()].reverse()) {
      const li = el("li", { tabindex: 0, "data-task": entry.taskId, class: shown === entry.taskId ? "active" : "" },
        el("span", { text: entry.tool + " " }), el("span", { class: "task-status st-" + statusOf(entry).replace(/\W/g, ""), text: statusOf(entry) }),
        el("small", { text: entry.taskId }));
      li.addEventListener("click", () => showTask(entry.taskId));
      ul.append(li);
    }
    if (!tasks.size) ul.append(el("li", { class: "muted empty", text: "No tasks yet: start a tool as a task." }));
  }

  function showTask(id) {
    shown = id;
    for (const li of $("#task-list").children) li.classList.toggle("active", li.dataset.task === id);
    const entry = tasks.get(id);
    const panel = clear($("#task-panel"));
    const task = entry.task || {};
    const status = statusOf(entry);
    panel.append(el("h2", { text: `Task: ${entry.tool}` }), el("code", { text: id }),
      el("p", {}, "Status: ", el("strong", { class: "task-status st-" + status.replace(/\W/g, ""), id: "task-status", text: status }),
        task.statusMessage ? el("span", { class: "muted", text: " · " + task.statusMessage }) : null));
    if (status === "input_required") {
      const box = el("div", { class: "ask task-ask" }, el("h3", { text: "The task waits for your answer" }));
      for (const [key, req] of Object.entries(task.inputRequests || {})) {  // 2026-07-28: the questions are in the task
        const p = (req && req.params) || {};
        box.append(el("p", {}, el("code", { text: `${key}: ${(req && req.method) || "?"}` }), " ", p.message || ""));
      }
      box.append(el("p", { class: "muted", text: "It is in the Requests tab, with a form to answer it." }),
        el("button", { type: "button", text: "Answer in Requests", onclick: () => selectTab("asks") }));
      panel.append(box);
    }
    const actions = el("p");
    if (!DONE.has(status)) {
      actions.append(el("button", { type: "button", text: "Cancel task", onclick: async () => {
        try { await request("tasks/cancel", { taskId: id }); toast("tasks/cancel sent for " + id); } catch (e) { toast(e.message); }
      } }), " ");
    }
    actions.append(el("button", { type: "button", text: "Refresh (tasks/get)", onclick: async () => {
      try { const t = await request("tasks/get", { taskId: id }, { quiet: true }); update({ taskId: id, task: t }); } catch (e) { toast(e.message); }
    } }));
    panel.append(actions);
    panel.append(el("h3", { text: "Status history" }), el("ol", { class: "task-history log" }, ...(entry.history || []).map((h) => el("li", { text: h }))));
    if (entry.result) panel.append(el("h3", { text: "Result" }), renderResult(entry.result));
    if (entry.error) panel.append(el("p", { class: "error-text task-error", text: (status === "cancelled" ? "Cancelled: " : "Error: ") + errorText(entry.error) }));
    panel.append(el("details", {}, el("summary", { text: "the task as the server last sent it" }), tree(task)));
  }

  async function listTasks() {
    if (!state.info) { toast("connect to a server first"); return; }
    if (!caps().tasks) {
      toast(extension() ? "tasks/list does not exist in the 2026-07-28 tasks extension: the tasks started here are listed"
        : "this server does not support tasks");
      return;
    }
    try {
      const found = await listAll("tasks/list", "tasks");
      for (const t of found) update({ taskId: t.taskId, task: t });
      toast(`tasks/list: ${found.length} task${found.length === 1 ? "" : "s"}`);
    } catch (e) { toast("tasks/list failed: " + e.message); }
  }

  panels.push({
    connected() { tasks.clear(); shown = null; clear($("#task-panel")); renderList(); },
    listed: renderTools,
    disconnected() { renderTools(); },
    event(ev) {
      if (ev.kind === "task" && ev.taskId) update(ev);
      else if (ev.kind === "notification" && ev.method === "notifications/tasks/status" && ev.params && tasks.has(ev.params.taskId)) {
        // 2025-11-25 status notifications, on the way only: the end is shown with the result, from the "task" event
        const entry = tasks.get(ev.params.taskId);
        if (!DONE.has(ev.params.status) && !DONE.has(statusOf(entry))) update({ taskId: ev.params.taskId, task: ev.params });
      }
    },
  });
  $("#tasks-list").addEventListener("click", listTasks);
  renderList();
})();
