"""Scenario file loading: strict UTF-8, no repeated keys, alias and depth limits, and the
JSON-lines fast path giving exactly what the reference YAML loader gives."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.loading import read_scenario_data
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.yaml_fast import MIN_RUN_ITEMS, extract_json_runs
from windtunnel.oracle.model.yaml_safe import SafeYamlLoader, load_yaml

BOMB = "\n".join(
    ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
)


def reference(text: str) -> Any:
    """The plain (slow) loader: same resolvers and constructor, no fast path."""
    return yaml.load(text, Loader=SafeYamlLoader)


def assert_same_as_reference(text: str) -> None:
    """load_yaml gives the reference's value, or fails where the reference fails."""
    try:
        expected = reference(text)
    except (yaml.YAMLError, ValueError):
        with pytest.raises((yaml.YAMLError, ValueError)):
            load_yaml(text)
        return
    assert load_yaml(text) == expected


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        ("top.yaml", "name: a\nwindow: {size: 1s}\ninput: []\nwindow: {size: 2s}\n", 4),
        ("nested.yaml", "window:\n  size: 1s\n  size: 2s\ninput: []\n", 3),
        ("flow.yaml", "input:\n  - {ts: 1, ts: 2}\n", 2),
        ("top.json", '{"window": {"size": "1s"},\n "input": [],\n "window": {}}', 3),
        ("nested.json", '{"input": [\n{"ts": 1},\n{"ts": 1, "ts": 2}]}', 3),
    ],
)
def test_repeated_keys_are_refused_with_their_line(
    tmp_path: Path, name: str, content: str, line: int
) -> None:
    with pytest.raises(InvalidScenario) as error:
        read_scenario_data(write(tmp_path, name, content))
    message = str(error.value)
    assert f"at line {line}: each key may appear once; remove one" in message, message
    assert message.startswith("file="), message
    assert "\n" not in message


def test_repeated_key_inside_a_fast_run_names_its_line(tmp_path: Path) -> None:
    items = [f'  - {{"ts": {i}}}' for i in range(MIN_RUN_ITEMS * 2)]
    items[40] = '  - {"ts": 40, "ts": 41}'
    text = "window: {size: 1s}\ninput:\n" + "\n".join(items) + "\n"
    with pytest.raises(InvalidScenario, match="duplicate key 'ts' at line 43"):
        load_yaml(text)


def test_merge_keys_may_override() -> None:
    assert load_yaml("base: &b {x: 1, y: 2}\nmine:\n  <<: *b\n  x: 3\n")["mine"] == {"x": 3, "y": 2}


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_non_utf8_is_refused_and_a_bom_is_fine(tmp_path: Path, suffix: str) -> None:
    bad = write(tmp_path, "latin" + suffix, '{"name": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(InvalidScenario) as error:
        read_scenario_data(bad)
    assert "not UTF-8 (byte 0xe9 at offset 13); save it as UTF-8" in str(error.value)
    good = write(tmp_path, "bom" + suffix, b"\xef\xbb\xbf" + '{"name": "caf\xe9"}'.encode())
    assert read_scenario_data(good) == {"name": "caf\xe9"}


def test_alias_bomb_is_refused_fast() -> None:
    started = time.perf_counter()
    with pytest.raises(InvalidScenario, match="aliases expand it to 490,329,064 nodes from 28 written"):
        load_yaml(BOMB)
    assert time.perf_counter() - started < 5


def test_modest_aliases_and_recursive_aliases() -> None:
    assert load_yaml("a: &p {k: 1}\nb: [*p, *p]\n") == {"a": {"k": 1}, "b": [{"k": 1}] * 2}
    with pytest.raises(InvalidScenario, match="refers to its own anchor"):
        load_yaml("a: &x [1, *x]\n")


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "- " * 100_000 + "x"])
def test_deep_nesting_is_refused_not_crashing(text: str) -> None:
    with pytest.raises(InvalidScenario, match="levels deep"):
        load_yaml(text)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_values_python_cannot_hold_are_one_line_errors(tmp_path: Path, suffix: str) -> None:
    path = write(tmp_path, "big" + suffix, '{"n": ' + "9" * 5000 + "}")
    with pytest.raises(InvalidScenario, match="holds a value that cannot be read"):
        read_scenario_data(path)


def test_json_nesting_too_deep(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidScenario, match="nests too deeply"):
        read_scenario_data(path)


def run_text(items: list[str], key: str = "input", indent: str = "  ") -> str:
    body = "".join(f"{indent}- {item}\n" for item in items)
    return f"name: x\n{key}:\n{body}expect:\n  drops: []\n"


def test_fast_path_is_taken_for_generated_files() -> None:
    items = [json.dumps({"event": {"ts": i, "k": "a"}, "at": i}) for i in range(100)]
    text = run_text(items)
    fast = extract_json_runs(text)
    assert fast is not None and len(fast.runs) == 1
    assert fast.text.count("\n") == text.count("\n")  # line numbers are kept
    assert load_yaml(text) == reference(text)


def test_fast_path_is_taken_for_a_few_long_batch_items() -> None:
    # generate --batch-size writes one `batch` item a line: 4 items of 5000 events each
    batch = [{"event": {"ts": i, "user": f"u{i % 7}"}, "at": i} for i in range(200)]
    items = [json.dumps({"batch": batch}) for _ in range(4)]
    text = run_text(items)
    fast = extract_json_runs(text)
    assert fast is not None and len(fast.runs) == 1
    assert load_yaml(text) == reference(text)
    short = run_text([json.dumps({"batch": batch[:2]}) for _ in range(4)])
    assert extract_json_runs(short) is None  # few short items: the reference loader


@pytest.mark.parametrize(
    "odd",
    [
        '{"f": 1e5}',  # a string in YAML
        '{"f": 1.5e+5}',
        '{"f": NaN}',
        '{"s": "\\ud83d\\ude00"}',
        '{"s": "a\\/b\\u00e9\\n"}',
        '{"s": "tab\there"}',
        '{"s": "\u2028"}',
        "{ts: 1}",  # not JSON
        '{"a": 1}  # a comment',
        "&anchor {\"a\": 1}",
    ],
)
def test_fast_path_agrees_with_reference_on_odd_items(odd: str) -> None:
    items = [json.dumps({"ts": i}) for i in range(MIN_RUN_ITEMS + 5)]
    items[3] = odd
    assert_same_as_reference(run_text(items))


@pytest.mark.parametrize(
    "text",
    [
        "description: |\n  input:\n" + "".join(f'  - {{"a": {i}}}\n' for i in range(40)) + "x: 1\n",
        "outer:\n  input:\n" + "".join(f'  - {{"a": {i}}}\n' for i in range(40)) + "  more: 1\n",
        "input:\n" + "".join(f'- {{"a": {i}}}\n' for i in range(40)) + "- {b: 1}\n",
        "input:\n" + "".join(f'  - {{"a": {i}}}\n' for i in range(40)) + "    - 1\n",
    ],
)
def test_fast_path_leaves_other_shapes_to_the_reference(text: str) -> None:
    assert_same_as_reference(text)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=5), json_values, max_size=3), min_size=MIN_RUN_ITEMS))
def test_fast_path_matches_reference_property(values: list[dict[str, Any]]) -> None:
    assert_same_as_reference(run_text([json.dumps(v, ensure_ascii=False) for v in values]))
    assert_same_as_reference(run_text([json.dumps(v) for v in values]))
