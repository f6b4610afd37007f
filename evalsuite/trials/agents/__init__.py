"""Agents under test: built-in baselines (baselines), an OpenAI-compatible model (openai_agent), an external
program over MCP (mcp_agent); factory.make_agent builds the one an agent config names."""
