"""A stdio MCP server that uses the client's side of MCP, written with the MCP SDK.

Every tool reports what the client answered, so a test reads it in the tool result:

- ``blocks`` — a result of three content blocks: two texts and a PNG image;
- ``make_note(name)`` — adds the resource ``note://NAME`` (and announces the change);
- ``roots`` — the client's roots (``roots/list``), one URI a line;
- ``sample(prompt)`` — asks the client's model (``sampling/createMessage``) and returns
  its answer, or the error the client gave;
- ``sample_with_tools(prompt)`` — the same, offering the model a tool of the server's;
- ``ask_name`` — asks the user for a name (form elicitation) and returns the action
  and the name;
- ``ask_four`` — asks four questions in one call (more than a client should answer);
- ``log(count)`` — sends ``count`` log messages (``log line N``), returns ``logged``;
- ``client_info`` — the client's name and version from ``initialize``.

A resource template ``file://docs/{name}`` whose ``name`` completes from ``alpha``,
``beta``, ``gamma`` (an argument ``boom`` fails), and server instructions
(``Always greet in French.``).
"""

from __future__ import annotations

import base64
import warnings
from typing import Annotated

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.server.mcpserver.resources import TextResource
from mcp_types import (
    Completion,
    CreateMessageResult,
    CreateMessageResultWithTools,
    ImageContent,
    ListRootsResult,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
    Tool,
)
from pydantic import BaseModel

warnings.simplefilter("ignore")  # the logging feature is deprecated in the 2026 protocol

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
    b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)
NAMES = ("alpha", "beta", "gamma")

app = MCPServer("features", instructions="Always greet in French.")


@app.tool()
def blocks() -> list[TextContent | ImageContent]:
    """Three blocks: two texts and an image."""
    return [
        TextContent(type="text", text="[first block]"),
        TextContent(type="text", text='{"second": "block"}'),
        ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"),
    ]


@app.tool()
async def make_note(name: str, ctx: Context) -> str:
    """Add the resource note://NAME."""
    app.add_resource(TextResource(uri=f"note://{name}", name=name, text=f"note {name}"))
    await ctx.notify_resources_changed()
    return f"made note://{name}"


def _ask_roots() -> ListRoots:
    return ListRoots()


@app.tool()
async def roots(found: Annotated[ListRootsResult, Resolve(_ask_roots)]) -> str:
    """The client's roots, one URI a line."""
    return "\n".join(str(root.uri) for root in found.roots) or "(no roots)"


def _said(result: CreateMessageResult | CreateMessageResultWithTools) -> str:
    content = result.content
    blocks = content if isinstance(content, list) else [content]
    return "model said: " + " ".join(getattr(b, "text", f"<{b.type}>") for b in blocks)


def _ask_model(prompt: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
    return Sample([message], max_tokens=200, system_prompt="Answer briefly.")


@app.tool()
async def sample(prompt: str, answer: Annotated[CreateMessageResult, Resolve(_ask_model)]) -> str:
    """Ask the client's model ``prompt``."""
    return _said(answer)


def _ask_model_with_tools(prompt: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
    tool = Tool(
        name="delete_everything",
        description="Delete every file.",
        input_schema={"type": "object", "properties": {}},
    )
    return Sample([message], max_tokens=200, tools=[tool])


@app.tool()
async def sample_with_tools(
    prompt: str, answer: Annotated[CreateMessageResultWithTools, Resolve(_ask_model_with_tools)]
) -> str:
    """Ask the client's model ``prompt``, offering it the tool ``delete_everything``."""
    return _said(answer)


class Name(BaseModel):
    name: str


def _ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@app.tool()
async def ask_name(answer: Annotated[ElicitationResult[Name], Resolve(_ask_name)]) -> str:
    """Ask the user for a name."""
    if isinstance(answer, AcceptedElicitation):
        return f"accept: {answer.data.name}"
    return str(answer.action)


def _ask_age() -> Elicit[Name]:
    return Elicit("Your age?", Name)


def _ask_town() -> Elicit[Name]:
    return Elicit("Your town?", Name)


def _ask_pet() -> Elicit[Name]:
    return Elicit("Your pet?", Name)


@app.tool()
async def ask_four(
    a: Annotated[ElicitationResult[Name], Resolve(_ask_name)],
    b: Annotated[ElicitationResult[Name], Resolve(_ask_age)],
    c: Annotated[ElicitationResult[Name], Resolve(_ask_town)],
    d: Annotated[ElicitationResult[Name], Resolve(_ask_pet)],
) -> str:
    """Ask four questions in one call."""
    return ",".join(str(x.action) for x in (a, b, c, d))


@app.tool()
async def log(count: int, ctx: Context) -> str:
    """Send ``count`` log messages."""
    for index in range(count):
        await ctx.info(f"log line {index}", logger_name="features")
    return "logged"


@app.tool()
async def client_info(ctx: Context) -> str:
    """The client's name and version."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return f"{info.name} {info.version}" if info is not None else "(unknown)"


@app.resource("file://docs/{name}")
def doc(name: str) -> str:
    """A document by name."""
    return f"document {name}"


@app.completion()
async def complete(ref: object, argument: object, context: object) -> Completion | None:
    if getattr(argument, "name", "") == "boom":
        raise ValueError("the completion failed")
    if isinstance(ref, ResourceTemplateReference) and getattr(argument, "name", "") == "name":
        typed = str(getattr(argument, "value", ""))
        return Completion(values=[n for n in NAMES if n.startswith(typed)])
    return None


if __name__ == "__main__":
    app.run()
