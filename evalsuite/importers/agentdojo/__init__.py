"""AgentDojo suites (banking, slack) imported as suites: tasks and ground truths as the pinned package defines them,
goal states by replay, and the peer's own checks for auditing our grader against the peer's."""
