"""What τ²-bench's domains share, written once: the DB hash (tau2_hash), the calculator, the way a tool is
registered, fails and is shown to the agent (tools), and the plain-SQL row helpers of the nested <-> rows round trip
(rows). Each domain (tau2_retail, tau2_airline) keeps only its own tables, entities and tools."""
