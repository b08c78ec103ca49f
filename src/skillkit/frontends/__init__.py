"""The faces of SkillKit: how a person or a program meets a running agent.

- `skillkit.frontends.setup` — the ``skillkit`` command's agent, assembled through the
  plugin manager (built-in plugin, installed plugins, trusted project plugins) with the
  permission gate in front of every tool call;
- `skillkit.frontends.terminal` — rich rendering of a run (a reusable event sink);
- `skillkit.frontends.interactive` — the interactive terminal session, whose slash
  commands come from the plugins' command registry, with the terminal's own
  (`skillkit.frontends.commands`) registered over them;
- `skillkit.frontends.trust_prompt` — the question whether a project's own plugins may run;
- `skillkit.frontends.print_mode` — one-shot runs: the final answer, or JSON events;
- `skillkit.frontends.agent_session` — `AgentSession`, the one object every face drives
  (commands, the event stream, ui requests), and `skillkit.frontends.subscription`, one
  reader of its stream.

The built-in plugin registers the interactive, print and JSON faces as frontends, so
a plugin can replace any of them. Faces sit above the agent: each is handed an
`AgentSession` (``Frontend.run(session)``) — never the runner — drives it through its
methods and its one command table (`skillkit.frontends.session_commands`), and reads
its one event stream; only the assembly (`skillkit.frontends.setup`) and the session
hold the runner. Nothing below this package knows the faces exist. Importing this
package imports nothing heavy; each face imports its own dependencies.
"""
