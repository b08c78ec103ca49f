// The page's run: the session's state, its event stream, the prompt and the header's
// controls. Starts the page (the last of the page's scripts).

let syncing = false;
let held = [];

let lastState = {};

// The mode menu offers exactly the modes the session accepts now (get_state's
// "modes": bypass only when it was enabled at start); none without a permission layer.
const MODE_LABELS = { accept_edits: "accept edits" };

function offerModes(modes) {
  if (!Array.isArray(modes)) return;
  const offered = [...modeSelect.options].map((option) => option.value);
  if (offered.join(" ") !== modes.join(" ")) {
    modeSelect.replaceChildren(...modes.map((mode) => {
      const option = element("option", "", MODE_LABELS[mode] || mode);
      option.value = mode;
      return option;
    }));
  }
  modeSelect.disabled = modes.length === 0;
}

function applyState(state) {
  if (!state) return;
  lastState = state;
  offerModes(state.modes);
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
    const state = await send("get_state");
    if (messages.success) {
      requests.replaceChildren(); // the waiting ones come back with the state
      const session = state.success ? state.data.session_id : lastState.session_id;
      renderTranscript(messages.data.messages || [], session || null);
      showTurnChanges(); // what each turn changed (checkpoints.js)
    }
    if (state.success) applyState(state.data);
  } finally {
    syncing = false;
    const waiting = held;
    held = [];
    for (const event of waiting) onEvent(event);
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
      if (p.stop_reason === "handoff") { // the run goes on: the agent it was handed to answers
        current = null;
        thinking = null;
        break;
      }
      setRunning(false);
      activity("");
      current = null;
      thinking = null;
      if (p.error) notice(p.error);
      refreshState().then(() => {
        anchorPageLines(); // the lines shown during the run belong after it
        refreshSide();
      });
      if (!event.parent_id) showLastTurnChanges(); // a child's run is part of its parent's turn
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
      // a call of a run paused on approvals ends "pending": it did not run
      const ended = p.status === "pending" ? "awaiting approval" : p.result && p.result.is_error ? "error" : "done";
      setStatus(tool, ended);
      if (running) activity("waiting for the model"); // a !command runs outside a run
      break;
    }
    case "usage":
      showUsage(p.cumulative_usage, p.cumulative_cost);
      break;
    case "mode_changed":
      if (p.mode && ![...modeSelect.options].some((option) => option.value === p.mode)) refreshState();
      else if (p.mode) modeSelect.value = p.mode;
      break;
    case "session_changed": // this page or another switched to another saved session
      activity("");
      resync().then(refreshSide);
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
    case "handoff":
      handoffNote(p.to_agent);
      break;
    case "run_cancelled":
      keepPageLine(addMessage("note", "Run cancelled."));
      break;
    case "error":
      if (p.message) notice(p.message);
      break;
    default:
      break;
  }
}

// The note that another agent answers from here on: drawn live for a "handoff" event,
// and from the transfer_to_* call's result when the transcript is drawn again.
function handoffNote(agent) {
  return addMessage("note", "→ handed to " + (agent || "another agent"));
}

function connect() {
  const source = new EventSource("/events?token=" + encodeURIComponent(token));
  source.onopen = () => {
    connection.textContent = "connected";
    connection.className = "live";
    loadCommands();
    resync().then(refreshSide);
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
