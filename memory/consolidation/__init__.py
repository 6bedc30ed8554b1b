"""Scheduled consolidation of near-duplicate facts, one scope at a time: similarity proposes
pairs, the model judges them, the code applies."""

from memory.consolidation.apply import apply_decision
from memory.consolidation.decisions import MergeDecision, Verdict, decisions_for_batch
from memory.consolidation.judge import JudgeReplyInvalid, judge_batch
from memory.consolidation.judge_prompt import PROMPT_VERSION, JudgeResponse, PairJudgement
from memory.consolidation.pairs import CandidatePair, propose_pairs
from memory.consolidation.run import (
    ConsolidationReport,
    ConsolidationSettings,
    consolidate,
)

__all__ = [
    "PROMPT_VERSION",
    "CandidatePair",
    "ConsolidationReport",
    "ConsolidationSettings",
    "JudgeReplyInvalid",
    "JudgeResponse",
    "MergeDecision",
    "PairJudgement",
    "Verdict",
    "apply_decision",
    "consolidate",
    "decisions_for_batch",
    "judge_batch",
    "propose_pairs",
]
