"""The LoCoMo loader: the mapping of the data README, and clear errors on bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation import DatasetError, load_locomo
from tests.evaluation.tiny_locomo import TINY_LOCOMO

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo10.json"


def _write(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    return path


def test_tiny_file_maps_observations_questions_and_speakers(tmp_path: Path) -> None:
    (conversation,) = load_locomo(_write(tmp_path, TINY_LOCOMO))
    assert conversation.speakers == ("Ana", "Ben")
    assert len(conversation.observations) == 6
    cello = conversation.observations[2]
    assert cello.speaker == "Ana" and cello.dialog_ids == {"D1:5", "D1:6"}
    texts = [question.text for question in conversation.questions]
    # No relevant observation (D9:9) or category 5: not asked.
    assert "Would Ben like to fly?" not in texts and "What is Ben's dog called?" not in texts
    by_text = {question.text: question for question in conversation.questions}
    assert by_text["Which instrument is Ana learning?"].relevant == {2}
    assert by_text["Where does Ben's sister live?"].speaker == "Ben"
    assert by_text["Who does Ana know in Oslo?"].speaker == "Ana"


@pytest.mark.skipif(not LOCOMO.exists(), reason="needs ../shared/data/locomo10.json")
def test_full_dataset_has_the_counts_of_the_data_readme() -> None:
    conversations = load_locomo(LOCOMO)
    assert len(conversations) == 10
    assert sum(len(c.observations) for c in conversations) == 2541
    assert sum(len(c.questions) for c in conversations) == 1302
    assert {q.category for c in conversations for q in c.questions} == {1, 2, 3, 4}


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="cannot be read"):
        load_locomo(tmp_path / "nope.json")


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(DatasetError, match="not valid JSON"):
        load_locomo(path)


def test_not_a_list(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="expected a list of conversations"):
        load_locomo(_write(tmp_path, {"qa": []}))


def test_entry_without_observations_names_the_conversation(tmp_path: Path) -> None:
    broken = [TINY_LOCOMO[0], {"conversation": {"speaker_a": "X", "speaker_b": "Y"}, "qa": []}]
    with pytest.raises(DatasetError, match=r"conversation 1 .*'observation'"):
        load_locomo(_write(tmp_path, broken))
