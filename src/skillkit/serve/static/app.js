"use strict";
// The SkillKit web page: commands go to POST /command, events arrive on /events (SSE).
// Every piece of text from the session is inserted with textContent, never as HTML.
(() => {
  const token = new URLSearchParams(location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  const conversation = $("conversation");
  const requests = $("requests");
  const promptBox = $("prompt");
  const abortButton = $("abort");
  const modeSelect = $("mode");
  const modelInput = $("model");
  const connection = $("connection");
  let counter = 0;
  let running = false;
  let current = null; // the assistant block being streamed
  let thinking = null; // the thinking block being streamed
  const tools = new Map(); // tool_call_id -> {box, status, args, output}
  let syncing = false;
  let held = [];

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function notice(text) {
    $("notice").textContent = text || "";
  }

  function scrollDown() {
    const main = conversation.parentElement;
    main.scrollTop = main.scrollHeight;
  }

  async function send(type, fields) {
    const command = Object.assign({ type: type, id: "web-" + ++counter }, fields || {});
    let response;
    try {
      const reply = await fetch("/command", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: "Bearer " + token },
        body: JSON.stringify(command),
        cache: "no-store",
        credentials: "omit",
      });
      response = await reply.json();
    } catch (error) {
      response = { success: false, error: "the server cannot be reached" };
    }
    if (!response.success) notice(response.error || "the command failed");
    return response;
  }

  // ------------------------------------------------------------------ state

  // ------------------------------------------------------------------ activity

  // What the agent does now and for how long, from the moment a prompt is sent until
  // its run ends: "sending", "waiting for the model", "thinking", "writing",
  // "running NAME".
  const activityLine = $("activity");
  let activityLabel = "";
  let activityStarted = 0;
  let activityTimer = null;

  function drawActivity() {
    const seconds = Math.floor((Date.now() - activityStarted) / 1000);
    activityLine.textContent = "● " + activityLabel + " · " + seconds + "s";
  }

  function activity(label) {
    if (!label) {
      activityLabel = "";
      activityLine.hidden = true;
      if (activityTimer !== null) clearInterval(activityTimer);
      activityTimer = null;
      return;
    }
    if (!activityLabel) activityStarted = Date.now();
    activityLabel = label;
    activityLine.hidden = false;
    drawActivity();
    if (activityTimer === null) activityTimer = setInterval(drawActivity, 250);
  }

  function setRunning(value) {
    running = value;
    abortButton.disabled = !value;
    document.body.dataset.running = value ? "yes" : "no";
  }

  function showUsage(usage, cost) {
    const total = usage && typeof usage.total === "number" ? usage.total : 0;
    $("tokens").textContent = total.toLocaleString("en-US") + " tokens";
    $("cost").textContent = typeof cost === "number" ? "$" + cost.toFixed(4) : "cost n/a";
  }

  let lastState = {};

  // The mode menu offers default, accept edits and plan; bypass only to a session that
  // was started in it (the server refuses to switch to it otherwise).
  function offerModes(mode) {
    if (mode === "bypass" && !modeSelect.querySelector('option[value="bypass"]')) {
      modeSelect.append(element("option", "", "bypass"));
      modeSelect.lastChild.value = "bypass";
    }
  }

  function applyState(state) {
    if (!state) return;
    lastState = state;
    offerModes(state.mode);
    showSession(state);
    if (state.model !== undefined && document.activeElement !== modelInput) {
      modelInput.value = state.model || "";
    }
    if (state.mode) modeSelect.value = state.mode;
    setRunning(Boolean(state.running));
    showUsage(state.usage, state.cost);
    for (const request of state.pending_ui_requests || []) addRequest(request);
  }

  async function refreshState() {
    const response = await send("get_state");
    if (response.success) applyState(response.data);
  }

  async function resync() {
    syncing = true;
    try {
      const messages = await send("get_messages");
      if (messages.success) renderTranscript(messages.data.messages || []);
      await refreshState();
    } finally {
      syncing = false;
      const waiting = held;
      held = [];
      for (const event of waiting) onEvent(event);
    }
  }

  // ------------------------------------------------------------------ transcript

  const SPEAKERS = { user: "You", assistant: "Assistant", note: "Note", command: "Command" };

  function addMessage(role, text) {
    const node = element("article", "message " + role, text);
    node.setAttribute("aria-label", SPEAKERS[role] || role);
    conversation.append(node);
    scrollDown();
    return node;
  }

  // ------------------------------------------------------------------ Markdown

  // The model's Markdown, rendered by the vendored markdown-it with raw HTML off (a tag
  // the model writes stays text), then rebuilt element by element from an allowlist:
  // nothing else, no event handler, no style, and links only to http(s), mailto or a
  // fragment. The parsed document is inert (DOMParser runs no script, loads nothing).
  const markdown = typeof window.markdownit === "function"
    ? window.markdownit({ html: false, linkify: false, typographer: false })
    : null;
  const ALLOWED = new Set([
    "P", "H1", "H2", "H3", "H4", "H5", "H6", "EM", "STRONG", "S", "DEL", "CODE", "PRE",
    "BLOCKQUOTE", "UL", "OL", "LI", "A", "HR", "BR", "TABLE", "THEAD", "TBODY", "TR", "TH",
    "TD",
  ]);
  const SAFE_LINK = /^(https?:|mailto:|#)/i;

  function cleanCopy(source, into) {
    for (const child of Array.from(source.childNodes)) {
      if (child.nodeType === Node.TEXT_NODE) {
        into.append(child.textContent);
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        if (!ALLOWED.has(child.tagName)) {
          cleanCopy(child, into); // unknown element: its text only
          continue;
        }
        const copy = document.createElement(child.tagName.toLowerCase());
        if (child.tagName === "A") {
          const href = child.getAttribute("href") || "";
          if (SAFE_LINK.test(href)) copy.setAttribute("href", href);
          copy.setAttribute("rel", "noopener noreferrer nofollow");
          copy.setAttribute("target", "_blank");
        }
        if (child.tagName === "OL" && /^\d+$/.test(child.getAttribute("start") || "")) {
          copy.setAttribute("start", child.getAttribute("start"));
        }
        if (child.tagName === "TH" || child.tagName === "TD") {
          const align = (child.getAttribute("class") || "").match(/^align-(left|right|center)$/);
          if (align) copy.className = align[0];
        }
        if (child.tagName === "CODE") {
          const language = (child.getAttribute("class") || "").match(/^language-([\w+-]+)$/);
          if (language) copy.className = "language-" + language[1];
        }
        cleanCopy(child, copy);
        into.append(copy);
      }
    }
  }

  function renderMarkdown(node, text) {
    if (!markdown) {
      node.textContent = text;
      return;
    }
    // a table column's alignment comes as a style attribute, which the page's policy
    // refuses: made a class first (the model's own text is escaped, so this only
    // matches what markdown-it wrote)
    const html = markdown.render(text).replace(
      /<(th|td) style="text-align:(left|right|center)">/g, '<$1 class="align-$2">'
    );
    const parsed = new DOMParser().parseFromString(html, "text/html");
    const fragment = document.createDocumentFragment();
    cleanCopy(parsed.body, fragment);
    node.replaceChildren(fragment);
    node.classList.add("markdown");
  }

  function partsText(content) {
    if (typeof content === "string") return content;
    return (content || [])
      .filter((part) => part && part.type === "text")
      .map((part) => part.text)
      .join("");
  }

  // What the user typed for a message SkillKit wrote on their behalf: "/skill:NAME
  // ARGS" for a skill's injected content, "!COMMAND" for the note carrying the output of
  // their own shell command; null for any other text (as the terminal shows them).
  function typedText(text) {
    const skill = /^\s*<skill_content name="([^"]*)"/.exec(text);
    if (skill) {
      const at = text.lastIndexOf("\n\nUser request: ");
      const request = at >= 0 ? text.slice(at + 16).trim() : "";
      const args = request && !request.includes("</skill_content>") ? " " + request : "";
      return "/skill:" + skill[1] + args;
    }
    if (text.startsWith("I ran this shell command myself;")) {
      const line = text.split("\n").find((row) => row.startsWith("$ "));
      return "!" + (line ? line.slice(2) : "");
    }
    return null;
  }

  function userMessage(text) {
    const typed = typedText(text);
    const node = addMessage("user", typed === null ? text : typed);
    if (typed !== null) node.dataset.typed = "yes";
    return node;
  }

  function renderTranscript(messages) {
    conversation.replaceChildren();
    renderTodos([]);
    tools.clear();
    current = null;
    thinking = null;
    for (const message of messages) {
      if (message.role === "user") {
        userMessage(partsText(message.content));
      } else if (message.role === "assistant") {
        for (const part of message.content || []) {
          if (part.type === "text" && part.text) renderMarkdown(addMessage("assistant", ""), part.text);
          if (part.type === "thinking" && part.thinking) thinkingBlock().pre.textContent = part.thinking;
          if (part.type === "tool_call") {
            const tool = toolBlock(part.id, part.name);
            tool.args.textContent = pretty(part.arguments);
            setSubject(tool, part.arguments);
            setStatus(tool, "requested");
          }
        }
        thinking = null;
      } else if (message.role === "tool_result") {
        const tool = toolBlock(message.tool_call_id, message.tool_name);
        tool.output.textContent = partsText(message.content);
        setStatus(tool, message.is_error ? "error" : "done");
        if (message.tool_name === "todo" && message.details && Array.isArray(message.details.todos)) {
          renderTodos(message.details.todos);
        }
      }
    }
  }

  // the model's task list (the todo tool), shown above the prompt
  const TASK_MARKS = { pending: "☐", in_progress: "▶", done: "☑" };

  function renderTodos(items) {
    const list = $("todo-list");
    list.replaceChildren();
    for (const item of items || []) {
      if (!item || typeof item.content !== "string") continue;
      const status = TASK_MARKS[item.status] ? item.status : "pending";
      const row = element("li", "", TASK_MARKS[status] + " " + item.content);
      row.dataset.status = status;
      list.append(row);
    }
    $("todos").hidden = list.childElementCount === 0;
  }

  function pretty(value) {
    if (value === undefined || value === null) return "";
    if (typeof value === "string") return value;
    return JSON.stringify(value, null, 2);
  }

  function thinkingBlock() {
    const box = element("details", "thinking");
    box.append(element("summary", "", "Thinking"));
    const pre = element("pre");
    box.append(pre);
    conversation.append(box);
    return { box: box, pre: pre };
  }

  function toolBlock(id, name) {
    let tool = tools.get(id);
    if (tool) return tool;
    const box = element("details", "tool");
    box.setAttribute("aria-label", "Tool call " + (name || "tool"));
    const summary = element("summary");
    summary.append(element("span", "name", name || "tool"));
    summary.append(element("span", "subject", ""));
    summary.append(element("span", "counts", ""));
    const status = element("span", "status", "");
    summary.append(status);
    box.append(summary);
    const args = element("pre", "args");
    const output = element("pre", "output");
    box.append(args, output);
    conversation.append(box);
    tool = { name: name, box: box, status: status, args: args, output: output, request: null,
             subject: summary.querySelector(".subject"), counts: summary.querySelector(".counts"),
             diff: null };
    tools.set(id, tool);
    scrollDown();
    return tool;
  }

  // A call's subject in its one line: the command (first line), the path, the pattern,
  // the query or the URL, cut to 70 characters — bash(git status), read(src/app.py).
  const SUBJECT_KEYS = ["command", "cmd", "script", "path", "file_path", "pattern", "query", "url"];

  // The lines an edit or a write changes, as a unified diff without headers: one
  // [mark, text] per line ("+" added, "-" removed, " " kept around a change). Lines in
  // common are found by a longest-common-subsequence table (up to 500 lines a side;
  // beyond that every old line is removed and every new one added).
  function lineDiff(before, after) {
    const a = before ? before.split("\n") : [];
    const b = after ? after.split("\n") : [];
    if (a.length > 500 || b.length > 500) {
      return a.map((line) => ["-", line]).concat(b.map((line) => ["+", line]));
    }
    const common = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
      }
    }
    const rows = [];
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) {
        rows.push([" ", a[i]]);
        i++;
        j++;
      } else if (i < a.length && (j === b.length || common[i + 1][j] >= common[i][j + 1])) {
        rows.push(["-", a[i++]]);
      } else {
        rows.push(["+", b[j++]]);
      }
    }
    // keep one line of context around each change
    return rows.filter((row, index) => row[0] !== " "
      || (rows[index - 1] && rows[index - 1][0] !== " ")
      || (rows[index + 1] && rows[index + 1][0] !== " "));
  }

  // one replacement: SkillKit's old_text/new_text, or the old_string/new_string of
  // other agents' edit tools
  function replacement(edit) {
    if (!edit || typeof edit !== "object") return null;
    for (const [before, after] of [["old_text", "new_text"], ["old_string", "new_string"]]) {
      if (typeof edit[before] === "string" && typeof edit[after] === "string") return [edit[before], edit[after]];
    }
    return null;
  }

  function editDiff(args) {
    const pairs = [args, ...(Array.isArray(args.edits) ? args.edits : [])]
      .map(replacement)
      .filter((pair) => pair !== null);
    if (!pairs.length && typeof args.content === "string") pairs.push(["", args.content]);
    return pairs.flatMap(([before, after]) => lineDiff(before, after));
  }

  function showDiff(tool, args) {
    const rows = editDiff(args);
    if (!rows.length) return;
    const added = rows.filter((row) => row[0] === "+").length;
    const removed = rows.filter((row) => row[0] === "-").length;
    tool.counts.replaceChildren(element("span", "added", " +" + added), element("span", "removed", " −" + removed));
    const pre = element("pre", "diff");
    pre.setAttribute("aria-label", "Changes");
    for (const [mark, line] of rows) {
      pre.append(element("span", mark === "+" ? "added" : mark === "-" ? "removed" : "kept", mark + line + "\n"));
    }
    if (tool.diff) tool.diff.replaceWith(pre);
    else tool.args.before(pre);
    tool.diff = pre;
  }

  function setSubject(tool, args) {
    if (!args || typeof args !== "object") return;
    showDiff(tool, args);
    const key = SUBJECT_KEYS.find((name) => typeof args[name] === "string" && args[name].trim());
    if (!key) return;
    const lines = args[key].trim().split("\n");
    let subject = lines[0] + (lines.length > 1 ? " …" : "");
    if (subject.length > 70) subject = subject.slice(0, 69) + "…";
    tool.subject.textContent = "(" + subject + ")";
  }

  function setStatus(tool, status) {
    tool.box.dataset.status = status;
    tool.status.textContent = status;
  }

  function resultText(result) {
    if (!result) return "";
    return partsText(result.content);
  }

  // ------------------------------------------------------------------ requests

  function addRequest(request) {
    if (!request || !request.id || document.getElementById("request-" + request.id)) return;
    const card = element("article", "request");
    card.id = "request-" + request.id;
    const buttons = element("div", "buttons");
    if (request.kind === "approval") {
      card.setAttribute("aria-label", "Approval");
      card.append(element("h2", "", "Allow " + request.tool_name + "?"));
      card.append(element("pre", "", request.description || pretty(request.tool_input)));
      if (request.reason) card.append(element("p", "", request.reason));
      const choices = [
        ["allow", "Allow once"],
        ["always", request.suggested_rule ? "Always allow " + request.suggested_rule : "Always allow"],
        ["deny", "Deny"],
      ];
      for (const [decision, label] of choices) {
        const button = element("button", "", label);
        button.type = "button";
        button.addEventListener("click", () => answer(card, request.id, { decision: decision }));
        buttons.append(button);
      }
    } else {
      card.setAttribute("aria-label", "Question");
      const answers = [];
      (request.questions || []).forEach((item, index) => {
        card.append(element("h2", "", item.question));
        const options = element("div", "buttons");
        const field = element("input");
        field.setAttribute("aria-label", "Answer " + (index + 1));
        const picked = new Set();
        for (const option of item.options || []) {
          const choice = element("button", "", option.label);
          choice.type = "button";
          choice.setAttribute("aria-pressed", "false");
          if (option.description) choice.title = option.description;
          choice.addEventListener("click", () => {
            if (!item.multi_select) {
              picked.clear();
              for (const other of options.querySelectorAll("button")) other.setAttribute("aria-pressed", "false");
            }
            if (picked.has(option.label)) picked.delete(option.label);
            else picked.add(option.label);
            choice.setAttribute("aria-pressed", picked.has(option.label) ? "true" : "false");
          });
          options.append(choice);
        }
        // One answer per question: the options picked, and what was typed, if anything.
        answers.push(() => {
          const typed = field.value.trim();
          const chosen = [...picked];
          if (typed) chosen.push(typed);
          return item.multi_select ? chosen : chosen.length === 1 ? chosen[0] : chosen;
        });
        card.append(options, field);
      });
      const submit = element("button", "", "Answer");
      submit.type = "button";
      submit.addEventListener("click", () =>
        answer(card, request.id, { answers: answers.map((read) => read()) }),
      );
      const decline = element("button", "", "Decline");
      decline.type = "button";
      decline.addEventListener("click", () => answer(card, request.id, { answers: null }));
      buttons.append(submit, decline);
    }
    card.append(buttons);
    requests.append(card);
    if (request.kind === "approval") {
      // The call waiting for this answer: the latest unfinished call of that tool.
      const waiting = [...tools.values()]
        .reverse()
        .find((tool) => tool.name === request.tool_name && !["done", "error"].includes(tool.box.dataset.status));
      if (waiting) {
        waiting.request = request.id;
        setStatus(waiting, "awaiting approval");
      }
    }
    scrollDown();
  }

  async function answer(card, requestId, fields) {
    for (const button of card.querySelectorAll("button")) button.disabled = true;
    const response = await send("respond", Object.assign({ request_id: requestId }, fields));
    if (response.success) closeRequest(requestId);
    else for (const button of card.querySelectorAll("button")) button.disabled = false;
  }

  function closeRequest(id) {
    const card = document.getElementById("request-" + id);
    if (card) card.remove();
    for (const tool of tools.values()) {
      if (tool.request === id && tool.box.dataset.status === "awaiting approval") setStatus(tool, "running");
    }
  }

  // ------------------------------------------------------------------ events

  function onEvent(event) {
    if (syncing) {
      held.push(event);
      return;
    }
    const p = event.payload || {};
    switch (event.type) {
      case "agent_start":
        setRunning(true);
        activity("waiting for the model");
        notice("");
        if (p.prompt) userMessage(p.prompt);
        break;
      case "agent_end":
        setRunning(false);
        activity("");
        current = null;
        thinking = null;
        if (p.error) notice(p.error);
        refreshState().then(refreshTree);
        break;
      case "text_start":
        current = addMessage("assistant", "");
        activity("writing");
        break;
      case "text_delta":
        if (!current) current = addMessage("assistant", "");
        current.append(p.content || ""); // a text node per delta: no re-render of the whole answer
        scrollDown();
        break;
      case "text_end":
        if (current && typeof p.content === "string") renderMarkdown(current, p.content);
        else if (current) renderMarkdown(current, current.textContent);
        current = null;
        break;
      case "thinking_start":
        thinking = thinkingBlock();
        activity("thinking");
        break;
      case "thinking_delta":
        if (!thinking) thinking = thinkingBlock();
        thinking.pre.append(p.content || "");
        break;
      case "thinking_end":
        thinking = null;
        break;
      case "tool_call_start":
        setStatus(toolBlock(p.tool_call_id, p.tool_name), "preparing");
        break;
      case "tool_call_delta": {
        const tool = toolBlock(p.tool_call_id, p.tool_name);
        tool.args.append(p.content || "");
        break;
      }
      case "tool_call_end": {
        const tool = toolBlock(p.tool_call_id, p.tool_name);
        tool.args.textContent = pretty(p.arguments !== undefined ? p.arguments : p.content);
        setSubject(tool, p.arguments);
        setStatus(tool, "requested");
        break;
      }
      case "tool_execution_start": {
        const tool = toolBlock(p.tool_call_id, p.tool_name);
        if (!tool.args.textContent) tool.args.textContent = pretty(p.args);
        setSubject(tool, p.args);
        setStatus(tool, "running");
        if (running) activity("running " + (p.tool_name || "a tool"));
        break;
      }
      case "tool_execution_update": {
        const tool = toolBlock(p.tool_call_id, p.tool_name);
        tool.output.append(p.output || "");
        break;
      }
      case "tool_execution_end": {
        const tool = toolBlock(p.tool_call_id, p.tool_name);
        tool.output.textContent = resultText(p.result);
        setStatus(tool, p.result && p.result.is_error ? "error" : "done");
        if (running) activity("waiting for the model"); // a !command runs outside a run
        break;
      }
      case "usage":
        showUsage(p.cumulative_usage, p.cumulative_cost);
        break;
      case "mode_changed":
        offerModes(p.mode);
        if (p.mode) modeSelect.value = p.mode;
        break;
      case "todo_updated":
        renderTodos(p.items);
        break;
      case "ui_request":
        addRequest(event);
        break;
      case "ui_request_closed":
        closeRequest(event.id);
        break;
      case "events_dropped":
        resync();
        break;
      case "run_cancelled":
        addMessage("note", "Run cancelled.");
        break;
      case "error":
        if (p.message) notice(p.message);
        break;
      default:
        break;
    }
  }

  function connect() {
    const source = new EventSource("/events?token=" + encodeURIComponent(token));
    source.onopen = () => {
      connection.textContent = "connected";
      connection.className = "live";
      loadCommands();
      resync().then(refreshTree);
    };
    source.onerror = () => {
      connection.textContent = "reconnecting";
      connection.className = "";
    };
    source.onmessage = (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch (error) {
        return;
      }
      onEvent(event);
    };
  }

  // ------------------------------------------------------------------ commands

  // The session's one command table (get_commands), the same the terminal serves as
  // /name: a typed "/name ARGS" line becomes {type: name, ...fields} from the table's
  // typed arguments; "!command" is the session's bash. A line that only looks like a
  // path ("/usr/bin/env") is a prompt.
  let commandTable = [];
  const PAGE_ALIASES = { mode: "set_mode" }; // the terminal's own /mode
  const CHANGES_TRANSCRIPT = new Set(["clear", "compact", "fork", "rewind", "undo", "tree"]);

  async function loadCommands() {
    const response = await send("get_commands");
    if (response.success) commandTable = (response.data && response.data.commands) || [];
  }

  function findCommand(name) {
    return commandTable.find((c) => c.name === name || (c.aliases || []).includes(name));
  }

  // The fields of a typed line: one word per argument, in order; the last string
  // argument takes the rest of the line. Words are converted by the argument's kind;
  // a word that does not convert is sent as typed (the server says what is wrong).
  function commandFields(command, rest) {
    const fields = {};
    let remaining = rest.trim();
    const args = command.arguments || [];
    args.forEach((arg, index) => {
      if (!remaining) return;
      if ((arg.kind || "string") === "string" && (index === args.length - 1 || arg.rest)) {
        fields[arg.name] = remaining;
        remaining = "";
        return;
      }
      const split = remaining.match(/^(\S+)\s*([\s\S]*)$/);
      const word = split[1];
      remaining = split[2];
      const lower = word.toLowerCase();
      if (arg.kind === "integer") fields[arg.name] = /^-?\d+$/.test(word) ? parseInt(word, 10) : word;
      else if (arg.kind === "number") fields[arg.name] = Number.isNaN(Number(word)) ? word : Number(word);
      else if (arg.kind === "boolean") {
        if (["true", "yes", "1", arg.name].includes(lower)) fields[arg.name] = true;
        else if (["false", "no", "0"].includes(lower)) fields[arg.name] = false;
        else fields[arg.name] = word;
      } else if (arg.kind === "json") {
        try {
          fields[arg.name] = JSON.parse(word);
        } catch (error) {
          fields[arg.name] = word;
        }
      } else fields[arg.name] = word;
    });
    return { fields: fields, extra: remaining };
  }

  function showOutput(line, text) {
    const node = addMessage("command", "");
    node.append(element("div", "typed", line));
    if (text) node.append(element("pre", "", text));
    scrollDown();
  }

  function describe(data) {
    if (!data || typeof data !== "object") return "";
    if (typeof data.output === "string") return data.output;
    return Object.entries(data)
      .map(([key, value]) => key + ": " + (typeof value === "string" ? value : JSON.stringify(value)))
      .join("\n");
  }

  // Runs the typed line when it is a command or !command; false when it is a prompt.
  async function runLine(text) {
    const line = text.trim();
    if (line.startsWith("!") && line.slice(1).trim()) {
      if (!running) activity("running " + line.slice(1).trim());
      const response = await send("bash", { command: line.slice(1).trim() });
      if (!running) activity("");
      if (response.success) {
        const data = response.data || {};
        showOutput(line, data.ran ? "the output goes to the model with your next prompt"
          : "not run: " + (data.reason || "refused"));
      }
      return true;
    }
    const typed = line.match(/^\/([a-z][\w.-]*)(?::(\S+))?(?:\s+([\s\S]*))?$/);
    if (!typed) return false;
    let name = typed[1];
    let rest = typed[3] || "";
    if (typed[2] !== undefined) {
      if (name !== "skill") return false;
      rest = typed[2] + (rest ? " " + rest : ""); // /skill:NAME ARGS
    }
    if (!commandTable.length) await loadCommands();
    name = PAGE_ALIASES[name] || name;
    const command = findCommand(name);
    if (!command) {
      notice("unknown command /" + typed[1] + " (/help lists them)");
      return true;
    }
    if (command.name === "quit") {
      notice("/quit ends a terminal session; close the tab to leave the page");
      return true;
    }
    const parsed = commandFields(command, rest);
    if (parsed.extra) {
      notice("too many arguments for /" + command.name + ": " + parsed.extra);
      return true;
    }
    const before = lastState;
    const response = await send(command.name, parsed.fields);
    if (!response.success) return true;
    notice("");
    await refreshState();
    const moved = CHANGES_TRANSCRIPT.has(command.name) && (command.name !== "tree" || rest.trim());
    if (moved || lastState.session_id !== before.session_id
        || lastState.message_count !== before.message_count) {
      await resync();
    }
    showOutput(line, describe(response.data));
    refreshTree();
    return true;
  }

  // ------------------------------------------------------------------ the session panel

  function showSession(state) {
    $("session-id").textContent = state.session_id
      ? "session " + state.session_id : "no session saved";
    for (const id of ["rename-form", "fork"]) {
      for (const control of document.querySelectorAll("#" + id + ", #" + id + " *")) {
        if ("disabled" in control) control.disabled = !state.session_id;
      }
    }
  }

  // The current session's tree, from the tree command: one row per entry of the
  // branch ("● where you are"); clicking one goes back to it.
  async function refreshTree() {
    const list = $("tree");
    if (!lastState.session_id) {
      list.replaceChildren();
      return;
    }
    const response = await send("tree", { args: "" });
    if (!response.success) return;
    const rows = [];
    for (const line of ((response.data && response.data.output) || "").split("\n")) {
      const entry = line.match(/^(\s*)([•●]?)\s*([0-9a-f]{4,})\s+(.*)$/);
      if (!entry) continue;
      entry.splice(1, 1, entry[1].length); // the indent: entry[1] is the depth in spaces
      const item = element("li");
      if (!entry[2]) item.className = "off"; // not on the current branch
      if (entry[1] > 0) item.dataset.depth = String(Math.min(Math.floor(entry[1] / 2), 4));
      const button = element("button", "", entry[4]);
      button.type = "button";
      button.title = entry[3];
      if (entry[2] === "●") {
        item.setAttribute("aria-current", "step");
        button.disabled = true;
      }
      button.addEventListener("click", async () => {
        if (running) {
          notice("wait for the run to end (or abort it) before going back");
          return;
        }
        const moved = await send("tree", { args: entry[3] });
        if (moved.success) {
          await resync();
          showOutput("/tree " + entry[3], describe(moved.data));
          refreshTree();
        }
      });
      item.append(button);
      rows.push(item);
    }
    list.replaceChildren(...rows);
  }

  $("rename-form").addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const name = $("session-name").value.trim();
    if (!name) return;
    const response = await send("name", { args: name });
    if (response.success) {
      $("session-name").value = "";
      showOutput("/name " + name, describe(response.data));
    }
  });

  $("fork").addEventListener("click", () => runLine("/fork"));
  $("clear").addEventListener("click", () => runLine("/clear"));

  // On a narrow screen the panel opens over the page from the header's Session button.
  const sideToggle = $("side-toggle");
  function openSide(open) {
    document.body.classList.toggle("side-open", open);
    sideToggle.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) refreshTree();
  }
  sideToggle.addEventListener("click", () => openSide(!document.body.classList.contains("side-open")));
  $("side-close").addEventListener("click", () => openSide(false));

  // ------------------------------------------------------------------ controls

  $("prompt-form").addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const text = promptBox.value;
    if (!text.trim()) return;
    if (await runLine(text)) {
      promptBox.value = "";
      return;
    }
    const fields = { message: text };
    if (running) fields.streaming_behavior = $("behavior").value;
    if (!running) activity("sending");
    const response = await send("prompt", fields);
    if (!response.success && !running) activity("");
    if (response.success) {
      promptBox.value = "";
      notice("");
      const delivery = response.data && response.data.delivery;
      if (delivery === "steer" || delivery === "follow_up") {
        addMessage("user", text).dataset.delivery = delivery;
      }
    }
  });

  promptBox.addEventListener("keydown", (key) => {
    if (key.key === "Enter" && !key.shiftKey && !key.isComposing) {
      key.preventDefault();
      $("prompt-form").requestSubmit();
    } else if (key.key === "Escape" && running) {
      key.preventDefault();
      send("abort"); // as Esc does in the terminal
    }
  });

  abortButton.addEventListener("click", () => send("abort"));

  $("model-form").addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const model = modelInput.value.trim();
    if (!model) return;
    const response = await send("set_model", { model: model });
    if (response.success) {
      modelInput.value = response.data.model || model;
      notice("");
    }
  });

  modeSelect.addEventListener("change", async () => {
    const response = await send("set_mode", { mode: modeSelect.value });
    if (response.success) notice("");
    else refreshState();
  });

  setRunning(false);
  connect();
})();
