// What each turn changed: under a turn that changed files, one compact line
// ("2 files changed +10 −3") that opens to the files, a coloured diff and a rewind
// button. The turns come from the session's own commands: "rewind" (every turn with its
// files) when the transcript is drawn, "diff" (the last turn) when a run ends, "diff"
// with the turn's number (its patch) when a line is opened, and "rewind" with a turn and
// a target to go back, after a confirmation. The diff is the session's text: it is put
// in the page with textContent, line by line, never as HTML.

const shownTurns = new Set(); // turn numbers with a line in the conversation
let changesDrawn = 0; // bumped on each redraw: answers for an older drawing are dropped

const DIFF_LINES = 4000; // a longer patch is cut (the terminal's /diff shows it whole)
const REWIND_TARGETS = [
  ["both", "code and conversation"],
  ["code", "code only (the conversation stays)"],
  ["conversation", "conversation only (the files stay)"],
];

function changeCounts(files) {
  let added = 0;
  let removed = 0;
  for (const file of files) {
    added += typeof file.added === "number" ? file.added : 0;
    removed += typeof file.removed === "number" ? file.removed : 0;
  }
  return [added, removed];
}

// The user message a turn began with: the one at its place in the transcript when it
// still says the turn's prompt, else the last one that does; null when none does (the
// conversation was rewound or compacted past it).
function turnMessage(turn) {
  const said = [...conversation.querySelectorAll("article.message.user")];
  const at = said.find((node) => node.dataset.index === String(turn.transcript_length));
  const prompt = typeof turn.prompt === "string" ? turn.prompt : "";
  if (at && at.textContent === prompt) return at;
  const same = said.filter((node) => node.textContent === prompt);
  return same.length ? same[same.length - 1] : null;
}

// Where a turn's line goes: after everything the turn drew, before the next user message
// or command answer (typed after the turn).
function placeAfterTurn(node, line) {
  let next = node.nextElementSibling;
  while (next && !(next.matches("article.message.user, article.message.command"))) next = next.nextElementSibling;
  if (next) conversation.insertBefore(line, next);
  else conversation.append(line);
}

function turnChanges(turn) {
  const files = Array.isArray(turn.files) ? turn.files : [];
  const [added, removed] = changeCounts(files);
  const box = element("details", "turn-changes");
  box.dataset.turn = String(turn.turn);
  box.setAttribute("aria-label", "Changes of turn " + turn.turn);
  const summary = element("summary");
  summary.append(
    element("span", "files", files.length + (files.length === 1 ? " file" : " files") + " changed"),
    element("span", "added", " +" + added),
    element("span", "removed", " −" + removed),
  );
  box.append(summary);
  const list = element("ul", "changed-files");
  list.setAttribute("aria-label", "Files changed in turn " + turn.turn);
  for (const file of files) {
    const row = element("li");
    row.append(element("span", "status", String(file.status || "")), element("code", "", String(file.path || "")));
    const counts = typeof file.added === "number"
      ? [element("span", "added", " +" + file.added), element("span", "removed", " −" + (file.removed || 0))]
      : [element("span", "binary", " binary")];
    row.append(...counts);
    list.append(row);
  }
  box.append(list);
  const patch = element("pre", "diff patch");
  patch.setAttribute("aria-label", "Diff of turn " + turn.turn);
  patch.textContent = "loading the diff…";
  box.append(patch, rewindControls(turn));
  let loaded = false;
  box.addEventListener("toggle", async () => {
    if (!box.open || loaded) return;
    loaded = true;
    const response = await send("diff", { turn: turn.turn }, { quiet: true });
    if (response.success) showPatch(patch, (response.data && response.data.patch) || "");
    else patch.textContent = "the diff is not available: " + (response.error || "unknown error");
  });
  return box;
}

