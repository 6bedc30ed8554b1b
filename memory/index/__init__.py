"""The vector index: the port, and LanceDB (real, and self-healing)."""

from memory.index.base import IndexedFact, ScoredFactId, VectorIndex
from memory.index.healing import HealingIndex, IndexRebuildingError
from memory.index.lance import LanceFactIndex

__all__ = [
    "HealingIndex",
    "IndexRebuildingError",
    "IndexedFact",
    "LanceFactIndex",
    "ScoredFactId",
    "VectorIndex",
]
