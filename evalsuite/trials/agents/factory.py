"""The agent factory: the agent an agent config describes, a baseline, an OpenAI-compatible model or an MCP program."""
from __future__ import annotations

from evalsuite.core.identity import AgentConfig
from evalsuite.trials.agents.baselines import BASELINES


def make_agent(agent: str | AgentConfig):
    """The agent a config describes (a name is parsed first, see AgentConfig.parse): a built-in baseline,
    an OpenAI-compatible chat model (kind openai), the non-adaptive model workflow (kind model_workflow, see
    evalsuite.trials.agents.workflow) or an external program acting over MCP (kind mcp, see
    evalsuite.trials.agents.mcp_agent). The agent is named by the config, the key of its records.

    An openai agent's base_url falls back to OPENAI_BASE_URL and its key comes from OPENAI_API_KEY, as the
    openai SDK reads them; a worker process builds the same agent from the same config.
    """
    config = AgentConfig.parse(agent)
    if config.kind == "mcp":
        from evalsuite.trials.agents.mcp_agent import MCPAgent

        return MCPAgent.from_config(config)
    if config.kind == "openai":
        from evalsuite.trials.agents.openai_agent import OpenAIAgent

        return OpenAIAgent(name=config.name, model=config.model, base_url=config.base_url,
                           temperature=config.temperature)
    if config.kind == "model_workflow":
        from evalsuite.trials.agents.workflow import ModelWorkflowAgent

        return ModelWorkflowAgent(name=config.name, model=config.model, base_url=config.base_url,
                                  temperature=config.temperature)
    if config.name not in BASELINES:
        raise KeyError(f"unknown agent {config.name!r}; built-in agents: {', '.join(sorted(BASELINES))}, "
                       "openai:MODEL, workflow:MODEL or mcp:COMMAND")
    return BASELINES[config.name]()