// A unified diff, one span per line, coloured by its first character.
function showPatch(pre, text) {
  pre.replaceChildren();
  const lines = text.replace(/\n$/, "").split("\n");
  for (const line of lines.slice(0, DIFF_LINES)) {
    let kind = "kept";
    if (/^(diff --git |index |--- |\+\+\+ |new file|deleted file|old mode|new mode|similarity|rename |Binary files)/.test(line)) kind = "meta";
    else if (line.startsWith("@@")) kind = "hunk";
    else if (line.startsWith("+")) kind = "added";
    else if (line.startsWith("-")) kind = "removed";
    pre.append(element("span", kind, line + "\n"));
  }
  if (lines.length > DIFF_LINES) {
    pre.append(element("span", "meta", "… " + (lines.length - DIFF_LINES) + " more lines (/diff shows them all)\n"));
  }
  if (!text) pre.textContent = "no textual changes";
}

// "Rewind to before this turn…", then the choice of what and a confirmation; a file
// changed outside SkillKit is named by the refusal and overwritten only on a second,
// explicit confirmation.
function rewindControls(turn) {
  const bar = element("div", "rewind");
  const start = element("button", "", "Rewind to before this turn…");
  start.type = "button";
  const form = element("form", "rewind-confirm");
  form.setAttribute("aria-label", "Rewind to before turn " + turn.turn);
  form.hidden = true;
  const target = element("select");
  target.setAttribute("aria-label", "What to rewind");
  for (const [value, label] of REWIND_TARGETS) {
    const option = element("option", "", label);
    option.value = value;
    target.append(option);
  }
  const confirm = element("button", "", "Rewind");
  confirm.type = "submit";
  const cancel = element("button", "", "Cancel");
  cancel.type = "button";
  const warning = element("p", "warning");
  warning.hidden = true;
  const force = element("button", "", "Overwrite them and rewind");
  force.type = "button";
  force.hidden = true;
  form.append(element("span", "", "Go back to before turn " + turn.turn + ":"), target, confirm, cancel, warning, force);
  bar.append(start, form);

  function close() {
    form.hidden = true;
    warning.hidden = true;
    force.hidden = true;
    start.hidden = false;
  }

  async function rewind(overwrite) {
    confirm.disabled = force.disabled = true;
    const fields = { turn: turn.turn, target: target.value };
    if (overwrite) fields.force = true;
    const said = await transcriptFingerprints(); // for the answer's place (page lines)
    const response = await send("rewind", fields, { quiet: true });
    confirm.disabled = force.disabled = false;
    if (!response.success) {
      warning.textContent = response.error || "the rewind failed";
      warning.hidden = false;
      // the refusal names files changed outside SkillKit: offer to overwrite them
      force.hidden = overwrite || !/changed outside SkillKit/.test(warning.textContent);
      return;
    }
    close();
    notice("");
    await resync();
    const data = response.data || {};
    const restored = Array.isArray(data.files) ? data.files.length : 0;
    showOutput("/rewind " + turn.turn + " " + target.value + (overwrite ? " yes" : ""),
      "rewound " + (data.target || target.value) + ": " + restored + (restored === 1 ? " file" : " files")
      + " restored (undo with /undo; this rewind is turn " + data.turn + ")"
      + (data.active_agent_notice ? "\n" + data.active_agent_notice : ""), said); // who answers now
    refreshSide();
  }

  start.addEventListener("click", () => {
    start.hidden = true;
    form.hidden = false;
    target.focus();
  });
  cancel.addEventListener("click", close);
  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    rewind(false);
  });
  force.addEventListener("click", () => rewind(true));
  return bar;
}

function showTurn(turn) {
  if (!turn || turn.kind !== "turn" || !Array.isArray(turn.files) || !turn.files.length) return;
  if (shownTurns.has(turn.turn)) return;
  const node = turnMessage(turn);
  if (!node) return;
  shownTurns.add(turn.turn);
  placeAfterTurn(node, turnChanges(turn));
}

// After the transcript is drawn anew: a line for every turn it still holds that
// changed files. Quiet when the session keeps no checkpoints.
async function showTurnChanges() {
  const drawing = ++changesDrawn;
  shownTurns.clear();
  const response = await send("rewind", {}, { quiet: true });
  if (drawing !== changesDrawn || !response.success) return;
  for (const turn of (response.data && response.data.turns) || []) showTurn(turn);
}

// When a run ends: the line for the turn it was, if it changed files.
async function showLastTurnChanges() {
  const drawing = changesDrawn;
  const response = await send("diff", {}, { quiet: true });
  if (drawing !== changesDrawn || !response.success) return;
  showTurn(response.data);
}
