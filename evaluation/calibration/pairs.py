"""Labelled sentence pairs (CSV ``group,language,first,second``): what calibration measures
the embedding model on; ``pairs.csv`` ships beside this module.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

GROUPS = ("same", "update", "detail", "different", "negation", "unrelated")
COLUMNS = ("group", "language", "first", "second")


class PairsFileError(Exception):
    """The pairs file cannot be used; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class LabelledPair:
    group: str
    language: str
    first: str
    second: str
    line: int


def default_pairs_path() -> Path:
    """The pairs file shipped with the package."""
    return Path(str(resources.files("evaluation.calibration").joinpath("pairs.csv")))


def load_pairs(path: Path) -> list[LabelledPair]:
    try:
        with path.open(encoding="utf-8", newline="") as file:
            return _parse(csv.DictReader(file), path)
    except OSError as error:
        raise PairsFileError(f"{path}: cannot be read: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise PairsFileError(f"{path}: not UTF-8 text: {error}") from error
    except csv.Error as error:
        raise PairsFileError(f"{path}: not valid CSV: {error}") from error


def _parse(reader: csv.DictReader[str], path: Path) -> list[LabelledPair]:
    missing = [column for column in COLUMNS if column not in (reader.fieldnames or ())]
    if missing:
        raise PairsFileError(
            f"{path}: the header must name {', '.join(COLUMNS)}; missing {', '.join(missing)}"
        )
    pairs = [_pair(row, reader.line_num, path) for row in reader]
    if not pairs:
        raise PairsFileError(f"{path}: no pairs")
    return pairs


def _pair(row: dict[str, str | None], line: int, path: Path) -> LabelledPair:
    values = {column: (row.get(column) or "").strip() for column in COLUMNS}
    if values["group"] not in GROUPS:
        raise PairsFileError(
            f"{path}, line {line}: unknown group {values['group']!r} "
            f"(expected one of {', '.join(GROUPS)})"
        )
    if not values["first"] or not values["second"]:
        raise PairsFileError(f"{path}, line {line}: both sentences are needed")
    if None in row:
        raise PairsFileError(
            f"{path}, line {line}: more than {len(COLUMNS)} fields; quote sentences with commas"
        )
    return LabelledPair(
        values["group"], values["language"], values["first"], values["second"], line
    )
