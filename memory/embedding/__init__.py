"""Embedders: the port, fastembed (default), Ollama, a hashing test double, and the batcher
that shares one model call among concurrent callers."""

from memory.embedding.base import Embedder, PromptedEmbedder, Vectors, cosine_similarity, normalise
from memory.embedding.batching import EmbeddingBatcher
from memory.embedding.fake import HashingEmbedder
from memory.embedding.fastembed_backend import FastEmbedEmbedder
from memory.embedding.ollama_backend import OllamaEmbedder
from memory.embedding.prompts import Prompts, TextKind, default_prompts

__all__ = [
    "Embedder",
    "EmbeddingBatcher",
    "FastEmbedEmbedder",
    "HashingEmbedder",
    "OllamaEmbedder",
    "PromptedEmbedder",
    "Prompts",
    "TextKind",
    "Vectors",
    "cosine_similarity",
    "default_prompts",
    "normalise",
]
