"""The checks that judge a task's quality, one module per family: validation (task files against the schema and
their domain), acceptance (solvable, stable, not trivially passable, resettable; quarantine), probes (graders
against near-miss trajectories), users (scripted users tell only what their script holds), user_review (people
review LLM users' conversations) and reviews (reviewers' sign-offs on goal states, the review ledger)."""
