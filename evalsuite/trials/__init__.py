"""Running trials: one trial, jobs, the harness and worker pool, trace logs, agents, simulated users, the MCP server."""
