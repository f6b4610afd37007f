"""evalsuite: agent test suites built from sourced business records, and agents scored on them."""
