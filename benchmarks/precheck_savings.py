"""What the cheap pre-check saves, and whether it ever skips a message that holds a fact.

    .venv/bin/python -m benchmarks.precheck_savings

Two samples:

- LoCoMo (``../shared/data/locomo10.json``): every turn of the ten conversations. A turn
  "holds a fact" when one of LoCoMo's per-speaker observations cites its dialog id.
- A chat-bot mix written for this benchmark: the short acknowledgements, greetings, emoji,
  questions and statements people send a bot (LoCoMo's friendly long turns have few of
  them), each labelled by hand.

Prints, per sample, how many messages the pre-check skips (model calls saved) and how many
of the skipped ones hold a fact (this must be zero).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from memory.write.precheck import may_hold_fact

LOCOMO = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo10.json"

# (message, holds a fact about the sender)
CHAT_MIX: list[tuple[str, bool]] = [
    ("ok", False), ("okay", False), ("ok thanks", False), ("thanks!", False),
    ("thank you so much", False), ("thx", False), ("ty", False), ("👍", False), ("🙂", False),
    ("😂😂😂", False), ("haha", False), ("lol", False), ("lol nice", False), ("cool", False),
    ("nice!", False), ("great, thanks", False), ("perfect", False), ("yes", False), ("no", False),
    ("yep", False), ("nope", False), ("sure", False), ("hi", False), ("hello!", False),
    ("hey", False), ("good morning", False), ("good night", False), ("bye", False),
    ("see you later", False), ("merci", False), ("danke", False), ("gracias", False),
    ("?", False), ("...", False), ("+1", False), ("hmm", False), ("oh wow", False),
    ("got it", False), ("sorry", False), ("np", False), ("alright", False), ("ok cool", False),
    ("what's the weather in Paris tomorrow?", False), ("can you recommend a book?", False),
    ("how do I boil an egg?", False), ("who won the match?", False), ("tell me a joke", False),
    ("and tomorrow?", False), ("why?", False), ("what do you remember about me?", False),
    ("search for vegan restaurants nearby", False), ("translate this to German please", False),
    ("that's interesting", False), ("I see", False), ("makes sense", False),
    ("I live in Paris", True), ("I moved to Berlin last month", True), ("I'm 34", True),
    ("I'm vegetarian", True), ("my sister lives in Lyon", True), ("I have a cat named Miso", True),
    ("I no longer play chess", True), ("I prefer tea over coffee", True),
    ("I work as a nurse", True), ("I started a new job yesterday", True),
    ("ok, I live in Lyon now", True), ("thanks! btw I'm allergic to peanuts", True),
    ("yes, I have two kids", True), ("no, I don't drink alcohol", True),
    ("haha I'm a terrible cook", True), ("good night, my exam is tomorrow", True),
    ("I love hiking", True), ("my birthday is on May 3", True), ("I drive a Toyota Corolla", True),
    ("I speak French and Spanish", True), ("I'm learning Japanese", True),
    ("my wife is called Anna", True), ("I hate mornings", True), ("I'm from Portugal", True),
    ("I got married in June", True), ("I run 5k every day", True), ("I'm left-handed", True),
    ("we adopted a dog", True), ("my flight to Oslo is on Friday", True),
    ("I quit smoking", True), ("I'm a night owl", True), ("I play the guitar", True),
    ("I'm 35 now", True), ("I use Linux at home", True), ("my son plays football", True),
    ("I'm diabetic", True), ("I can't eat gluten", True), ("I study law", True),
    ("I live alone", True), ("I'm retired", True), ("I own a bakery", True),
    ("I like jazz more than rock", True), ("I'm scared of spiders", True),
    ("I have a PhD in physics", True), ("I wake up at 6", True), ("yes I'm married", True),
    ("ok I'll be in Rome next week", True), ("no kids", True), ("vegan", True),
]  # fmt: skip


@dataclass
class Result:
    messages: int = 0
    skipped: int = 0
    with_fact: int = 0
    skipped_with_fact: int = 0

    def add(self, text: str, holds_fact: bool) -> None:
        skipped = not may_hold_fact(text)
        self.messages += 1
        self.skipped += skipped
        self.with_fact += holds_fact
        self.skipped_with_fact += skipped and holds_fact

    def line(self, name: str) -> str:
        share = self.skipped / self.messages if self.messages else 0.0
        return (
            f"{name}: {self.messages} messages, {self.with_fact} hold a fact; "
            f"pre-check skips {self.skipped} ({share:.1%} of extraction calls saved); "
            f"skipped holding a fact: {self.skipped_with_fact}"
        )


def locomo_turns() -> list[tuple[str, bool]]:
    samples = json.loads(LOCOMO.read_text())
    turns: list[tuple[str, bool]] = []
    for sample in samples:
        cited = {
            dia_id
            for session in sample["observation"].values()
            for facts in session.values()
            for _, dia_ids in facts
            for dia_id in ([dia_ids] if isinstance(dia_ids, str) else dia_ids)
        }
        conversation = sample["conversation"]
        for key, session in conversation.items():
            if key.startswith("session_") and isinstance(session, list):
                turns.extend((turn["text"], turn["dia_id"] in cited) for turn in session)
    return turns


def main() -> None:
    for name, sample in (("LoCoMo turns", locomo_turns()), ("chat-bot mix", CHAT_MIX)):
        result = Result()
        for text, holds_fact in sample:
            result.add(text, holds_fact)
        print(result.line(name))
        missed = [text for text, holds in sample if holds and not may_hold_fact(text)]
        if missed:
            print(f"  skipped although they hold a fact: {missed}")
    skipped_examples = [text for text, _ in locomo_turns() if not may_hold_fact(text)]
    print(f"LoCoMo turns skipped: {skipped_examples[:20]}")


if __name__ == "__main__":
    main()
