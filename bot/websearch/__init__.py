"""Web search through a self-hosted SearXNG."""
