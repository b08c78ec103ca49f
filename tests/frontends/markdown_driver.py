"""Streams a Markdown answer through `TerminalRenderer` on this process's own terminal
(run in a tmux pane by test_markdown_terminal.py), a few characters per delta."""

from __future__ import annotations

from skillkit.frontends.terminal import TerminalRenderer
from skillkit.models import StreamEvent

ANSWER = """## Result

The **build** passes and *nothing* failed. Steps taken:

1. ran `make check`
2. read the report
3. fixed the flaky test

| file | lines | note |
|------|------:|------|
| app.py | 120 | the entry point of the application |
| util.py | 40 | helpers |

```python
def greet(name: str) -> str:
    return f"hello {name}"
```

> Everything is committed.
"""


def main() -> None:
    renderer = TerminalRenderer()  # its own Console: markdown when stdout is a terminal
    renderer.stream(StreamEvent(type="text_start"))
    for start in range(0, len(ANSWER), 3):
        renderer.stream(StreamEvent(type="text_delta", content=ANSWER[start : start + 3]))
    renderer.stream(StreamEvent(type="text_end"))
    renderer.console.print("END-OF-ANSWER")


if __name__ == "__main__":
    main()
