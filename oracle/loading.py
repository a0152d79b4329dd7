"""Reading a scenario file into plain data: the one place scenario bytes are decoded.

The file must be UTF-8 (a UTF-8 byte order mark is allowed); ``.json`` files are JSON,
everything else YAML (read by :mod:`windtunnel.oracle.model.yaml_safe`: safe, with alias
and depth limits). Repeated keys are refused in both. Every problem raises one
InvalidScenario line naming the file.
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

import yaml

from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.yaml_safe import load_yaml


def read_scenario_data(path: str | Path) -> Any:
    """The decoded YAML/JSON content of ``path``; raises InvalidScenario."""
    path = Path(path)
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidScenario(
            "file", source, f"cannot be read ({exc.strerror})", "check the path"
        ) from None
    text = decode_utf8(raw, source)
    is_json = path.suffix.lower() == ".json"
    try:
        return load_json(text, source) if is_json else load_yaml(text, source)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise InvalidScenario(
            "file",
            source,
            f"is not valid {'JSON' if is_json else 'YAML'}{_where(exc)}",
            "fix the syntax",
        ) from None


def decode_utf8(raw: bytes, source: str) -> str:
    """``raw`` as text; a leading UTF-8 byte order mark is dropped. Raises InvalidScenario
    naming the first byte that is not UTF-8."""
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start]
        raise InvalidScenario(
            "file",
            source,
            f"not UTF-8 (byte 0x{byte:02x} at offset {exc.start})",
            "save it as UTF-8",
        ) from None


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)
    return result


def load_json(text: str, source: str = "<text>") -> Any:
    """Parse JSON text; a repeated key in an object raises InvalidScenario with its line,
    too-deep nesting one that says so."""
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except _Repeated as repeated:
        key, line = _first_repeat(text) or (repeated.key, 0)
        where = f" at line {line}" if line else ""
        raise InvalidScenario(
            "file",
            source,
            f"duplicate key {key!r}{where}: each key may appear once",
            "remove one",
        ) from None
    except RecursionError:
        raise InvalidScenario(
            "file", source, "nests too deeply to be read", "flatten the structure"
        ) from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        raise InvalidScenario(
            "file", source, f"holds a value that cannot be read ({exc})", "fix the value"
        ) from None


def _first_repeat(text: str) -> tuple[str, int] | None:
    """The first repeated key in reading order and its line, found with a position-tracking pass of the
    pure-Python decoder (only run when a repeat is already known)."""

    scanstring: Any = getattr(json.decoder, "scanstring")  # noqa: B009 (untyped in typeshed)

    def skip(s: str, at: int) -> int:
        return _WHITESPACE.match(s, at).end()  # type: ignore[union-attr]

    def parse_object(
        s_and_end: tuple[str, int], strict: bool, scan_once: Any, *rest: Any
    ) -> tuple[dict[str, Any], int]:
        s, end = s_and_end
        result: dict[str, Any] = {}
        end = skip(s, end)
        if s[end : end + 1] == "}":
            return result, end + 1
        while s[end : end + 1] == '"':
            name, after = scanstring(s, end + 1, strict)
            if name in result:
                raise _Found(name, s.count("\n", 0, end) + 1)
            after = skip(s, after)
            if s[after : after + 1] != ":":
                break
            result[name], end = scan_once(s, skip(s, after + 1))
            end = skip(s, end)
            if s[end : end + 1] == "}":
                return result, end + 1
            if s[end : end + 1] != ",":
                break
            end = skip(s, end + 1)
        raise ValueError("not an object")

    decoder = json.JSONDecoder()
    setattr(decoder, "parse_object", parse_object)  # noqa: B010 (untyped in typeshed)
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        decoder.decode(text)
    except _Found as found:
        return found.key, found.line
    except (ValueError, StopIteration, RecursionError):
        pass
    return None


_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _Found(Exception):
    def __init__(self, key: str, line: int) -> None:
        super().__init__(key, line)
        self.key = key
        self.line = line


def _where(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f" at line {exc.lineno}"
    mark = getattr(exc, "problem_mark", None)
    return f" at line {mark.line + 1}" if mark is not None else ""
