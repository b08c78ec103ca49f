"""web_search: each built-in provider against a local server speaking its API."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

import pytest

from skillkit.secrets import Redactor
from skillkit.tools.base import ToolContext, ToolError, ToolResult
from skillkit.tools.builtin.websearch import (
    BraveSearch,
    ExaSearch,
    SearchError,
    SearchProvider,
    SearchResult,
    SearxngSearch,
    TavilySearch,
    WebSearchTool,
    find_provider,
)

from .webserver import send, serve

pytestmark = pytest.mark.timeout(30)

BRAVE_ANSWER = {
    "type": "search",
    "query": {"original": "skillkit agent"},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "SkillKit <strong>agent</strong>",
                "url": "https://example.org/skillkit",
                "description": "A <strong>Python</strong> agent SDK.",
                "language": "en",
            },
            {"title": "Second", "url": "https://example.org/2", "description": "More."},
        ],
    },
}
TAVILY_ANSWER = {
    "query": "skillkit agent",
    "results": [
        {
            "title": "SkillKit",
            "url": "https://example.org/skillkit",
            "content": "A Python agent SDK.",
            "score": 0.9,
        }
    ],
    "response_time": 0.5,
}
SEARXNG_ANSWER = {
    "query": "skillkit agent",
    "number_of_results": 1,
    "results": [
        {
            "title": "SkillKit",
            "url": "https://example.org/skillkit",
            "content": "A Python agent SDK.",
            "engine": "duckduckgo",
        }
    ],
}


def answering(payload: object, seen: list[dict[str, object]]):  # type: ignore[no-untyped-def]
    def route(handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        parts = urlsplit(handler.path)
        seen.append(
            {
                "method": handler.command,
                "path": parts.path,
                "query": parse_qs(parts.query),
                "headers": dict(handler.headers.items()),
                "body": json.loads(body) if body else None,
            }
        )
        send(handler, json.dumps(payload), content_type="application/json")

    return route


async def run(tool: WebSearchTool, **arguments: object) -> ToolResult:
    args = tool.args_model.model_validate(arguments)
    return await tool.execute(args, ToolContext("call_1", tool.name))


async def test_brave_speaks_the_brave_api() -> None:
    seen: list[dict[str, object]] = []
    with serve({"/res/v1/web/search": answering(BRAVE_ANSWER, seen)}, host="127.0.0.1") as s:
        brave = BraveSearch("brave-key-123456", endpoint=s.url("/res/v1/web/search"))
        results = await brave.search("skillkit agent", 5)
    assert results == [
        SearchResult("SkillKit agent", "https://example.org/skillkit", "A Python agent SDK."),
        SearchResult("Second", "https://example.org/2", "More."),
    ]
    request = seen[0]
    assert request["method"] == "GET"
    assert request["query"] == {"q": ["skillkit agent"], "count": ["5"]}
    headers = request["headers"]
    assert isinstance(headers, dict) and headers["X-Subscription-Token"] == "brave-key-123456"


async def test_tavily_speaks_the_tavily_api() -> None:
    seen: list[dict[str, object]] = []
    with serve({"/search": answering(TAVILY_ANSWER, seen)}, host="127.0.0.1") as s:
        tavily = TavilySearch("tvly-key-123456", endpoint=s.url("/search"))
        results = await tavily.search("skillkit agent", 3)
    assert results == [
        SearchResult("SkillKit", "https://example.org/skillkit", "A Python agent SDK.")
    ]
    request = seen[0]
    assert request["method"] == "POST"
    assert request["body"] == {"query": "skillkit agent", "max_results": 3}
    headers = request["headers"]
    assert isinstance(headers, dict) and headers["Authorization"] == "Bearer tvly-key-123456"


EXA_ANSWER = {
    "requestId": "r1",
    "resolvedSearchType": "neural",
    "results": [
        {
            "id": "https://example.org/skillkit",
            "title": "SkillKit",
            "url": "https://example.org/skillkit",
            "publishedDate": "2026-01-01T00:00:00.000Z",
            "highlights": ["A Python agent SDK.", "Skills in Markdown."],
            "highlightScores": [0.5, 0.4],
        }
    ],
}


async def test_exa_speaks_the_exa_api() -> None:
    seen: list[dict[str, object]] = []
    with serve({"/search": answering(EXA_ANSWER, seen)}, host="127.0.0.1") as s:
        exa = ExaSearch("exa-key-1234567", endpoint=s.url("/search"))
        results = await exa.search("skillkit agent", 4)
    assert results == [
        SearchResult(
            "SkillKit", "https://example.org/skillkit", "A Python agent SDK. … Skills in Markdown."
        )
    ]
    request = seen[0]
    assert request["method"] == "POST"
    body = request["body"]
    assert isinstance(body, dict)
    assert body["query"] == "skillkit agent" and body["numResults"] == 4
    assert body["contents"] == {"highlights": True}
    headers = request["headers"]
    assert isinstance(headers, dict) and headers["x-api-key"] == "exa-key-1234567"


async def test_searxng_speaks_the_searxng_json_api() -> None:
    seen: list[dict[str, object]] = []
    with serve({"/search": answering(SEARXNG_ANSWER, seen)}, host="127.0.0.1") as s:
        searxng = SearxngSearch(s.url("/"))
        results = await searxng.search("skillkit agent", 3)
    assert results[0].url == "https://example.org/skillkit"
    assert seen[0]["query"] == {"q": ["skillkit agent"], "format": ["json"]}


async def test_the_tool_lists_results_as_untrusted_web_content() -> None:
    seen: list[dict[str, object]] = []
    with serve({"/search": answering(SEARXNG_ANSWER, seen)}, host="127.0.0.1") as s:
        tool = WebSearchTool(environ={"SEARXNG_URL": s.url("/")}, redactor=Redactor())
        result = await run(tool, query="skillkit agent")
    assert result.output == (
        '<web_content source="web_search:searxng" trust="untrusted">\n'
        "1. SkillKit\n   https://example.org/skillkit\n   A Python agent SDK.\n"
        "</web_content>"
    )
    assert result.details["results"][0]["url"] == "https://example.org/skillkit"


async def test_an_api_error_is_one_line_without_the_key() -> None:
    def refuse(handler: BaseHTTPRequestHandler) -> None:
        send(handler, '{"error": "bad key"}', status=401, content_type="application/json")

    with serve({"/s": refuse}, host="127.0.0.1") as s:
        tool = WebSearchTool(BraveSearch("brave-key-123456", endpoint=s.url("/s")))
        with pytest.raises(ToolError) as caught:
            await run(tool, query="x")
    assert str(caught.value) == "web_search: brave answered HTTP 401"


async def test_no_provider_configured_is_a_clear_one_line_error() -> None:
    tool = WebSearchTool(environ={}, redactor=Redactor())
    with pytest.raises(ToolError) as caught:
        await run(tool, query="anything")
    message = str(caught.value)
    assert "\n" not in message
    assert "no web search provider is configured" in message
    assert "BRAVE_API_KEY" in message and "SEARXNG_URL" in message


def test_the_environment_picks_the_provider() -> None:
    assert isinstance(find_provider({"BRAVE_API_KEY": "k" * 10}, plugins=[]), BraveSearch)
    assert isinstance(find_provider({"TAVILY_API_KEY": "k" * 10}, plugins=[]), TavilySearch)
    both = {"BRAVE_API_KEY": "k" * 10, "SEARXNG_URL": "http://127.0.0.1:1"}
    assert isinstance(find_provider(both, plugins=[]), BraveSearch)
    chosen = {**both, "SKILLKIT_WEB_SEARCH": "searxng"}
    assert isinstance(find_provider(chosen, plugins=[]), SearxngSearch)
    with pytest.raises(SearchError, match="'tavily' is not configured"):
        find_provider({**both, "SKILLKIT_WEB_SEARCH": "tavily"}, plugins=[])
    with pytest.raises(SearchError, match="known providers: brave, tavily, exa, searxng"):
        find_provider({"SKILLKIT_WEB_SEARCH": "nope"}, plugins=[])


async def test_a_plugin_provider_is_used_when_no_built_in_is_configured() -> None:
    class Echo:
        name = "echo"

        async def search(self, query: str, count: int) -> list[SearchResult]:
            return [SearchResult(query, "https://example.org/echo")]

    def factory(env: object) -> SearchProvider | None:
        return Echo()

    def broken(env: object) -> SearchProvider | None:
        raise RuntimeError("plugin bug")

    provider = find_provider({}, plugins=[("broken", broken), ("echo", factory)])
    assert provider.name == "echo"
    result = await run(WebSearchTool(provider, redactor=Redactor()), query="hello")
    assert "1. hello\n   https://example.org/echo" in result.output


async def test_a_query_holding_a_secret_is_not_sent() -> None:
    class Never:
        name = "never"

        async def search(self, query: str, count: int) -> list[SearchResult]:
            raise AssertionError("must not be called")

    tool = WebSearchTool(Never(), redactor=Redactor({"GITHUB_TOKEN": "ghp_0123456789abcdef"}))
    with pytest.raises(ToolError, match="secret GITHUB_TOKEN"):
        await run(tool, query="why does ghp_0123456789abcdef fail")


async def test_native_search_called_as_a_function_says_why_in_one_line() -> None:
    tool = WebSearchTool(environ={"SKILLKIT_WEB_SEARCH": "native"}, redactor=Redactor())
    assert tool.native and tool.server_tool == ""  # no judge: never offered natively
    with pytest.raises(ToolError) as caught:
        await run(tool, query="anything")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("web_search: native web search is configured but was not offered")
    assert "allow the rule `web_search`" in message


def test_native_search_falls_back_to_a_configured_provider() -> None:
    env = {"SKILLKIT_WEB_SEARCH": "native", "SEARXNG_URL": "http://127.0.0.1:1"}
    assert isinstance(find_provider(env, plugins=[]), SearxngSearch)
    with pytest.raises(SearchError, match="native web search is configured"):
        find_provider({"SKILLKIT_WEB_SEARCH": "native"}, plugins=[])
