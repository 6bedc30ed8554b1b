"""Scripts that print numbers; run from the repository root with `python -m benchmarks.NAME`."""
