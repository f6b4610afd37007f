"""τ²-bench retail imported as an evalsuite source, policy and suite, with replay-derived goal states."""
