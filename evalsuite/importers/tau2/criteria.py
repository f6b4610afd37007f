"""A τ²-bench task's `evaluation_criteria` as evalsuite keeps it (records.EvaluationCriteria): every field as the
original wrote it, nulls as empty lists, and the pinned judge where natural-language assertions count."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalsuite.core.records import EnvAssertion, EvaluationCriteria, GoldAction, JudgeSettings
from evalsuite.grading import judge


def evaluation_criteria(crit: Mapping[str, Any], settings: JudgeSettings = judge.DEFAULT) -> EvaluationCriteria:
    """The criteria of one task; a field the original does not define is refused (records forbid extras)."""
    basis = crit.get("reward_basis")
    nl = list(crit.get("nl_assertions") or [])
    return EvaluationCriteria(
        **({"reward_basis": basis} if basis is not None else {}),  # absent: the original's default, [DB, COMMUNICATE]
        actions=[GoldAction(**a) for a in crit.get("actions") or []],
        env_assertions=[EnvAssertion(**a) for a in crit.get("env_assertions") or []],
        communicate_info=[str(v) for v in crit.get("communicate_info") or []],
        nl_assertions=nl,
        judge=settings if nl and "NL_ASSERTION" in (basis or []) else None,
    )
