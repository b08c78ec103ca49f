"""`ModelProfile`: how requests are shaped for one small model, without overriding the user.

A 135M model does better with a short system prompt and two tools than with SkillKit's
prompt for capable models and its ten built-in tools. A profile shortens exactly those
two defaults of SkillKit's and nothing the user chose:

- the system prompt: where it begins with SkillKit's own default prompt
  (`SKILLKIT_DEFAULT_PROMPT`), that part is replaced by the profile's short one; what
  follows (skills, the project's ``AGENTS.md``, ``--append-system-prompt``) is kept. A
  prompt the user set (``--system-prompt``, ``AgentConfig.system_prompt``) does not
  begin with SkillKit's and is sent as it is.
- the tools: SkillKit's own built-in tools (``own_tools``) other than the profile's
  ``tools`` are left out; every other tool -- passed in code, from a plugin, MCP, the
  skill tool -- is offered as given.

`ModelProfile.shape` returns the shaped request and one line per change, which the
adapter shows once (see `skillkit.local.adapter.LocalAdapter`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from skillkit.models import LLMRequest

__all__ = ["SKILLKIT_DEFAULT_PROMPT", "ModelProfile"]

SKILLKIT_DEFAULT_PROMPT = """\
You are SkillKit, an agent that helps the user by reading, running and changing things \
on their computer with the tools you are given.
- Use the tools to look before you answer; do not guess at file contents or command output.
- Prefer small, verifiable steps; say what you changed and how you checked it.
- When a skill fits the task, read it with the skill tool and follow it.
- If a request is unclear or risky, ask before acting."""
"""SkillKit's default system prompt, as the agent sends it when none is configured (the
same text as ``skillkit.extensions.builtin.DEFAULT_SYSTEM_PROMPT``, which lives in a
layer above this one; a test keeps the two equal)."""


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """How requests are shaped for one small model.

    ``tools``: the names of SkillKit's built-in tools it is offered (None: all);
    ``own_tools``: the names of SkillKit's built-in tools (only these are ever left
    out); ``system_prompt``: the prompt sent in place of SkillKit's default one (None:
    SkillKit's); ``replaces``: the default prompt it replaces; ``options``: request
    options the request does not set itself (``{"stop": ["\\n\\n"]}`` ends a reply at
    its first blank line); ``grounded``: answers are checked against the request (see
    `skillkit.local.grounding`); ``call_first``: a reply to the user is a tool call
    constrained by the tools' schemas (see `skillkit.local.constrained`);
    ``drop_sections``: headings of SkillKit's own generated prompt sections (such as
    ``# Environment``) left out when SkillKit's default prompt is replaced -- never a
    section of a prompt the user set.
    """

    tools: Collection[str] | None = None
    own_tools: Collection[str] = ()
    system_prompt: str | None = None
    replaces: str = SKILLKIT_DEFAULT_PROMPT
    options: Mapping[str, Any] | None = None
    grounded: bool = False
    call_first: bool = False
    drop_sections: Collection[str] = ()

    def apply(self, request: LLMRequest) -> LLMRequest:
        """``request`` shaped (the same object when the profile changes nothing)."""
        return self.shape(request)[0]

    def shape(self, request: LLMRequest) -> tuple[LLMRequest, list[str]]:
        """``request`` shaped, and one line for each of SkillKit's defaults shortened."""
        changes: dict[str, Any] = {}
        notes: list[str] = []
        if self.tools is not None:
            offered = [
                schema
                for schema in request.tools
                if schema.name in self.tools or schema.name not in self.own_tools
            ]
            if len(offered) != len(request.tools):
                changes["tools"] = offered
                left_out = sorted({s.name for s in request.tools} - {s.name for s in offered})
                notes.append(
                    f"of SkillKit's built-in tools it is offered only "
                    f"{', '.join(sorted(self.tools))} (not {', '.join(left_out)})"
                )
        prompt = request.system_prompt
        if self.system_prompt is not None and self.replaces and prompt.startswith(self.replaces):
            rest = prompt[len(self.replaces) :]
            if not rest or rest.startswith("\n"):
                changes["system_prompt"] = self.system_prompt + self._without_dropped(rest)
                notes.append(
                    "SkillKit's default system prompt is replaced by a shorter one"
                    + (f" (without {', '.join(self.drop_sections)})" if self.drop_sections else "")
                )
        if self.options and any(key not in request.options for key in self.options):
            changes["options"] = {**self.options, **request.options}
        shaped = msgspec.structs.replace(request, **changes) if changes else request
        return shaped, notes

    def _without_dropped(self, rest: str) -> str:
        """``rest`` (the sections after SkillKit's prompt, each after a blank line)
        without the sections whose first line is one of ``drop_sections``."""
        if not self.drop_sections:
            return rest
        sections = rest.split("\n\n")
        kept = [s for s in sections if s.split("\n", 1)[0] not in self.drop_sections]
        return "\n\n".join(kept)
