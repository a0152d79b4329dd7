"""A fast path for the YAML that ``windtunnel generate`` writes: block sequences of JSON lines.

A scenario's ``input:`` is typically a block sequence whose items are one-line flow
mappings in JSON syntax (``  - {"event": {...}, "at": 5}``). PyYAML's Python constructor
builds those slowly next to a JSON parse (docs/architecture.md, "Speed of the oracle"), so
:func:`extract_json_runs` parses such runs with the JSON decoder and leaves a tagged
placeholder in their place.

The decoder is held to the YAML meaning of every value: a JSON float is accepted only
where YAML also reads a float (``1.5``, ``1.0e+5``; ``1e5`` is a string in YAML),
``NaN``/``Infinity``, surrogate escapes and characters YAML treats specially (tabs,
``\\r``, ``\\x85``, ``\\u2028``, non-printables, BOM) send the run back to the reference
loader, as does anything that is not JSON. Line numbers are kept (the run's lines
become blank lines), so later YAML errors still name the right line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

PLACEHOLDER_TAG: Final = "!windtunnel/json-lines"
"""Tag of the scalar that stands for a parsed run; files containing it skip the fast path."""

MIN_RUN_ITEMS: Final = 32
MIN_RUN_CHARS: Final = 4096
"""Runs with fewer items and fewer characters are left to the reference loader (nothing to
gain); a few long items (``generate``'s micro-batches, one ``batch`` item a line) count."""

_KEY_LINE = re.compile(r"^( *)[A-Za-z_][A-Za-z0-9_.\-]*:[ ]*$", re.MULTILINE)
_FIRST_ITEM = re.compile(r"( *)- [\[{]")
_UNSAFE = re.compile(
    r"[^\x20-\x7e\n\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]|\\u[dD][89a-fA-F]"
)
_YAML_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+(?:[eE][-+][0-9]+)?")


class NotTheSame(Exception):
    """A value whose JSON and YAML readings could differ: leave the run to YAML."""


class DuplicateKey(Exception):
    """A JSON object in a run repeats a key; ``line`` is 1-based in the whole file."""

    def __init__(self, key: Any, line: int) -> None:
        super().__init__(key, line)
        self.key = key
        self.line = line


def _yaml_float(text: str) -> float:
    if _YAML_FLOAT.fullmatch(text) is None:
        raise NotTheSame(text)
    return float(text)


def _not_the_same(text: str) -> Any:
    raise NotTheSame(text)


class _Repeated(Exception):
    def __init__(self, key: Any) -> None:
        super().__init__(key)
        self.key = key


def unique_pairs(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """``object_pairs_hook`` that refuses a repeated key (raises ``_Repeated``)."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[Any] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)
    return result


_DECODER: Final = json.JSONDecoder(
    parse_float=_yaml_float, parse_constant=_not_the_same, object_pairs_hook=unique_pairs
)


def _decode(text: str, first_line: int) -> list[Any]:
    """The run's JSON array; raises NotTheSame, or DuplicateKey with the item's line."""
    try:
        value = _DECODER.decode(text)
    except _Repeated:
        for offset, line in enumerate(text.split("\n")):
            try:
                _DECODER.decode(line.strip("[],"))
            except _Repeated as repeated:
                raise DuplicateKey(repeated.key, first_line + offset) from None
            except (ValueError, RecursionError, NotTheSame):
                continue
        raise NotTheSame("duplicate not located") from None
    except (ValueError, RecursionError) as exc:  # not JSON (or not JSON alone): YAML decides
        raise NotTheSame(str(exc)) from None
    assert isinstance(value, list)
    return value


@dataclass(frozen=True, slots=True)
class JsonRuns:
    """``text`` with each run replaced by ``key: !windtunnel/json-lines N``; ``runs[N]``
    is run N's list."""

    text: str
    runs: tuple[list[Any], ...]


def extract_json_runs(text: str) -> JsonRuns | None:
    """Parse every long block sequence of one-line JSON items under a plain ``key:``;
    None when there is none or the file mentions the placeholder tag. Raises
    DuplicateKey for a JSON item that repeats a key."""
    if PLACEHOLDER_TAG in text:
        return None
    pieces: list[str] = []
    runs: list[list[Any]] = []
    done = 0  # text[:done] is already in pieces
    for key in _KEY_LINE.finditer(text):
        if key.start() < done:
            continue
        run = _run_after(text, key.end() + 1, len(key.group(1)))
        if run is None:
            continue
        start, end, items = run
        first_line = text.count("\n", 0, start) + 1
        try:
            values = _decode(items, first_line)
        except NotTheSame:
            continue
        pieces.append(text[done : key.end()])
        pieces.append(f" {PLACEHOLDER_TAG} {len(runs)}\n")
        pieces.append("\n" * text.count("\n", start, end))
        runs.append(values)
        done = end
    if not runs:
        return None
    pieces.append(text[done:])
    return JsonRuns("".join(pieces), tuple(runs))


def _run_after(text: str, start: int, key_indent: int) -> tuple[int, int, str] | None:
    """(start, end, JSON array text) of the JSON-item lines from ``start``, or None."""
    first = _FIRST_ITEM.match(text, start)
    if first is None or len(first.group(1)) < key_indent:
        return None
    prefix = first.group(1) + "- "
    lines = _items_pattern(prefix).match(text, start)
    if lines is None:
        return None
    end = lines.end()
    body = text[start:end]
    short = body.count("\n") < MIN_RUN_ITEMS and len(body) < MIN_RUN_CHARS
    if short or _UNSAFE.search(body):
        return None
    after = _indent_of_next_line(text, end)
    if after is not None and (after > key_indent or text.startswith(prefix, end)):
        return None  # more of this block follows (an item YAML must judge): not ours
    items = "[" + body[len(prefix) : -1].replace("\n" + prefix, ",\n") + "]"
    return start, end, items


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _items_pattern(prefix: str) -> re.Pattern[str]:
    pattern = _PATTERNS.get(prefix)
    if pattern is None:
        pattern = re.compile(rf"(?:{re.escape(prefix)}[\[{{][^\n]*[\]}}] *\n)+")
        _PATTERNS[prefix] = pattern
    return pattern


def _indent_of_next_line(text: str, end: int) -> int | None:
    """Indentation of the line at ``end`` (None at the end of the text); a blank or
    comment line counts as indented (the caller then leaves the block to YAML)."""
    if not text[end:].strip():
        return None
    line_end = text.find("\n", end)
    line = text[end : len(text) if line_end < 0 else line_end]
    stripped = line.lstrip(" ")
    if not stripped.strip() or stripped.startswith("#"):
        return 10**9
    return len(line) - len(stripped)

