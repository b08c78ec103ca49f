"""The runner's inbox: messages the user sent while a run was busy."""

from __future__ import annotations

from skillkit.config import AgentConfig
from skillkit.models import UserMessage

__all__ = ["Inbox"]


class Inbox:
    """What the user sent while a run was busy: steering (handled at the next turn,
    skipping tool calls not yet started) and follow-ups (after the run), each taken
    all at once or one at a time as the configuration says."""

    __slots__ = ("config", "follow_ups", "steering")

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.steering: list[UserMessage] = []
        self.follow_ups: list[UserMessage] = []

    def take_steering(self) -> list[UserMessage]:
        if not self.steering:
            return []
        if self.config.steering_delivery == "one_at_a_time":
            return [self.steering.pop(0)] if self.steering else []
        taken, self.steering = self.steering, []
        return taken

    def take_follow_ups(self) -> list[UserMessage]:
        if self.config.follow_up_delivery == "one_at_a_time":
            return [self.follow_ups.pop(0)] if self.follow_ups else []
        taken, self.follow_ups = self.follow_ups, []
        return taken

    def has_steering(self) -> bool:
        return bool(self.steering)
