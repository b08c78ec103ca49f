"""Project instructions: ``AGENTS.md`` / ``CLAUDE.md`` files, the environment and extra
text, added to the system prompt by the `ProjectInstructions` contributor.

    from skillkit.instructions import ProjectInstructions

    agent = AgentRunner(config, contributors=[ProjectInstructions()])

Which files are read and in what order: `skillkit.instructions.files`; how the section
reads: `skillkit.instructions.prompt`; ``/init``'s starter file:
`skillkit.instructions.init`. See ``docs/instructions.md``.
"""

from skillkit.instructions.contributor import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    ProjectInstructions,
)
from skillkit.instructions.files import (
    FILE_NAMES,
    Candidate,
    InstructionFile,
    instruction_files,
    read_instruction_file,
    repository_root,
)
from skillkit.instructions.init import starter_text, write_starter
from skillkit.instructions.prompt import environment_section, render_instructions

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "FILE_NAMES",
    "Candidate",
    "InstructionFile",
    "ProjectInstructions",
    "environment_section",
    "instruction_files",
    "read_instruction_file",
    "render_instructions",
    "repository_root",
    "starter_text",
    "write_starter",
]
