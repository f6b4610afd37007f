"""Executable worlds: a domain's tables and tools, restored from a seed for every trial."""
from evalsuite.world.domain import Domain, Tool, ToolContext, ToolError
from evalsuite.world.world import ResetError, TrialWorld, World

__all__ = ["Domain", "Tool", "ToolContext", "ToolError", "World", "TrialWorld", "ResetError"]
