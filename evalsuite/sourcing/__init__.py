"""What a data-ops team hands in: the suite spec, source snapshots, license rights, quality checks, policies."""
