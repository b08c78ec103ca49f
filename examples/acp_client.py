"""Drive ``skillkit acp`` the way an editor does, with the ACP SDK's client side.

    pip install 'skillkit-agent[acp]'
    python examples/acp_client.py

The model is a scripted one (written to model.yaml here), so it runs without a provider:
it asks to run a shell command, the "editor" allows it once, and the answer streams in.
See docs/editors.md.
"""

import asyncio
import os
import subprocess
from pathlib import Path

from acp import spawn_agent_process, text_block
from acp.schema import AllowedOutcome, RequestPermissionResponse


class Editor:
    async def session_update(self, session_id, update, **kwargs):
        if update.session_update == "agent_message_chunk":
            print(update.content.text, end="")
        elif update.session_update == "tool_call":
            print(f"[{update.kind}] {update.title}")

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        print(f"allow {tool_call.title}? yes, once")
        chosen = AllowedOutcome(outcome="selected", option_id="allow")
        return RequestPermissionResponse(outcome=chosen)


Path("model.yaml").write_text(
    "replies:\n"
    '  - tool_calls: [{name: bash, arguments: {command: "echo hi > hi.txt"}}]\n'
    '  - text: "Wrote hi.txt."\n'
)


async def main(folder):
    command = ["skillkit", "acp", "--model", "scripted:model.yaml", "--no-session"]
    quiet = {"stderr": subprocess.DEVNULL}
    # the SDK passes only a few variables on by default: the provider's key needs ours
    spawned = spawn_agent_process(Editor(), *command, env=os.environ, transport_kwargs=quiet)
    async with spawned as (conn, _):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(folder), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        return done.stop_reason


stop_reason = asyncio.run(main(Path.cwd().resolve()))
print(f"\n{stop_reason}: {Path('hi.txt').read_text().strip()}")
