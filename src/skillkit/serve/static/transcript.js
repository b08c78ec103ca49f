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

function renderTranscript(messages) {
  conversation.replaceChildren();
  renderTodos([]);
  tools.clear();
  current = null;
  thinking = null;
  for (const [index, message] of messages.entries()) {
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
