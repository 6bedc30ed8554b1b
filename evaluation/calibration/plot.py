"""A PNG histogram of each group's similarities with the threshold drawn in (Pillow)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw

from evaluation.calibration.pairs import GROUPS
from evaluation.calibration.scoring import ScoredPair

WIDTH = 900
STRIP_HEIGHT = 90
LEFT = 110
RIGHT = 30
TOP = 40
BOTTOM = 50
BINS = 40
AXIS_LOW = -0.2
AXIS_HIGH = 1.0
COLOURS = {
    "same": (46, 125, 50),
    "update": (21, 101, 192),
    "detail": (106, 27, 154),
    "different": (239, 108, 0),
    "negation": (198, 40, 40),
    "unrelated": (97, 97, 97),
}


def _x(value: float) -> float:
    share = (value - AXIS_LOW) / (AXIS_HIGH - AXIS_LOW)
    return LEFT + share * (WIDTH - LEFT - RIGHT)


def _counts(values: Sequence[float]) -> list[int]:
    counts = [0] * BINS
    for value in values:
        share = (min(max(value, AXIS_LOW), AXIS_HIGH) - AXIS_LOW) / (AXIS_HIGH - AXIS_LOW)
        counts[min(int(share * BINS), BINS - 1)] += 1
    return counts


def write_histogram(
    scored: Sequence[ScoredPair], threshold: float, path: Path, *, title: str = ""
) -> None:
    groups = [g for g in GROUPS if any(item.pair.group == g for item in scored)]
    height = TOP + STRIP_HEIGHT * len(groups) + BOTTOM
    image = Image.new("RGB", (WIDTH, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((LEFT, 12), title or "cosine similarity per group", fill="black")
    bin_width = (WIDTH - LEFT - RIGHT) / BINS
    for row, group in enumerate(groups):
        base = TOP + STRIP_HEIGHT * (row + 1) - 10
        counts = _counts([item.similarity for item in scored if item.pair.group == group])
        tallest = max(counts) or 1
        draw.text((10, base - STRIP_HEIGHT / 2), f"{group} ({sum(counts)})", fill="black")
        draw.line([(LEFT, base), (WIDTH - RIGHT, base)], fill=(200, 200, 200))
        for position, count in enumerate(counts):
            if count:
                left = LEFT + position * bin_width
                top = base - (STRIP_HEIGHT - 25) * count / tallest
                draw.rectangle([left + 1, top, left + bin_width - 1, base], fill=COLOURS[group])
    axis = TOP + STRIP_HEIGHT * len(groups)
    for tick in range(-2, 11, 2):
        value = tick / 10
        draw.line([(_x(value), axis), (_x(value), axis + 5)], fill="black")
        draw.text((_x(value) - 10, axis + 8), f"{value:.1f}", fill="black")
    draw.line([(_x(threshold), TOP), (_x(threshold), axis)], fill=(211, 47, 47), width=2)
    draw.text((_x(threshold) + 4, TOP - 14), f"threshold {threshold:.2f}", fill=(211, 47, 47))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")
