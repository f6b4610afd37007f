"""τ²-bench domains (retail, airline) imported as evalsuite sources, policies and suites, with replay-derived goal
states."""
