"""`SessionSwitch`: the web page's session, which the page can change for another of
this folder's saved sessions. The switch is the faces' one (the terminal's ``/resume``
uses it too) and lives in `skillkit.frontends.session_switch`; its names stay here for
the server and its callers."""

from skillkit.frontends.session_switch import (
    SWITCH_COMMANDS,
    OpenAgent,
    SessionSwitch,
    SessionSwitchError,
)

__all__ = ["SWITCH_COMMANDS", "OpenAgent", "SessionSwitch", "SessionSwitchError"]
