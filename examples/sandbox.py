"""Run commands in SkillKit's OS sandbox and watch what it refuses.

    python examples/sandbox.py

Where bubblewrap is installed (Debian/Ubuntu: apt-get install bubblewrap) the write
outside the workspace and the network connection fail; elsewhere ``auto`` runs the
commands unconfined and says why.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from skillkit.runtime import BashRuntime, Sandbox


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        sandbox = Sandbox(mode="auto", workspace=workspace)
        print("sandbox:", sandbox.describe())
        runtime = BashRuntime(sandbox=sandbox)
        try:
            for command in (
                "echo hello > inside.txt && cat inside.txt",
                "echo oops > ~/skillkit-sandbox-example.txt",
                "exec 3<>/dev/tcp/1.1.1.1/80 && echo connected",
            ):
                result = await runtime.execute(command, cwd=workspace, timeout=10)
                print(f"$ {command}\n  {result.status}: {result.output.strip() or '(no output)'}")
        finally:
            await runtime.aclose()
            sandbox.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    finally:  # only unconfined runs could have written it
        Path("~/skillkit-sandbox-example.txt").expanduser().unlink(missing_ok=True)
