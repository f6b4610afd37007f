"""The tau2-bench telecom domain."""
