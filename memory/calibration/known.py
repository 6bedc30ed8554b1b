"""The candidate thresholds `mnemo calibrate` recommended for the models Mnemo knows (each
model spreads similarities its own way)."""

from __future__ import annotations

from memory.write.candidates import CALIBRATED_CANDIDATE_THRESHOLD

# Lowest pair that must be a candidate, less 0.05 for recall, on the shipped pairs with
# facts embedded as documents; for EmbeddingGemma the lower of its fp32 and int8 copies.
_KNOWN = {
    "all-minilm-l6-v2": CALIBRATED_CANDIDATE_THRESHOLD,
    "embeddinggemma": 0.48,
}


def calibrated_threshold(model: str) -> float | None:
    """The measured threshold of ``model`` (by name, fastembed's or Ollama's), else None."""
    name = model.lower()
    for known, threshold in _KNOWN.items():
        if known in name:
            return threshold
    return None
