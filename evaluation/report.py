"""An evaluation run as plain numbers: for ``--json``, tables and tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluation.harness import ALL_MODES, EvalMode, EvalRun
from evaluation.locomo import CATEGORY_NAMES
from evaluation.metrics import score, score_by_category


def category_label(category: int) -> str:
    return f"{category} {CATEGORY_NAMES.get(category, 'other')}"


def run_summary(run: EvalRun, modes: Sequence[EvalMode] = ALL_MODES) -> dict[str, Any]:
    """``{"reranked", "notes", "modes": {name: {"path", "scope", "overall", "by_category"}}}``."""
    by_name = {mode.name: mode for mode in modes}
    return {
        "reranked": run.reranked,
        "notes": list(run.notes),
        "modes": {
            name: {
                "path": by_name[name].path,
                "scope": by_name[name].scope,
                "overall": score(outcomes).as_dict(),
                "by_category": {
                    category_label(category): scores.as_dict()
                    for category, scores in score_by_category(outcomes).items()
                },
            }
            for name, outcomes in run.outcomes.items()
        },
    }
