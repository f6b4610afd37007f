"""Acceptance of tasks, pass^k / pass@k metrics with task-bootstrap intervals, and scorecards."""
