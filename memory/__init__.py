"""Memory: facts per person and room, in SQLite (truth) and LanceDB (vectors).

Knows nothing of chat platforms or of the bot; ``bot`` and ``adapters`` build on it.
"""
