"""A provider's own web search (a server tool), as the adapters report it.

A request whose tools include a `ServerToolSchema` naming ``"web_search"`` carries the
provider's search tool in its place (Anthropic's ``web_search`` server tool, the
Responses API's ``web_search`` tool). The provider runs the searches itself, so its
calls are never `ToolCall` values: nothing for SkillKit to execute, nothing to answer.
What they found comes back as text: `SearchReport` gathers the queries, results,
citations and errors of one reply, and the adapter streams them after the answer as
one more text block — so they are in the transcript, the answer, and the next turn's
context, for every face and every provider the conversation later moves to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skillkit.models import ServerToolSchema, StreamEvent, ToolSchema

__all__ = ["WEB_SEARCH", "SearchReport", "server_tool_of"]

WEB_SEARCH = "web_search"

_MAX_LISTED = 10


def server_tool_of(schema: ToolSchema) -> str:
    """The server tool ``schema`` asks for ("" for an ordinary function tool)."""
    return schema.server_tool if isinstance(schema, ServerToolSchema) else ""


@dataclass
class SearchReport:
    """The provider's searches in one reply (see the module docs)."""

    queries: list[str] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)
    cited: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    searches: int = 0

    def searched(self, query: str) -> None:
        self.searches += 1
        query = " ".join(query.split())
        if query and query not in self.queries:
            self.queries.append(query)

    def found(self, url: object, title: object) -> None:
        if isinstance(url, str) and url:
            self.results.setdefault(url, title if isinstance(title, str) else "")

    def cite(self, url: object, title: object) -> None:
        if isinstance(url, str) and url:
            self.cited.setdefault(url, title if isinstance(title, str) else "")

    def failed(self, code: object) -> None:
        text = code if isinstance(code, str) and code else "unknown error"
        if text not in self.errors:
            self.errors.append(text)

    def text(self) -> str:
        """The report as Markdown ("" when the provider did not search): the queries,
        then the cited sources (or, without citations, the first results found)."""
        if not self.searches and not self.cited and not self.errors:
            return ""
        lines = []
        if self.queries:
            shown = "; ".join(f'"{q}"' for q in self.queries)
            lines.append(f"Web search (by the provider): {shown}")
        else:
            lines.append("Web search (by the provider)")
        sources = self.cited or dict(list(self.results.items())[:_MAX_LISTED])
        if sources:
            lines.append("Sources:" if self.cited else "Results:")
            for url, title in sources.items():
                label = " ".join(title.replace("]", ")").replace("[", "(").split()) or url
                lines.append(f"- [{label}]({url})")
        for error in self.errors:
            lines.append(f"The search failed: {error}")
        return "\n".join(lines)

    def events(self) -> list[StreamEvent]:
        """The report as one text block of stream events (none when it is empty)."""
        text = self.text()
        if not text:
            return []
        text = "\n\n" + text
        return [
            StreamEvent(type="text_start"),
            StreamEvent(type="text_delta", content=text),
            StreamEvent(type="text_end", content=text),
        ]
