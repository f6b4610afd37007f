"""Simulated users: the other party of a conversational task, a pinned test parameter."""
from evalsuite.trials.users.simulator import SimulatedUser

__all__ = ["SimulatedUser"]
