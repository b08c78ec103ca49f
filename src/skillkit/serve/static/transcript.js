// The conversation: messages, thinking, tool calls as one line each (with a diff for
// edits and writes), and the model's task list.

let current = null; // the assistant block being streamed
let thinking = null; // the thinking block being streamed
const tools = new Map(); // tool_call_id -> {box, status, args, output}

// ------------------------------------------------------------------ transcript

const SPEAKERS = { user: "You", assistant: "Assistant", note: "Note", command: "Command" };

function addMessage(role, text) {
  const node = element("article", "message " + role, text);
  node.setAttribute("aria-label", SPEAKERS[role] || role);
  conversation.append(node);
  scrollDown();
  return node;
}

function userMessage(text) {
  const typed = typedText(text);
  const node = addMessage("user", typed === null ? text : typed);
  if (typed !== null) node.dataset.typed = "yes";
  return node;
}

// Draws the transcript anew (the messages of session `session`, its id or null), with
// the page's own lines that belong to it in their places (see "page lines" below).
function renderTranscript(messages, session) {
  conversation.replaceChildren();
  renderTodos([]);
  tools.clear();
  current = null;
  thinking = null;
  const lines = pageLinesFor(messages, session);
  for (const [index, message] of messages.entries()) {
    conversation.append(...(lines.get(index) || []));
    if (message.role === "user") {
      userMessage(partsText(message.content)).dataset.index = String(index); // a turn's place
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
      const handed = message.details && message.details.handoff; // a transfer_to_* call taken
      if (!message.is_error && typeof handed === "string" && /^transfer_to_/.test(message.tool_name || "")) {
        handoffNote(handed);
      }
    }
  }
  conversation.append(...(lines.get(messages.length) || []));
  scrollDown();
}

// ------------------------------------------------------------------ page lines
//
// The page shows lines that are not in the session's transcript: the answers of "/"
// commands and "!command"s, and the "Run cancelled." note. A redraw from the transcript
// (after /rewind, /undo, /tree, /compact, a session switch, missed events) would lose
// them, so each is kept with the point of the conversation where it was shown: its
// session, how many messages came before it (`after`) and a fingerprint of those
// messages (`key`). A line is anchored when the session is idle: one shown while a run
// works belongs after that run (the run's messages are filed when it ends), which is
// also where "Run cancelled." goes.
//
// A redraw puts back, in its place, each line of the session drawn whose messages the
// new transcript still begins with. So a rewind (or an /undo of the last turn) keeps
// the lines shown before the point it goes back to and takes away those shown after
// it, with the turns they followed; an /undo of that rewind, or /tree back to that
// branch, brings them back with their turns. The answer of a command that moved the
// conversation (/rewind, /undo, /tree, /clear, /fork) sits where it moved to, after the
// messages kept; `cut` is the fingerprint of the conversation it moved away from, one
// message further: when an /undo puts that conversation back, the move is taken back
// and its answer goes with it (the /undo's own answer says so). A /compact sums up the
// conversation: the lines of the part it replaced go with that part. Lines not yet
// anchored (their fingerprint still on its way) stay last.

const pageLines = []; // {node, session, after, key, cut, before}
const PAGE_LINES_KEPT = 500;

// The fingerprint of each prefix of `messages`: keys[n] names messages[0..n) (keys[0]
// the empty conversation). Two 32-bit FNV-style hashes chained over the messages' JSON.
function fingerprints(messages) {
  const keys = ["0"];
  let a = 0x811c9dc5;
  let b = 0x2f2b3ca1;
  for (const message of messages) {
    const text = JSON.stringify(message) + "\u0000";
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 13);
    }
    keys.push(keys.length + ":" + (a >>> 0).toString(36) + "." + (b >>> 0).toString(36));
  }
  return keys;
}

// The fingerprints of the session's transcript now (null when it cannot be read): taken
// before a command that moves the conversation, for its answer's `cut`.
async function transcriptFingerprints() {
  const response = await send("get_messages", {}, { quiet: true });
  return response.success ? fingerprints((response.data && response.data.messages) || []) : null;
}

// Keeps `node` (a line the page added at the end of the conversation) for redraws;
// `before` are the fingerprints taken before the command it answers moved the
// conversation (null for any other line).
function keepPageLine(node, before) {
  pageLines.push({ node: node, session: null, after: -1, key: null, cut: null, before: before || null });
  if (pageLines.length > PAGE_LINES_KEPT) pageLines.shift();
  if (!running) anchorPageLines();
}

// Anchors the lines not anchored yet at the end of the transcript as it is now (when
// the session is idle; a run's end calls it again).
async function anchorPageLines() {
  if (!pageLines.some((line) => line.key === null)) return;
  const response = await send("get_messages", {}, { quiet: true });
  if (!response.success || running) return;
  const keys = fingerprints((response.data && response.data.messages) || []);
  const after = keys.length - 1;
  for (const line of pageLines) {
    if (line.key !== null) continue;
    line.session = lastState.session_id || null;
    line.after = after;
    line.key = keys[after];
    const before = line.before;
    line.cut = before && before.length > after + 1 && before[after] === line.key ? before[after + 1] : null;
    line.before = null;
  }
}

// The kept lines that belong to `messages` of `session`, by the number of messages
// before them (lines not anchored yet last, after all of them).
function pageLinesFor(messages, session) {
  const keys = fingerprints(messages);
  const places = new Map();
  const place = (at, node) => places.set(at, (places.get(at) || []).concat([node]));
  const waiting = [];
  for (const line of pageLines) {
    if (line.key === null) waiting.push(line.node);
    else if (line.session === (session || null) && keys[line.after] === line.key
             && !(line.cut !== null && keys[line.after + 1] === line.cut)) {
      place(line.after, line.node);
    }
  }
  for (const node of waiting) place(messages.length, node);
  return places;
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
  if (tool.box.dataset.status !== "error") showDiff(tool, args);
  const key = SUBJECT_KEYS.find((name) => typeof args[name] === "string" && args[name].trim());
  if (!key) return;
  const lines = args[key].trim().split("\n");
  let subject = lines[0] + (lines.length > 1 ? " …" : "");
  if (subject.length > 70) subject = subject.slice(0, 69) + "…";
  tool.subject.textContent = "(" + subject + ")";
}

// A call that failed or was refused changed nothing: an edit's or a write's diff (drawn
// from its arguments when it was called) is taken away, its row keeps how it failed.
function setStatus(tool, status) {
  tool.box.dataset.status = status;
  tool.status.textContent = status;
  if (status === "error") {
    if (tool.diff) tool.diff.remove();
    tool.diff = null;
    tool.counts.replaceChildren();
  }
}

function resultText(result) {
  if (!result) return "";
  return partsText(result.content);
}
