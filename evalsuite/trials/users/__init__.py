"""Simulated users: the other party of a conversational task, a pinned test parameter.

One interface (base.UserSimulator) and two simulators: scripted (deterministic, acting on the user-side
world) and an LLM on any OpenAI-compatible endpoint; dual.py wires them and the user-side world into a trial.
"""
from evalsuite.trials.users.base import Conversation, UserSimulator
from evalsuite.trials.users.scripted import ScriptedUser
from evalsuite.trials.users.simulator import SimulatedUser

__all__ = ["Conversation", "ScriptedUser", "SimulatedUser", "UserSimulator"]
