"""``skillkit acp``: SkillKit in editors over the Agent Client Protocol.

An ACP agent on stdin/stdout (Zed, JetBrains IDEs, Neovim, Emacs...), built on the
official Python SDK (``agent-client-protocol``, the ``skillkit-agent[acp]`` extra). The
SDK is imported only by the modules of this package that need it — `skillkit.acp.cli`
registers the subcommand without it — so other commands do not pay for it. See
``docs/editors.md``.
"""

from __future__ import annotations

__all__: list[str] = []
