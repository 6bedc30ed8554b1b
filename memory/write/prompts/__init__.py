"""Prompts of the write path, one module each: response model, message builder, version."""
