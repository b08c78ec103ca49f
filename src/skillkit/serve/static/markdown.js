// The model's Markdown as elements (an allowlist), and the text a user typed for a
// message SkillKit wrote on their behalf.

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

// The model's (or a user's) Markdown reduced to its words, for a one-line summary (a
// tree row, a session's title): markdown-it parses it, and only the text of each block
// is kept — no markers, no element — joined with " · " as the terminal's previews are.
// The text is set with textContent by the caller, so nothing in it becomes markup. A
// summary flattened to one line keeps a table's cells as "| a | b |": those pipes
// (outside code) become " · " and a "|---|" rule goes; an emphasis opened before the
// text was cut ("**rig…") loses its marker.
const TABLE_RULE = /\|?(\s*:?-{3,}:?\s*\|)+(\s*:?-{3,}:?\s*)?/g;

function markdownText(text) {
  const source = String(text || "");
  if (!markdown) return source.replace(/\s+/g, " ").trim();
  const blocks = [];
  for (const token of markdown.parse(source, {})) {
    if (token.type === "inline") {
      const words = (token.children || []).map((child) => {
        if (child.type === "text") {
          return child.content.replace(TABLE_RULE, " | ").replace(/\s*\|[\s|]*/g, " · ");
        }
        if (child.type === "code_inline" || child.type === "image") return child.content;
        if (child.type === "softbreak" || child.type === "hardbreak") return " ";
        return "";
      }).join("");
      blocks.push(words);
    } else if (token.type === "fence" || token.type === "code_block") {
      blocks.push(token.content);
    }
  }
  const joined = blocks
    .map((block) => block.replace(/\s+/g, " ").replace(/^[\s·]+|[\s·]+$/g, ""))
    .filter((block) => block)
    .join(" · ");
  return joined.replace(/(\*{1,3}|_{1,3}|`+)(?=[^\s*_`][^*_`]*…$)/, "");
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
