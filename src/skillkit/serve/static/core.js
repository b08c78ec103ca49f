// The page's groundwork: its element handles, the command endpoint (send), the notice
// line, the activity line and the usage counters. Every piece of text from the session
// is inserted with textContent, never as HTML.

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

// Runs one command of the session; a failure is shown in the notice line unless
// options.quiet (the caller shows it where it belongs, or it is expected).
async function send(type, fields, options) {
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
  if (!response.success && !(options && options.quiet)) notice(response.error || "the command failed");
  return response;
}

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
