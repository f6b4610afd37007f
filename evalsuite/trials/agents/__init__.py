"""Agents under test: built-in baselines here; model and MCP agents beside them."""
from evalsuite.trials.agents.base import Agent, AgentEnv, BudgetExhausted
from evalsuite.trials.agents.baselines import AdversaryAgent, NoOpAgent, ReferenceAgent, make_agent

__all__ = ["Agent", "AgentEnv", "BudgetExhausted", "ReferenceAgent", "NoOpAgent", "AdversaryAgent", "make_agent"]
