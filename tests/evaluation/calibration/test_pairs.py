"""The shipped pairs file and the loader's error messages."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from evaluation.calibration import GROUPS, PairsFileError, default_pairs_path, load_pairs

HEADER = "group,language,first,second\n"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pairs.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_pairs_cover_every_group_and_several_languages() -> None:
    pairs = load_pairs(default_pairs_path())
    assert len(pairs) >= 80
    per_group = Counter(pair.group for pair in pairs)
    assert set(per_group) == set(GROUPS)
    assert min(per_group.values()) >= 10
    languages = Counter(pair.language for pair in pairs)
    assert sum(count for language, count in languages.items() if language != "en") >= 15
    assert len(languages) >= 4
    assert len({(pair.first, pair.second) for pair in pairs}) == len(pairs)


def test_reads_quoted_commas(tmp_path: Path) -> None:
    path = _write(tmp_path, HEADER + 'same,en,"Yes, I like tea",I like tea\n')
    (pair,) = load_pairs(path)
    assert pair.first == "Yes, I like tea" and pair.line == 2


def test_unknown_group_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, HEADER + "same,en,a,b\nsimilar,en,c,d\n")
    with pytest.raises(PairsFileError, match=r"line 3: unknown group 'similar'"):
        load_pairs(path)


def test_missing_columns(tmp_path: Path) -> None:
    with pytest.raises(PairsFileError, match="missing language"):
        load_pairs(_write(tmp_path, "group,first,second\nsame,a,b\n"))


def test_unquoted_comma_is_reported(tmp_path: Path) -> None:
    path = _write(tmp_path, HEADER + "same,en,Yes, I like tea,I like tea\n")
    with pytest.raises(PairsFileError, match="line 2: more than 4 fields"):
        load_pairs(path)


def test_empty_sentence(tmp_path: Path) -> None:
    with pytest.raises(PairsFileError, match="line 2: both sentences"):
        load_pairs(_write(tmp_path, HEADER + "same,en,,b\n"))


def test_no_pairs_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PairsFileError, match="no pairs"):
        load_pairs(_write(tmp_path, HEADER))
    with pytest.raises(PairsFileError, match="cannot be read"):
        load_pairs(tmp_path / "absent.csv")
