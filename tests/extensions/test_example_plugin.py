"""The example plugin package, installed with pip into a fresh environment, then used.

The temporary environment sees this environment's packages (SkillKit, pip, the build
backend) through a ``.pth`` file, so nothing is downloaded: pip builds and installs the
plugin with ``--no-index --no-deps --no-build-isolation``. SkillKit then runs inside
the temporary environment and must find the plugin by its entry point alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "skillkit-example-plugin"

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path

    from skillkit import AgentConfig, AgentRunner
    from skillkit.adapters.scripted import Reply, ScriptedAdapter
    from skillkit.commands import CommandContext
    from skillkit.extensions import PluginManager, TrustStore
    from skillkit.models import ToolResultMessage

    project, trust_file = Path(sys.argv[1]), Path(sys.argv[2])

    async def main():
        manager = PluginManager.for_project(project, store=TrustStore(trust_file))
        model = ScriptedAdapter([
            Reply(tool_calls=[("word_count", {"text": "one two three"})]),
            Reply(tool_calls=[("read", {"path": ".env"})]),
            "all done",
        ])
        runner = AgentRunner(AgentConfig(), model)
        manager.attach(runner)
        ctx = CommandContext(runner=runner, manager=manager)
        commands = manager.registries.commands
        response = await runner.chat("count, then peek at the secrets")
        results = [m.text for m in runner.messages if isinstance(m, ToolResultMessage)]
        wc = await commands.dispatch("/wc four little words here", ctx)
        switched = await commands.dispatch("/model echo", ctx)
        echoed = await runner.chat("is anyone there?")
        skills = await commands.dispatch("/skills", ctx)
        plugins = await commands.dispatch("/plugins", ctx)
        print(json.dumps({
            "answer": response.text,
            "tool_results": results,
            "wc": wc.output,
            "switched": switched.output,
            "echo": echoed.text,
            "skills": skills.output,
            "plugins": plugins.output,
            "failures": [str(f) for f in manager.failures],
        }))

    asyncio.run(main())
    """
)


def make_environment(root: Path) -> Path:
    """A new virtual environment that also sees this one's packages; returns its python."""
    venv.create(root, with_pip=False, symlinks=True)
    python = root / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = sysconfig.get_paths()["purelib"]
    (Path(site) / "_skillkit_dev_environment.pth").write_text(
        f"import site; site.addsitedir({here!r})\n"
    )
    return python


def install_example(root: Path) -> Path:
    """A new environment in ``root`` with the example plugin installed from its folder
    (offline); returns its python."""
    python = make_environment(root)
    install = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            "--no-cache-dir",
            "--disable-pip-version-check",
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert install.returncode == 0, install.stderr
    return python


@pytest.mark.timeout(300)
def test_example_plugin_installs_and_runs_with_skillkit(tmp_path: Path) -> None:
    pytest.importorskip("hatchling", reason="the example plugin builds with hatchling")
    python = install_example(tmp_path / "env")
    # installed there, not here
    here = subprocess.run(
        [sys.executable, "-c", "import skillkit_example_plugin"], capture_output=True
    )
    assert here.returncode != 0

    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text("SECRET=1\n")
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [str(python), str(script), str(project), str(tmp_path / "trust.json")],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)

    assert out["failures"] == []
    assert out["answer"] == "all done"
    assert out["tool_results"] == ["3 words", "read: .env files are off limits"]
    assert out["wc"] == "4 words"
    assert out["switched"] == "using adapter 'echo' from example"
    assert out["echo"] == "echo: is anyone there?"
    assert "/skill:release-notes  Write release notes" in out["skills"]
    plugins = out["plugins"].splitlines()
    assert "example 1.0.0 (entry point: skillkit-example-plugin)" in plugins
    index = plugins.index("example 1.0.0 (entry point: skillkit-example-plugin)")
    assert plugins[index + 1 : index + 4] == [
        "  tools: word_count",
        "  commands: wc",
        "  adapters: echo",
    ]
    assert plugins[index + 4].startswith("  skill sources: ")
    assert plugins[index + 4].endswith("/site-packages/skillkit_example_plugin/skills")
    assert plugins[index + 5] == "  hooks: before_tool_call"


def test_in_code_plugin_example_runs() -> None:
    script = EXAMPLE.parent / "in_code.py"
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "roll: rolled 4 on a d20 (checked by dice)",
        "roll: no dice with more than 100 sides",
        "You rolled a 4; the d1000 was refused.",
        "2 roll(s) so far",
    ]
