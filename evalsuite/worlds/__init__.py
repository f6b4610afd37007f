"""Executable worlds: a domain's tables and tools, restored from a seed for every trial."""
from evalsuite.worlds.domain import Domain, Tool, ToolContext, ToolError
from evalsuite.worlds.world import ResetError, TrialWorld, World

__all__ = ["Domain", "Tool", "ToolContext", "ToolError", "World", "TrialWorld", "ResetError"]
