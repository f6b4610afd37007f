"""AgentDojo banking imported as a suite: tasks and ground truths from SPEC.md, goal states by replay, and the
peer's own checks (as SPEC.md §4 states them) for auditing our grader against the peer's."""
