"""The interactive terminal session: read a prompt, run it, draw the run, repeat.

Input is read with prompt_toolkit (line editing, history); each run is drawn by a
`TerminalRenderer` attached to the runner's event bus. Keys:

- Enter sends the prompt; the answer streams in, followed by a usage footer.
- Ctrl-C during a run aborts it (`AgentRunner.abort`); a second Ctrl-C exits.
- Ctrl-C at the prompt arms exit: a second Ctrl-C in a row exits.
- Ctrl-D at an empty prompt, ``/quit`` or ``/exit`` exits.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from skillkit.frontends.interrupt import on_interrupt
from skillkit.frontends.terminal import TerminalRenderer

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from skillkit.agent.runner import AgentRunner

__all__ = ["COMMANDS", "InteractiveSession"]

COMMANDS: dict[str, str] = {
    "/help": "show this help",
    "/quit": "leave SkillKit (also /exit, Ctrl-D)",
}
_QUIT = frozenset({"/quit", "/exit"})
_PROMPT = ("bold ansicyan", "› ")


class InteractiveSession:
    """Runs prompts typed by the user on ``runner`` until the user leaves.

    The session adds ``renderer`` to the runner's event sinks for its lifetime. `run`
    returns the process exit code (0 whichever way the user leaves).
    """

    def __init__(
        self,
        runner: AgentRunner,
        renderer: TerminalRenderer | None = None,
        *,
        title: str = "",
    ) -> None:
        self.runner = runner
        self.renderer = renderer if renderer is not None else TerminalRenderer()
        self.title = title

    async def run(self) -> int:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.formatted_text import FormattedText
        from prompt_toolkit.history import InMemoryHistory

        session: PromptSession[str] = PromptSession(
            FormattedText([_PROMPT]), history=InMemoryHistory()
        )
        remove_sink = self.runner.events.add_sink(self.renderer)
        try:
            return await self._loop(session)
        finally:
            remove_sink()

    async def _loop(self, session: PromptSession[str]) -> int:
        renderer = self.renderer
        if self.title:
            renderer.info(self.title)
        renderer.info("Enter a prompt. Ctrl-C aborts a run; Ctrl-D or /quit exits; /help for help.")
        exit_armed = False
        while True:
            try:
                text = (await session.prompt_async()).strip()
            except KeyboardInterrupt:
                if exit_armed:
                    return 0
                exit_armed = True
                renderer.notice("Press Ctrl-C again to exit (or Ctrl-D, /quit).")
                continue
            except EOFError:
                return 0
            if not text:
                continue
            exit_armed = False
            if text.startswith("/"):
                command = text.split()[0]
                if command in _QUIT:
                    return 0
                if command == "/help":
                    for name, description in COMMANDS.items():
                        renderer.info(f"{name:8} {description}")
                    renderer.info("Ctrl-C   abort the running prompt; twice to exit")
                else:
                    renderer.notice(f"unknown command {command}; /help lists the commands")
                continue
            quit_now, aborted = await self._run_prompt(text)
            if quit_now:
                return 0
            exit_armed = aborted
            renderer.console.print()

    async def _run_prompt(self, text: str) -> tuple[bool, bool]:
        """Run one prompt; returns (the user asked to exit, the run was aborted)."""
        runner = self.runner
        task = asyncio.ensure_future(self._drain(text))
        presses = 0

        def interrupted() -> None:
            nonlocal presses
            presses += 1
            if presses == 1:
                runner.abort("interrupted by the user")
                self.renderer.notice("aborting… (Ctrl-C again to exit)")
            else:
                task.cancel()

        with on_interrupt(interrupted):
            try:
                await task
            except asyncio.CancelledError:
                if presses < 2:
                    raise
                return True, True
        return False, presses > 0

    async def _drain(self, text: str) -> None:
        async for _ in self.runner.chat_stream_events(text):
            pass
