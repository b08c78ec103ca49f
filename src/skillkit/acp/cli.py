"""``skillkit acp``: serve this machine's SkillKit agent to an editor over ACP (stdio).

    skillkit acp [--model MODEL] [--offer-model MODEL]... [--permission-mode MODE] ...

The editor starts the command and speaks JSON-RPC on its stdin and stdout. Stdout
carries protocol frames only: at start the process keeps a private copy of its stdout
for the protocol and points file descriptor 1 at stderr, so a stray ``print`` or a
child process's output can never corrupt a frame; stdin is replaced by ``/dev/null``
for the same reason. Logs go to stderr (``--log-file`` sends them to a file instead).
Exit code 0 when the editor closes the connection, 2 for bad flags or a missing SDK.

Only argparse is imported up front (the parser is built for every ``skillkit`` call).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from skillkit.frontends.args import agent_options, positive_int

if TYPE_CHECKING:
    from skillkit.acp.settings import AcpSettings

__all__ = ["register", "run_acp", "serve_acp"]

_EXIT_OK, _EXIT_USAGE = 0, 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``acp`` subcommand."""
    parser = subparsers.add_parser(
        "acp",
        help="serve the agent to an editor over the Agent Client Protocol (stdio)",
        description="An ACP agent on stdin/stdout for editors (Zed, JetBrains IDEs, Neovim, "
        "Emacs): each editor session is a SkillKit session in the folder the editor names, "
        "with its settings, skills, plugins, permission gate and sandbox. Approvals are asked "
        "in the editor. Needs the acp extra: pip install 'skillkit-agent[acp]'.",
    )
    parser.add_argument("--model", metavar="MODEL", help="the model, as for 'skillkit --model'")
    parser.add_argument(
        "--offer-model",
        action="append",
        default=[],
        metavar="MODEL",
        dest="offered_models",
        help="a model the editor may switch to (repeat for several)",
    )
    parser.add_argument("--base-url", metavar="URL", help="as for 'skillkit --base-url'")
    parser.add_argument(
        "--api-key-env", metavar="NAME", help="read the API key from the variable NAME"
    )
    parser.add_argument(
        "--max-turns", metavar="N", type=positive_int, help="stop a run after N model calls"
    )
    parser.add_argument(
        "--permission-mode",
        choices=("default", "accept_edits", "plan"),
        help="the permission mode each session starts in (the editor can switch it)",
    )
    parser.add_argument("--allow", action="append", default=[], metavar="RULE")
    parser.add_argument("--deny", action="append", default=[], metavar="RULE")
    parser.add_argument("--sandbox", choices=("auto", "on", "off"))
    parser.add_argument("--no-session", action="store_true", help="save no session")
    parser.add_argument(
        "--no-tools", action="store_false", dest="tools", help="offer no built-in tools"
    )
    parser.add_argument(
        "--ui-timeout",
        metavar="SECONDS",
        type=_seconds,
        help="deny an approval the editor does not answer within SECONDS (default: 300)",
    )
    parser.add_argument("--log-file", metavar="PATH", help="write logs here instead of stderr")
    parser.add_argument("--verbose", action="store_true", help="log more (debug level)")
    parser.set_defaults(handler=run_acp)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def run_acp(args: argparse.Namespace) -> int:
    """Serve ACP on stdin/stdout until the editor closes it; the exit code."""
    import asyncio
    import importlib.util

    if importlib.util.find_spec("acp") is None:
        sys.stderr.write(
            "skillkit: error: acp needs the Agent Client Protocol SDK: "
            "pip install 'skillkit-agent[acp]'\n"
        )
        return _EXIT_USAGE
    protocol_in, protocol_out = _take_stdio()
    handler: logging.Handler = (
        logging.FileHandler(args.log_file, encoding="utf-8")
        if args.log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(_LogLines())
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, handlers=[handler]
    )

    def settings() -> AcpSettings:
        from skillkit.acp.settings import AcpSettings

        return AcpSettings(
            options=agent_options(args, session="off" if args.no_session else "new"),
            models=tuple(args.offered_models),
            ui_timeout=args.ui_timeout if args.ui_timeout is not None else 300.0,
        )

    try:
        asyncio.run(serve_acp(settings, read_fd=protocol_in, write_fd=protocol_out))
    except KeyboardInterrupt:
        pass
    return _EXIT_OK


async def serve_acp(
    settings: AcpSettings | Callable[[], AcpSettings], *, read_fd: int, write_fd: int
) -> None:
    """Run the ACP agent of ``settings`` (or of what ``settings()`` returns, called once
    the first ``initialize`` is answered) on the two descriptors until the client closes
    its end, then close every session. A first ``initialize`` is answered before the
    ACP SDK or the agent's modules are imported (`skillkit.acp.handshake`), so an editor
    hears back at once."""
    from skillkit import __version__
    from skillkit.acp.handshake import initialize_answer
    from skillkit.acp.transport import StdioTransport

    transport = StdioTransport(read_fd, write_fd)
    try:
        first = await transport.receive()
        if first is None:
            return
        answered: dict[str, object] | None = None
        if first.get("method") == "initialize" and first.get("id") is not None:
            params = first.get("params")
            answer = initialize_answer(params, __version__)
            await transport.send({"jsonrpc": "2.0", "id": first["id"], **answer})
            if "result" in answer and isinstance(params, dict):
                answered = params
        else:
            transport.push_back(first)

        from acp import run_agent

        from skillkit.acp.agent import SkillKitAcpAgent

        agent = SkillKitAcpAgent(settings if not callable(settings) else settings())
        if answered is not None:
            agent.initialized(answered)
        try:
            await run_agent(agent, transport, use_unstable_protocol=True)
        finally:
            await agent.aclose()
    finally:
        await transport.close()


class _LogLines(logging.Formatter):
    """``skillkit: warning: MESSAGE`` lines (a traceback follows as written), with the
    environment's secrets redacted."""

    def format(self, record: logging.LogRecord) -> str:
        from skillkit.secrets import Redactor

        text = super().format(record)
        return f"skillkit: {record.levelname.lower()}: {Redactor.from_environment().redact(text)}"


def _take_stdio() -> tuple[int, int]:
    """Private copies of stdin and stdout for the protocol; descriptor 1 then points at
    stderr and descriptor 0 at ``/dev/null``."""
    sys.stdout.flush()
    protocol_in = os.dup(0)
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    return protocol_in, protocol_out
