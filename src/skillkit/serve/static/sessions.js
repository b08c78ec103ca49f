// The side panel: this folder's sessions (new, resume, rename, fork) and the tree of
// the current one.

// ------------------------------------------------------------------ this folder's sessions

// The saved sessions of this folder (list_sessions), most recent first: a click on one
// goes on with it (open_session; its history replaces the page's), New starts an empty
// one. Names and first messages are the user's and the model's text: shown as text.
const sessionList = $("sessions");

function when(seconds) {
  const date = new Date(seconds * 1000);
  const today = new Date().toDateString() === date.toDateString();
  return today
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString([], { month: "short", day: "numeric" });
}

function sessionTitle(info) {
  if (info.name) return info.name;
  const typed = typedText(info.first_message || "");
  const said = typed !== null ? typed : markdownText(info.title || info.first_message || "");
  return said.trim() || "(empty)";
}

async function refreshSessions() {
  const response = await send("list_sessions");
  if (!response.success) return;
  const sessions = (response.data && response.data.sessions) || [];
  const titles = new Map(sessions.map((info) => [info.id, sessionTitle(info)]));
  const rows = sessions.map((info) => {
    const item = element("li");
    item.dataset.id = info.id;
    const button = element("button", "title", titles.get(info.id));
    button.type = "button";
    button.title = info.id;
    const details = [when(info.modified), info.messages + (info.messages === 1 ? " message" : " messages")];
    if (info.parent_session) {
      details.push("fork of " + (titles.get(info.parent_session) || info.parent_session.slice(0, 8)));
    }
    const meta = element("span", "meta", details.join(" · "));
    if (info.current) {
      item.setAttribute("aria-current", "true");
      button.disabled = true;
    }
    button.addEventListener("click", () => openSession(info.id));
    item.append(button, meta);
    return item;
  });
  sessionList.replaceChildren(...rows);
  $("no-sessions").hidden = rows.length > 0;
}

async function switchSession(type, fields) {
  if (running) {
    notice("wait for the run to end (or abort it) before switching sessions");
    return;
  }
  const response = await send(type, fields);
  if (!response.success) return;
  notice("");
  activity("");
  await resync();
  await refreshSide();
  if (document.body.classList.contains("side-open")) openSide(false);
  promptBox.focus();
}

function openSession(id) {
  return switchSession("open_session", { session_id: id });
}

$("new-session").addEventListener("click", () => switchSession("new_session"));

function refreshSide() {
  return Promise.all([refreshTree(), refreshSessions()]);
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

// What a tree row says of its entry: a message's words (user, assistant, a tool's
// result, a branch's summary) as text, its Markdown reduced (see markdownText); the
// other kinds (model → …, checkpoint: …) as the command wrote them.
function treeSummary(description) {
  const said = description.match(/^(user|assistant|result [^:]*|branch): (.*)$/);
  return said ? said[1] + ": " + markdownText(said[2]) : description;
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
    const button = element("button", "", treeSummary(entry[4]));
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
      const said = await transcriptFingerprints(); // for the answer's place (page lines)
      const moved = await send("tree", { args: entry[3] });
      if (moved.success) {
        await resync();
        showOutput("/tree " + entry[3], describe(moved.data), said);
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
    refreshSessions();
  }
});

$("fork").addEventListener("click", () => runLine("/fork"));
$("clear").addEventListener("click", () => runLine("/clear"));

// On a narrow screen the panel opens over the page from the header's Session button.
const sideToggle = $("side-toggle");
function openSide(open) {
  document.body.classList.toggle("side-open", open);
  sideToggle.setAttribute("aria-expanded", open ? "true" : "false");
  if (open) refreshSide();
}
sideToggle.addEventListener("click", () => openSide(!document.body.classList.contains("side-open")));
$("side-close").addEventListener("click", () => openSide(false));
