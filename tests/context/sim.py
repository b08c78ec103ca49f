"""A simulated provider with a context window, played by the public `FunctionAdapter`.

Normal turns follow a task: ``steps`` turns, each calling ``read_file`` on the next file,
then a final answer. Each request is measured (message estimate times ``size_factor``,
standing in for the provider's own tokenizer); a request over ``window`` is answered
with ``stop_reason="context_overflow"``, as real providers do. Every request that is
answered is checked against OpenAI's and Anthropic's wire rules. Summary requests
(`is_summary_request`) get a structured summary naming the request number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.context import CompactionSettings, is_summary_request, message_tokens
from skillkit.context.tokens import prompt_overhead
from skillkit.models import LLMRequest, TokenUsage, ToolCall
from tests.context.wire import wire_problems

FILE_CHARS = 1600  # about 400 tokens per read_file result


def file_body(path: str) -> str:
    line = f"# {path}: def handler(event): return process(event)  # some code\n"
    return (line * (FILE_CHARS // len(line) + 1))[:FILE_CHARS]


@tool(thread=False)
async def read_file(path: str) -> str:
    """Read a file."""
    return file_body(path)


def request_tokens(request: LLMRequest) -> int:
    """The full size of a request (no usage shortcut)."""
    total = prompt_overhead(request.system_prompt, request.tools)
    return total + sum(message_tokens(m) for m in request.messages)


@dataclass
class SimulatedProvider:
    window: int
    steps: int
    size_factor: float = 1.0
    report_usage: bool = True
    fail_summaries: bool = False
    summary_text: Callable[[int, LLMRequest], str] | None = None
    step: int = 0
    overflows: int = 0
    problems: list[str] = field(default_factory=list)
    summary_requests: list[LLMRequest] = field(default_factory=list)
    turn_requests: list[LLMRequest] = field(default_factory=list)
    step_of_request: list[int] = field(default_factory=list)
    largest: int = 0

    def __post_init__(self) -> None:
        self.adapter = FunctionAdapter(self.reply, chunk_size=512, model="sim")

    def reply(self, request: LLMRequest) -> Reply:
        if is_summary_request(request):
            self.summary_requests.append(request)
            number = len(self.summary_requests)
            if self.fail_summaries:
                return Reply(error="summary service unavailable")
            if self.summary_text is not None:
                text = self.summary_text(number, request)
            else:
                text = (
                    f"## Goal\nRead every file of the project.\n## Progress\n"
                    f"Summary number {number}.\n## Next steps\nKeep reading."
                )
            return Reply(text=text, usage=TokenUsage(input=request_tokens(request), output=50))
        size = int(request_tokens(request) * self.size_factor)
        self.turn_requests.append(request)
        self.step_of_request.append(self.step)
        if size > self.window:
            self.overflows += 1
            return Reply(
                error=f"prompt is too long: {size} tokens > {self.window} maximum",
                stop_reason="context_overflow",
                usage=TokenUsage(),
            )
        self.largest = max(self.largest, size)
        self.problems.extend(wire_problems(request.messages))
        usage = TokenUsage(input=size, output=30) if self.report_usage else TokenUsage()
        step = self.step
        self.step += 1
        if step < self.steps:
            call = ToolCall(
                id=f"call_{step}", name="read_file", arguments={"path": f"src/f{step}.py"}
            )
            return Reply(text=f"Reading file {step}.", tool_calls=[call], usage=usage)
        return Reply(text="All files read.", usage=usage)


def make_runner(
    provider: SimulatedProvider, settings: CompactionSettings, **kwargs: object
) -> AgentRunner:
    return AgentRunner(
        AgentConfig(model="sim", max_iterations=provider.steps + 20),
        adapter=provider.adapter,
        tools=[read_file],
        compaction=settings,
        **kwargs,  # type: ignore[arg-type]
    )
