"""Embedders: the port, fastembed (default), Ollama, and a hashing test double."""

from memory.embedding.base import Embedder, Vectors, cosine_similarity, normalise
from memory.embedding.fake import HashingEmbedder
from memory.embedding.fastembed_backend import FastEmbedEmbedder
from memory.embedding.ollama_backend import OllamaEmbedder

__all__ = [
    "Embedder",
    "FastEmbedEmbedder",
    "HashingEmbedder",
    "OllamaEmbedder",
    "Vectors",
    "cosine_similarity",
    "normalise",
]
