"""The vector index: the port, LanceDB (real, and self-healing) and an in-memory test double."""

from memory.index.base import IndexedFact, ScoredFactId, VectorIndex
from memory.index.healing import HealingIndex, IndexRebuildingError
from memory.index.lance import LanceFactIndex
from memory.index.memory_index import InMemoryVectorIndex

__all__ = [
    "HealingIndex",
    "InMemoryVectorIndex",
    "IndexRebuildingError",
    "IndexedFact",
    "LanceFactIndex",
    "ScoredFactId",
    "VectorIndex",
]
