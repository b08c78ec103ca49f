"""The faces of SkillKit: how a person or a program meets a running agent.

- `skillkit.frontends.terminal` — rich rendering of a run (a reusable event sink);
- `skillkit.frontends.interactive` — the interactive terminal session;
- `skillkit.frontends.print_mode` — one-shot runs: the final answer, or JSON events.

Faces sit above the agent: they drive an `AgentRunner` and observe its events, and
nothing below this package knows they exist. Importing this package imports nothing
heavy; each face imports its own dependencies.
"""
