"""Tool calls that a model wrote as text instead of as structured ``tool_calls``.

Small models often write the call as text: bare JSON (or a list of it), inside
``<tool_call>`` tags, after ``[TOOL_CALLS]`` or ``<|python_tag|>``, in a code fence, or as a
Python call. An object with a name and arguments is a call whatever tool it names (the
caller finds it cannot run it); looser shapes count only for offered tools. The rest of the
text is kept without the calls, so raw call JSON never reaches a person.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from memory.llm.base import AssistantTurn, ToolCall, ToolSpec

# Wrappers around calls written as text; removed from what is left of the text.
WRAPPERS = re.compile(
    r"</?tool_call>|\[/?TOOL_CALLS\]|<\|python_tag\|>|<\|eom_id\|>|<\|eot_id\|>|"
    r"^\s*functools\b|```(?:json|python|tool_code)?",
    re.IGNORECASE | re.MULTILINE,
)
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
NAME_KEYS = ("name", "tool", "tool_name", "function")
PYTHON_CALL = re.compile(r"\[?\s*([A-Za-z_]\w*)\s*\(.*\)\s*\]?", re.DOTALL)


@dataclass(frozen=True, slots=True)
class TextCalls:
    """The calls found in a text, and the text without them."""

    calls: tuple[ToolCall, ...]
    rest: str


def calls_in_text(text: str, tool_names: Collection[str]) -> TextCalls:
    """The calls of ``tool_names`` written in ``text``; ``rest`` is the other words."""
    if not tool_names or not text.strip():
        return TextCalls((), text)
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    for start, end, found in json_values(text):
        named = calls_of(found, tool_names)
        if named:
            calls.extend(named)
            kept.append(text[position:start])
            position = end
    kept.append(text[position:])
    rest = "".join(kept)
    if not calls:
        python = python_calls(rest, tool_names)
        if python:
            return TextCalls(numbered(python), "")
        return TextCalls((), text)
    return TextCalls(numbered(calls), WRAPPERS.sub("", rest).strip())


def turn_of(text: str, calls: tuple[ToolCall, ...], tools: Sequence[ToolSpec]) -> AssistantTurn:
    """The model's turn: its structured calls if it made any, else the calls in its text."""
    if calls:
        return AssistantTurn(text, calls)
    written = calls_in_text(text, [tool.name for tool in tools])
    return AssistantTurn(written.rest, written.calls)


def numbered(calls: list[ToolCall]) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(call.name, call.arguments, f"text_call_{number}")
        for number, call in enumerate(calls)
    )


def json_values(text: str) -> Iterator[tuple[int, int, Any]]:
    """Each JSON object or list in ``text`` (outermost only), with where it starts and ends."""
    decoder = json.JSONDecoder()
    index = 0
    while index < len(text):
        if text[index] not in "{[":
            index += 1
            continue
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index += 1
            continue
        yield index, end, value
        index = end


def calls_of(value: Any, tool_names: Collection[str]) -> list[ToolCall]:
    if isinstance(value, list):
        return [call for item in value for call in calls_of(item, tool_names)]
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("tool_calls"), list):
        return calls_of(value["tool_calls"], tool_names)
    function = value.get("function")
    if isinstance(function, dict):
        return calls_of(function, tool_names)
    name = next((value[key] for key in NAME_KEYS if isinstance(value.get(key), str)), None)
    if name is None and len(value) == 1:
        # {"web_search": {"queries": [...]}}
        ((only_key, only_value),) = value.items()
        if only_key in tool_names and isinstance(only_value, dict):
            return [ToolCall(only_key, only_value)]
    has_arguments = any(key in value for key in ARGUMENT_KEYS)
    if name is None or (name not in tool_names and not has_arguments):
        return []
    raw: Any = next((value[key] for key in ARGUMENT_KEYS if key in value), {})
    return [ToolCall(str(name), arguments_object(raw))]


