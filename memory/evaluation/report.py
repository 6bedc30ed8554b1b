"""An evaluation run as plain numbers: for ``--json``, tables and tests."""

from __future__ import annotations

from typing import Any

from memory.evaluation.harness import EvalRun
from memory.evaluation.locomo import CATEGORY_NAMES
from memory.evaluation.metrics import score, score_by_category


def category_label(category: int) -> str:
    return f"{category} {CATEGORY_NAMES.get(category, 'other')}"


def run_summary(run: EvalRun) -> dict[str, Any]:
    """``{"reranked", "notes", "modes": {name: {"overall", "by_category"}}}``."""
    return {
        "reranked": run.reranked,
        "notes": list(run.notes),
        "modes": {
            name: {
                "overall": score(outcomes).as_dict(),
                "by_category": {
                    category_label(category): scores.as_dict()
                    for category, scores in score_by_category(outcomes).items()
                },
            }
            for name, outcomes in run.outcomes.items()
        },
    }
