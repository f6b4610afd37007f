"""De-identification of supplier tables before they become a test world.

The output must keep everything a task's assertions depend on: joins between
tables, amounts, currencies, statuses and the order of each entity's dates. So
rules are applied per column and are keyed and deterministic: the same input
value gives the same output in every table and every run that uses the same key,
and a different key gives unrelated outputs. The key is only ever held in memory:
it is not part of any result, hash or report.

rules (the rule set), keys (the key and keyed values), text (personal data in
text), surrogates (Faker stand-ins), columns (per-distinct-value column work),
transform (deidentify and its provenance), residual (the leak scan of the output).
"""
