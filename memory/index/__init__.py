"""The vector index: the port, LanceDB (real) and an in-memory test double."""

from memory.index.base import IndexedFact, ScoredFactId, VectorIndex
from memory.index.lance import LanceFactIndex
from memory.index.memory_index import InMemoryVectorIndex

__all__ = ["InMemoryVectorIndex", "IndexedFact", "LanceFactIndex", "ScoredFactId", "VectorIndex"]