def arguments_object(raw: Any) -> dict[str, Any]:
    """Arguments as an object: a JSON string is decoded; anything else that is not an object
    becomes ``{}``, for the caller's validation to reject."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return raw if isinstance(raw, dict) else {}


def python_calls(text: str, tool_names: Collection[str]) -> list[ToolCall]:
    """``web_search(queries=["..."])`` or ``[web_search(...)]``, with literal arguments."""
    stripped = WRAPPERS.sub("", text).strip()
    if not PYTHON_CALL.fullmatch(stripped):
        return []
    try:
        tree = ast.parse(stripped, mode="eval").body
    except SyntaxError:
        return []
    nodes = tree.elts if isinstance(tree, ast.List) else [tree]
    calls: list[ToolCall] = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return []
        if node.func.id not in tool_names:
            return []
        try:
            arguments = {
                keyword.arg: ast.literal_eval(keyword.value)
                for keyword in node.keywords
                if keyword.arg is not None
            }
        except ValueError:
            arguments = {}
        calls.append(ToolCall(node.func.id, arguments))
    return calls


# The start of a call that was cut before it was complete: a call wrapper, or JSON that
# names one of the tools.
UNFINISHED_WRAPPER = r"<tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>"


# A call of any tool: a name, then its arguments.
UNFINISHED_ANY = r'\{\s*"(?:name|tool|function)"\s*:\s*"[^"]*"\s*,\s*"(?:arguments|parameters)"'


def unfinished_call(tool_names: Collection[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(name) for name in tool_names)
    return re.compile(
        rf"{UNFINISHED_WRAPPER}|{UNFINISHED_ANY}"
        rf"|(?:```\w*\s*)?[\[{{][^\n]{{0,80}}\"(?:{names})\"",
        re.IGNORECASE,
    )


def without_calls(text: str, tool_names: Collection[str]) -> str:
    """``text`` as a person may see it: calls of ``tool_names`` taken out, and an unfinished
    call (an answer cut in the middle of one) cut off where it starts."""
    rest = calls_in_text(text, tool_names).rest
    unfinished = unfinished_call(tool_names).search(rest)
    return (rest if unfinished is None else rest[: unfinished.start()]).strip()


# Brackets that may open a call written as text; ``(`` only right after a name (a Python
# call), ``<`` only before a tag's name or ``|`` (``<tool_call>``, ``<|python_tag|>``).
CLOSERS = {"{": "}", "[": "]", "(": ")", "<": ">"}
FENCE_OPENER_AT_END = re.compile(r"```[\w-]*\s*$")


def first_open(text: str) -> int:
    """Where the first bracket still open in ``text`` starts (``len(text)`` if none).
    Inside brackets, JSON strings are skipped, so a ``}`` in a string closes nothing."""
    stack: list[tuple[str, int]] = []
    in_string = escaped = False
    for index, character in enumerate(text):
        if stack and in_string:
            escaped, in_string = (False, True) if escaped else (character == "\\", character != '"')
            continue
        if stack and character == '"':
            in_string = True
        elif character in CLOSERS and opens_here(text, index):
            stack.append((CLOSERS[character], index))
        elif stack and character == stack[-1][0]:
            stack.pop()
    return stack[0][1] if stack else len(text)


def opens_here(text: str, index: int) -> bool:
    character = text[index]
    if character == "(":
        return index > 0 and (text[index - 1].isalnum() or text[index - 1] == "_")
    if character == "<":
        following = text[index + 1 : index + 2]
        return following == "" or following.isalpha() or following in "|/"
    return True


def shown_while_streaming(text: str, tool_names: Collection[str]) -> str:
    """What a person may see of an answer still being written: :func:`without_calls` of its
    text up to the first bracket or tag still open (a call being written, perhaps), less a
    last word that may still grow into a call's wrapper (``functools``, a tool's name) and
    a code fence opened at the very end."""
    # The last word goes before brackets are counted (without it, a call whose brackets
    # closed would be open again), and again after: it may touch the bracket.
    settled = whole_words(text)
    settled = whole_words(settled[: first_open(settled)])
    settled = FENCE_OPENER_AT_END.sub("", settled)
    return without_calls(settled, tool_names)


def whole_words(text: str) -> str:
    """``text`` without a last word that nothing (no space, no line break) ends yet."""
    if not text or text[-1].isspace():
        return text
    return text[: max(text.rfind(" "), text.rfind("\n")) + 1]
