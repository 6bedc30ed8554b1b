"""A hand-written conversation in the LoCoMo file format, small enough to reason about."""

from __future__ import annotations

from typing import Any

TINY_LOCOMO: list[dict[str, Any]] = [
    {
        "sample_id": "tiny-1",
        "conversation": {"speaker_a": "Ana", "speaker_b": "Ben"},
        "observation": {
            "session_1_observation": {
                "Ana": [
                    ["Ana adopted a grey cat called Miso.", "D1:1"],
                    ["Ana works as a nurse in Porto.", "D1:3"],
                    ["Ana is learning to play the cello.", ["D1:5", "D1:6"]],
                ],
                "Ben": [
                    ["Ben repairs vintage bicycles in his garage.", "D1:2"],
                    ["Ben's sister Clara lives in Oslo.", "D1:4"],
                ],
            },
            "session_2_observation": {
                "Ben": [["Ben ran his first marathon in Berlin.", "D2:1"]],
            },
        },
        "qa": [
            {"question": "What is the name of Ana's cat?", "evidence": ["D1:1"], "category": 4},
            {"question": "Where does Ben's sister live?", "evidence": ["D1:4"], "category": 4},
            {"question": "Which instrument is Ana learning?", "evidence": ["D1:6"], "category": 1},
            {"question": "Where did Ben run a marathon?", "evidence": ["D2:1"], "category": 2},
            # About Ana by name, answered by Ben's fact: invisible with the speaker scope.
            {"question": "Who does Ana know in Oslo?", "evidence": ["D1:4"], "category": 3},
            {"question": "Would Ben like to fly?", "evidence": ["D9:9"], "category": 3},
            {"question": "What is Ben's dog called?", "evidence": ["D1:2"], "category": 5},
        ],
    }
]
