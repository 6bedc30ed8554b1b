"""Scheduled consolidation of near-duplicate facts, one scope at a time: similarity proposes
pairs, the model judges them, the code applies."""

from memory.consolidation.apply import apply_decision
from memory.consolidation.decisions import MergeDecision, Verdict
from memory.consolidation.judge_prompt import PairJudgement
from memory.consolidation.pairs import propose_pairs
from memory.consolidation.run import ConsolidationReport, ConsolidationSettings, consolidate

__all__ = [
    "ConsolidationReport",
    "ConsolidationSettings",
    "MergeDecision",
    "PairJudgement",
    "Verdict",
    "apply_decision",
    "consolidate",
    "propose_pairs",
]
