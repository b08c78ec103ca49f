"""SkillKit: a Python agent SDK and terminal agent."""
