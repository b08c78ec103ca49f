// Slash commands and !commands typed in the prompt box.

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

// A command's answer, kept for redraws (transcript.js's page lines); `before` are the
// transcript's fingerprints taken before the command moved the conversation.
function showOutput(line, text, before) {
  const node = addMessage("command", "");
  node.append(element("div", "typed", line));
  if (text) node.append(element("pre", "", text));
  scrollDown();
  keepPageLine(node, before);
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
      showOutput(line, data.ran ? "added to the conversation: the model sees it with your next prompt"
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
  const moves = CHANGES_TRANSCRIPT.has(command.name) && (command.name !== "tree" || rest.trim());
  const said = moves && !running ? await transcriptFingerprints() : null;
  const response = await send(command.name, parsed.fields);
  if (!response.success) return true;
  notice("");
  await refreshState();
  if (moves || lastState.session_id !== before.session_id
      || lastState.message_count !== before.message_count) {
    await resync();
  }
  showOutput(line, describe(response.data), said);
  refreshSide();
  return true;
}
