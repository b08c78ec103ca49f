// Approvals and questions the agent waits on, as cards with buttons.

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
