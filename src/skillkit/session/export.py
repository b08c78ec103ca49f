"""A session's current branch as Markdown or as one self-contained HTML page.

The HTML page loads nothing (no scripts, fonts or images from anywhere): styles are
inline, tool calls fold with ``<details>``, thinking is dimmed, unified diffs in tool
output are coloured line by line, and every piece of session text is escaped. A turn
that changed files (a ``checkpoint`` entry) is followed by one folded line — ``turn 2
changed 2 files +10 -3`` — opening to its files and its coloured diff.
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterator
from typing import Any, Literal

from skillkit.context.transcript import typed_text
from skillkit.models import (
    AssistantMessage,
    CustomMessage,
    ImagePart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skillkit.session.format import (
    BranchEntry,
    ChangedFile,
    CheckpointEntry,
    CompactionEntry,
    CustomEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModeChangeEntry,
    ModelChangeEntry,
    NameEntry,
)
from skillkit.session.session import Session

__all__ = ["ExportFormat", "export_session", "to_html", "to_markdown"]

ExportFormat = Literal["md", "html"]


def export_session(session: Session, format: ExportFormat = "md") -> str:
    """The current branch of ``session`` as Markdown (``md``) or HTML (``html``)."""
    return to_html(session) if format == "html" else to_markdown(session)


def _title(session: Session) -> str:
    first = session.first_user_text().strip()
    return session.session_name or (typed_text(first) or first)[:80] or session.id


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def _fence(text: str, info: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _args(call: ToolCall) -> str:
    return json.dumps(call.arguments, indent=2, ensure_ascii=False)


def _result_text(message: ToolResultMessage) -> str:
    parts = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append(part.text)
        elif isinstance(part, ImagePart):
            parts.append(f"[image {part.mime_type}]")
    return "".join(parts)


def _user_parts(message: UserMessage) -> str:
    """The user's words: what they typed for a message SkillKit wrote on their behalf
    (``/skill:NAME ARGS``, ``!COMMAND``), else the message's text."""
    if isinstance(message.content, str):
        return typed_text(message.content) or message.content
    return "".join(
        p.text if isinstance(p, TextPart) else f"[image {p.mime_type}]" for p in message.content
    )


# --------------------------------------------------------------------------- Markdown


def to_markdown(session: Session) -> str:
    """The branch as Markdown: one section per message, tool calls and results in
    fenced blocks, thinking as a quote."""
    out = [
        f"# {_title(session)}",
        "",
        f"- session: `{session.id}`",
        f"- folder: `{session.cwd}`",
        f"- created: {_when(session.header.created)}",
    ]
    if session.header.parent_session:
        out.append(f"- forked from: `{session.header.parent_session}`")
    labels = session.labels()
    for entry in session.branch():
        block = "\n\n".join(part for part in _markdown_entry(entry) if part)
        if not block:
            continue
        label = labels.get(entry.id)
        out += ["", block + (f"\n\n*label: {label}*" if label else "")]
    return "\n".join(out) + "\n"


def _markdown_entry(entry: Entry) -> Iterator[str]:
    match entry:
        case MessageEntry(message=UserMessage() as message):
            yield "## User"
            yield _user_parts(message)
        case MessageEntry(message=AssistantMessage() as message):
            yield "## Assistant"
            for part in message.content:
                if isinstance(part, TextPart):
                    yield part.text
                elif isinstance(part, ThinkingPart):
                    yield "\n".join("> " + line for line in part.thinking.splitlines() or [""])
                elif isinstance(part, ToolCall):
                    yield f"**tool call** `{part.name}`\n\n" + _fence(_args(part), "json")
            if message.error:
                yield f"*{stop_note(message.stop_reason, message.error)}*"
        case MessageEntry(message=ToolResultMessage() as message):
            status = "error" if message.is_error else "result"
            yield f"**tool {status}** `{message.tool_name}`"
            yield _fence(_result_text(message))
        case MessageEntry(message=CustomMessage(kind=kind, payload=payload)):
            yield f"*{kind}*: " + json.dumps(payload, ensure_ascii=False)[:500]
        case CompactionEntry(summary=summary, tokens_before=before, tokens_after=after):
            yield f"---\n\n*context compacted ({before} → {after} tokens)*"
            yield _fence(summary) if summary else ""
        case ModelChangeEntry(model=model):
            yield f"*model: {model}*"
        case ModeChangeEntry(mode=mode):
            yield f"*mode: {mode}*"
        case NameEntry(name=name):
            yield f"*named: {name}*"
        case BranchEntry(summary=summary):
            yield "*went back to an earlier point*" + (f": {summary}" if summary else "")
        case CheckpointEntry(files=files, patch=patch) if files:
            yield f"*{_checkpoint_title(entry)}*"
            yield "\n".join(f"- `{f.path}` {f.status} {_counts(f)}" for f in files)
            yield _fence(patch, "diff") if patch else ""
        case CustomEntry() | LabelEntry():
            pass
        case _:
            pass


