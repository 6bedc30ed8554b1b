"""Answers shown as they are written: the port the core streams to, and its pacing."""

from bot.streaming.base import AnswerStream, Display
from bot.streaming.pacing import PacedAnswer

__all__ = ["AnswerStream", "Display", "PacedAnswer"]
