"""The read path: passive recall, explicit lookup with a reranker, optional hybrid search."""

from memory.recall.classifier import wants_lookup, wants_overview
from memory.recall.errors import RerankerError, RerankerUnavailable
from memory.recall.fastembed_reranker import DEFAULT_RERANKER_MODEL, FastEmbedReranker
from memory.recall.full_text import FullTextIndex
from memory.recall.fusion import reciprocal_rank_fusion
from memory.recall.recaller import Recaller
from memory.recall.reranker import Reranker
from memory.recall.results import RecalledFact, RecallSettings
from memory.recall.scripted_reranker import ScriptedReranker

__all__ = [
    "DEFAULT_RERANKER_MODEL",
    "FastEmbedReranker",
    "FullTextIndex",
    "RecallSettings",
    "RecalledFact",
    "Recaller",
    "Reranker",
    "RerankerError",
    "RerankerUnavailable",
    "ScriptedReranker",
    "reciprocal_rank_fusion",
    "wants_lookup",
    "wants_overview",
]
