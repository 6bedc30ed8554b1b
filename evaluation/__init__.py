"""Retrieval evaluation on LoCoMo: loader, harness over the real read path, metrics."""

from evaluation.harness import ALL_MODES, EvalMode, EvalRun, probe_reranker, run_evaluation
from evaluation.locomo import (
    CATEGORY_NAMES,
    Conversation,
    DatasetError,
    Observation,
    Question,
    load_locomo,
)
from evaluation.metrics import CUTOFFS, QuestionOutcome, Scores, score, score_by_category
from evaluation.report import category_label, run_summary

__all__ = [
    "ALL_MODES",
    "CATEGORY_NAMES",
    "CUTOFFS",
    "Conversation",
    "DatasetError",
    "EvalMode",
    "EvalRun",
    "Observation",
    "Question",
    "QuestionOutcome",
    "Scores",
    "category_label",
    "load_locomo",
    "probe_reranker",
    "run_evaluation",
    "run_summary",
    "score",
    "score_by_category",
]
