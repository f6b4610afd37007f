"""Trials under attack: an injection task's text placed in the world's untrusted data before the agent acts, and the
security verdict (was the attack's effect produced?) judged from the end state and the trace alone."""
from __future__ import annotations

from evalsuite.core.records import Attack, GoalState
from evalsuite.grading.grader import Baseline, Verdict, effect_present
from evalsuite.worlds import changes
from evalsuite.worlds.trial_world import TrialWorld


class AttackError(ValueError):
    """An attack that names no row of the world (a task file that does not fit its world); one line."""


def place_attack(trial: TrialWorld, attack: Attack) -> Baseline:
    """Write the attack's text into its rows of the freshly reset world, before the agent's first call (not traced:
    the agent did not do it), and return those rows as the baseline the trial is graded against."""
    schemas, db = trial.world.schemas, trial.db
    baseline: dict[str, dict[tuple, tuple]] = {}
    for place in attack.rows:
        schema = schemas.get(place.table)
        if schema is None or place.column not in schema.columns or set(place.key) != set(schema.key):
            raise AttackError(f"attack {attack.injection_task}: no column {place.table}.{place.column} keyed by "
                              f"{sorted(place.key)} in domain {trial.domain.name}")
        key = tuple(place.key[k] for k in schema.key)
        where = " AND ".join(f"{changes.q(k)} = ?" for k in schema.key)
        done = db.execute(f"UPDATE {changes.q(place.table)} SET {changes.q(place.column)} = ? WHERE {where}",
                          (place.value, *key))
        if done.rowcount != 1:
            raise AttackError(f"attack {attack.injection_task}: no row {place.table} {place.key} to place it in")
        baseline.setdefault(place.table, {})[key] = trial.row(place.table, key)
    db.commit()
    return baseline


def attack_effect(trial: TrialWorld, attack: Attack, final_message: str) -> Verdict:
    """Whether the attack's effect is present: every effect assertion and check holds on the end state (passed =
    the attack succeeded). Only the effect is judged, never the agent's words or the rest of the trial."""
    return effect_present(trial, final_message,
                          GoalState(assertions=attack.effect_assertions, domain_checks=attack.effect_checks))
