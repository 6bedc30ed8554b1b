"""The ASCII shortcut of text normalisation gives exactly what Unicode's tables give."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory.write.normalise import normalise_text, normalised_by_unicode

ASCII = [chr(code) for code in range(128)]


def test_every_ascii_character_is_treated_as_unicode_treats_it() -> None:
    for character in ASCII:
        text = f"My{character}cat  Tom{character}"
        assert normalise_text(text) == normalised_by_unicode(text), repr(character)


@given(st.text(alphabet=st.sampled_from(ASCII), max_size=60))
def test_any_ascii_text_is_normalised_as_unicode_normalises_it(text: str) -> None:
    assert normalise_text(text) == normalised_by_unicode(text)


def test_text_beyond_ascii_still_goes_through_unicode() -> None:
    assert normalise_text("Ich wohne in Köln, ﬁne!") == "ich wohne in köln fine"
    assert normalise_text("I\u2019m 34 \u2014 years OLD.") == "i m 34 years old"
