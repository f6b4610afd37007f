"""pass^k / pass@k metrics with task-bootstrap intervals, comparisons, cost and scorecards."""
