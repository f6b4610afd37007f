"""Executable worlds: a domain's tables and tools, restored from a seed for every trial."""
from evalsuite.worlds.domain import Domain, Tool, ToolContext, ToolError
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import ResetError, World

__all__ = ["Domain", "Tool", "ToolContext", "ToolError", "World", "TrialWorld", "ResetError"]