# --------------------------------------------------------------------------- HTML

_STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;
color:#1d1d1f;background:#fff}
h1{font-size:1.4rem}.meta{color:#666;font-size:.85rem}
.msg{border-left:3px solid #ccc;padding:.2rem .8rem;margin:1rem 0}
.user{border-color:#3b82f6}.assistant{border-color:#10b981}.note{color:#777;font-style:italic}
.role{font-weight:600;font-size:.8rem;text-transform:uppercase;color:#555}
.thinking{opacity:.55;font-style:italic;white-space:pre-wrap}
.text{white-space:pre-wrap}
.md table{border-collapse:collapse}.md td,.md th{border:1px solid #8886;padding:.2rem .5rem}
.md code{background:#8882;padding:0 .2rem;border-radius:3px}.md pre code{background:none}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;font-size:.85rem;white-space:pre-wrap}
details{margin:.4rem 0}summary{cursor:pointer;font-family:monospace}
.error{color:#b91c1c}.add{background:#e6ffec;color:#116329}.del{background:#ffebe9;color:#82071e}
.hunk{color:#0550ae}.label{background:#fef3c7;font-size:.75rem;padding:0 .3rem}
@media (prefers-color-scheme: dark){body{background:#111;color:#ddd}pre{background:#1c1c1c}
.add{background:#12261e;color:#7ee2a8}.del{background:#2d1214;color:#ffa198}}
"""

_DIFF = re.compile(r"^(?:diff --git |--- |\+\+\+ |@@ )", re.M)


def _pre(text: str) -> str:
    """Escaped preformatted text; a unified diff gets one class per line."""
    if not _DIFF.search(text):
        return f"<pre>{html.escape(text)}</pre>"
    lines = []
    for line in text.split("\n"):
        escaped = html.escape(line)
        if line.startswith("@@"):
            lines.append(f'<span class="hunk">{escaped}</span>')
        elif line.startswith("+") and not line.startswith("+++"):
            lines.append(f'<span class="add">{escaped}</span>')
        elif line.startswith("-") and not line.startswith("---"):
            lines.append(f'<span class="del">{escaped}</span>')
        else:
            lines.append(escaped)
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"


def to_html(session: Session) -> str:
    """The branch as one HTML page that needs nothing else to be read."""
    esc = html.escape
    results: dict[str, ToolResultMessage] = {}
    branch = session.branch()
    for entry in branch:
        if isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage):
            results[entry.message.tool_call_id] = entry.message
    labels = session.labels()
    body = []
    for entry in branch:
        label = labels.get(entry.id)
        tag = f' <span class="label">{esc(label)}</span>' if label else ""
        body.append(_html_entry(entry, results, tag))
    meta = f"session {esc(session.id)} · {esc(session.cwd)} · {esc(_when(session.header.created))}"
    if session.header.parent_session:
        meta += f" · forked from {esc(session.header.parent_session)}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{esc(_title(session))}</title><style>{_STYLE}</style></head><body>"
        f'<h1>{esc(_title(session))}</h1><p class="meta">{meta}</p>'
        + "".join(body)
        + "</body></html>\n"
    )


def _html_entry(entry: Entry, results: dict[str, ToolResultMessage], tag: str) -> str:
    esc = html.escape
    match entry:
        case MessageEntry(message=UserMessage() as message):
            return (
                f'<div class="msg user"><div class="role">user{tag}</div>'
                f'<div class="text">{esc(_user_parts(message))}</div></div>'
            )
        case MessageEntry(message=AssistantMessage() as message):
            parts = []
            for part in message.content:
                if isinstance(part, TextPart):
                    parts.append(f'<div class="md">{markdown_html(part.text)}</div>')
                elif isinstance(part, ThinkingPart):
                    parts.append(f'<div class="thinking">{esc(part.thinking)}</div>')
                elif isinstance(part, ToolCall):
                    parts.append(_html_call(part, results.get(part.id)))
            if message.error:
                note = stop_note(message.stop_reason, message.error)
                parts.append(f'<div class="error">{esc(note)}</div>')
            return (
                f'<div class="msg assistant"><div class="role">assistant{tag}</div>'
                + "".join(parts)
                + "</div>"
            )
        case MessageEntry(message=ToolResultMessage()):
            return ""  # shown inside its call
        case MessageEntry(message=CustomMessage(kind=kind, payload=payload)):
            text = json.dumps(payload, ensure_ascii=False)[:500]
            return f'<p class="note">{esc(kind)}: {esc(text)}{tag}</p>'
        case CompactionEntry(summary=summary, tokens_before=before, tokens_after=after):
            return (
                f'<details class="note"><summary>context compacted ({before} → {after} '
                f"tokens)</summary>{_pre(summary)}</details>"
            )
        case ModelChangeEntry(model=model):
            return f'<p class="note">model: {esc(model)}</p>'
        case ModeChangeEntry(mode=mode):
            return f'<p class="note">mode: {esc(mode)}</p>'
        case NameEntry(name=name):
            return f'<p class="note">named: {esc(name)}</p>'
        case BranchEntry(summary=summary):
            note = f": {esc(summary)}" if summary else ""
            return f'<p class="note">went back to an earlier point{note}</p>'
        case CheckpointEntry(files=files, patch=patch) if files:
            rows = "".join(
                f"<li><code>{esc(f.path)}</code> {esc(f.status)} {esc(_counts(f))}</li>"
                for f in files
            )
            return (
                f'<details class="note checkpoint"><summary>{esc(_checkpoint_title(entry))}'
                f"</summary><ul>{rows}</ul>{_pre(patch) if patch else ''}</details>"
            )
        case _:
            return ""


def _checkpoint_title(entry: CheckpointEntry) -> str:
    """``turn 2 changed 2 files +10 -3`` (binary files count no lines)."""
    count = len(entry.files)
    what = "rewind" if entry.kind == "rewind" else "turn"
    added = sum(f.added or 0 for f in entry.files)
    removed = sum(f.removed or 0 for f in entry.files)
    return (
        f"{what} {entry.turn} changed {count} file{'s' if count != 1 else ''} +{added} -{removed}"
    )


def _counts(changed: ChangedFile) -> str:
    if changed.added is None:
        return "binary"
    return f"+{changed.added} -{changed.removed or 0}"


def _html_call(call: ToolCall, result: ToolResultMessage | None) -> str:
    esc = html.escape
    status = ""
    output = ""
    if result is not None:
        status = " (error)" if result.is_error else ""
        output = _pre(_result_text(result))
    return (
        f"<details><summary>{esc(call.name)}{status}</summary>{_pre(_args(call))}{output}</details>"
    )


def stop_note(stop_reason: str, error: str) -> str:
    """How an answer that ended in ``error`` says so: the stop reason and the error,
    once when they say the same (``aborted``, not ``aborted: aborted``)."""
    text = " ".join(error.split())
    if not text or text.lower() == stop_reason.lower():
        return stop_reason
    if text.lower().startswith(stop_reason.lower()):
        return text
    return f"{stop_reason}: {text}"


def markdown_html(text: str) -> str:
    """``text`` (a model's answer) as HTML, its Markdown rendered by markdown-it-py with
    raw HTML off: a tag in the text is shown as text and never becomes markup, and
    links with a scheme that runs code (``javascript:``…) are not made links. Images are
    left as text (the page loads nothing from elsewhere)."""
    global _MARKDOWN
    if _MARKDOWN is None:
        from markdown_it import MarkdownIt

        _MARKDOWN = (
            MarkdownIt("commonmark", {"html": False})
            .enable(["table", "strikethrough"])
            .disable("image")
        )
    return str(_MARKDOWN.render(text))


_MARKDOWN: Any = None
