"""YAML that cannot hurt: the C safe loader, YAML 1.2 booleans, and hard limits.

:func:`load_yaml` uses libyaml's ``CSafeLoader`` when PyYAML was built with it (else
``SafeLoader``), constructs only plain data (no Python objects), and refuses with one
InvalidScenario line:

- a mapping that repeats a key (PyYAML would keep the last one silently);
- aliases that would expand the document by more than :data:`MAX_ALIAS_NODES` nodes
  (the "billion laughs" bomb), or an alias inside its own anchor (a recursive value);
- nesting deeper than :data:`MAX_DEPTH` levels (libyaml's composer recurses in C and
  crashes the process on very deep input, so depth is bounded before parsing).

Long runs of one-line JSON items go through the JSON decoder (``yaml_fast``).
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any, Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.yaml_fast import PLACEHOLDER_TAG, DuplicateKey, extract_json_runs

MAX_ALIAS_NODES: Final = 1_000_000
"""Nodes aliases may add beyond those written in the file."""

MAX_DEPTH: Final = 1_000
"""Nesting levels allowed (estimated from brackets and indentation, never under-counted)."""

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"
_BOOL_TAG: Final = "tag:yaml.org,2002:bool"
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_BLOCK_PREFIX = re.compile(r"^[ \-?]*", re.MULTILINE)


class _Refused(Exception):
    def __init__(self, rule: str, fix: str) -> None:
        super().__init__(rule)
        self.rule = rule
        self.fix = fix


class SafeYamlLoader(_Base):  # type: ignore[misc]
    """libyaml's parser (when available) with PyYAML's safe constructor, YAML 1.2
    booleans (only true/false; ``on``, ``yes``, ``off`` stay strings), no repeated keys,
    and the alias limits checked on the composed node graph before construction."""

    runs: tuple[list[Any], ...] = ()
    placeholders_seen = 0

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        if self.runs or self.anchors_possible:
            self._check_graph(node)
        return self.construct_document(node)

    anchors_possible = True

    def construct_mapping(self, node: Node, deep: bool = False) -> Any:
        if isinstance(node, MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    repeated = key in seen
                    seen.add(key)
                except TypeError:  # unhashable: the base constructor reports it
                    continue
                if repeated:
                    line = key_node.start_mark.line + 1
                    raise _Refused(
                        f"duplicate key {key!r} at line {line}: each key may appear once",
                        "remove one",
                    )
        return super().construct_mapping(node, deep=deep)

    def construct_run(self, node: Node) -> list[Any]:
        """The list a fast-path placeholder stands for."""
        index = self.construct_scalar(node)
        if not self.runs or not str(index).isdigit() or int(index) >= len(self.runs):
            raise yaml.constructor.ConstructorError(
                None, None, f"could not determine a constructor for the tag {node.tag!r}",
                node.start_mark,
            )
        return self.runs[int(index)]

    def _check_graph(self, root: Node) -> None:
        """Refuse recursive aliases and alias expansion beyond MAX_ALIAS_NODES; count
        placeholders that sit where a block mapping's value belongs."""
        sizes: dict[int, int] = {}
        active: set[int] = set()
        stack: list[tuple[Node, bool, bool]] = [(root, False, False)]
        while stack:
            node, finished, block_value = stack.pop()
            ident = id(node)
            if finished:
                active.discard(ident)
                sizes[ident] = 1 + sum(sizes[id(child)] for child in _children(node))
                continue
            if ident in sizes:
                continue
            if ident in active:
                raise _Refused(
                    f"an alias at line {node.start_mark.line + 1} refers to its own anchor",
                    "write the value out without a recursive alias",
                )
            if isinstance(node, ScalarNode):
                if node.tag == PLACEHOLDER_TAG and block_value:
                    self.placeholders_seen += 1
                sizes[ident] = 1
                continue
            active.add(ident)
            stack.append((node, True, False))
            if isinstance(node, MappingNode):
                block = node.flow_style is False
                for key, value in node.value:
                    stack.append((key, False, False))
                    stack.append((value, False, block))
            else:
                stack.extend((child, False, False) for child in node.value)
        expanded = sizes[id(root)]
        if expanded - len(sizes) > MAX_ALIAS_NODES:
            raise _Refused(
                f"aliases expand it to {expanded:,} nodes from {len(sizes):,} written "
                f"(at most {MAX_ALIAS_NODES:,} more are allowed)",
                "write the repeated parts out or use fewer aliases",
            )


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


SafeYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL_TAG]
    for first, resolvers in _Base.yaml_implicit_resolvers.copy().items()
}
SafeYamlLoader.add_implicit_resolver(
    _BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
SafeYamlLoader.add_constructor(PLACEHOLDER_TAG, SafeYamlLoader.construct_run)


def estimated_depth(text: str) -> int:
    """An upper bound of the nesting depth: open flow brackets (quotes ignored, so
    brackets inside strings can only raise it) plus twice the widest block prefix."""
    brackets = _NOT_BRACKETS.sub("", text)
    flow = max(accumulate(1 if c in "[{" else -1 for c in brackets), default=0)
    block = max((len(m) for m in _BLOCK_PREFIX.findall(text)), default=0)
    return flow + 2 * block + 1


def load_yaml(text: str, source: str = "<text>") -> Any:
    """Parse YAML text as plain data (YAML 1.2 booleans). Raises InvalidScenario
    (``file=<source>``) for repeated keys, alias bombs, recursive aliases and deep
    nesting; raises ``yaml.YAMLError`` for syntax errors."""
    try:
        fast = extract_json_runs(text)
    except DuplicateKey as duplicate:
        raise InvalidScenario(
            "file",
            source,
            f"duplicate key {duplicate.key!r} at line {duplicate.line}: each key may appear once",
            "remove one",
        ) from None
    if fast is not None:
        try:
            data = _load(fast.text, source, fast.runs)
        except (yaml.YAMLError, _Mismatch):
            pass  # a placeholder where YAML would not read a block value: the reference path
        else:
            return data
    return _load(text, source, ())


class _Mismatch(Exception):
    """A fast-path placeholder was not a block mapping's value."""


def _load(text: str, source: str, runs: tuple[list[Any], ...]) -> Any:
    depth = estimated_depth(text)
    if depth > MAX_DEPTH:
        raise InvalidScenario(
            "file",
            source,
            f"nests about {depth:,} levels deep (at most {MAX_DEPTH:,} are allowed)",
            "flatten the structure",
        )
    loader = SafeYamlLoader(text)
    loader.runs = runs
    loader.anchors_possible = "&" in text
    try:
        data = loader.get_single_data()
        if runs and loader.placeholders_seen != len(runs):
            raise _Mismatch()
        return data
    except _Refused as refused:
        raise InvalidScenario("file", source, refused.rule, refused.fix) from None
    except (RecursionError, ValueError, OverflowError) as exc:
        raise InvalidScenario(
            "file", source, f"holds a value that cannot be read ({exc})", "fix the value"
        ) from None
    finally:
        loader.dispose()
