"""Scheduled consolidation of near-duplicate facts, one scope at a time (design section 7).

Similarity proposes pairs inside one scope, the model judges them, the code applies:
``same`` merges (the survivor keeps the more detailed text), ``replaces`` supersedes the older,
``adds_detail`` keeps the detailed one, ``different`` leaves both. Without a model only
normalised-text duplicates merge.
"""

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
