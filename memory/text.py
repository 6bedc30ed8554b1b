"""Text that every layer can store, send and print: valid Unicode, without lone surrogates.

A ``"\\ud800"`` escape in JSON cannot be encoded as UTF-8 (SQLite, LanceDB, HTTP all fail),
so text is made valid once, where it enters.
"""

from __future__ import annotations

from typing import Any


def valid_text(text: str) -> str:
    """``text`` with each surrogate pair joined and each lone surrogate made U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def valid_data(value: Any) -> Any:
    """Decoded JSON with every string (keys too) made valid, the rest unchanged."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_data(key): valid_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [valid_data(item) for item in value]
    return value
