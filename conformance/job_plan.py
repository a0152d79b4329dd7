"""What a job's plan says it does: its watermark, window, grouping keys, aggregates, the
stages before them, and the event columns it reads.

Read from Spark's analyzed logical plan as Spark prints it (``queryExecution().analyzed()``
in a classic session, the ``== Analyzed Logical Plan ==`` section of ``explain(extended)``
over Spark Connect), one node a line, child nodes indented below. The events DataFrame the
job was given has a plan of its own, printed the same way: its top node names the event
columns (``AS ts#5``), and its lines are left out when reading the job's own nodes (matched
without their ids: over Spark Connect each plan is analyzed, and numbered, on its own).

- ``EventTimeWatermark ..., ts#5: timestamp, 10 seconds``: a watermark on ``ts``, delay
  10 s (Spark's interval text: ``1 minutes 30 seconds``, ``500 milliseconds``);
- ``named_struct(start, ..., end, ...) AS window#12``: ``window(ts, size, slide, start)``
  once analyzed: the start is ``t - ((t - offset) % slide)``, less ``i * slide`` for the
  i-th of several windows, and the end that plus ``size``, in microseconds; a
  ``session_window(ts, gap)`` ends at ``cast(ts + cast(GAP as interval) ...)``;
- ``Aggregate [keys], [outputs]``: grouping keys (the window's column left out) and one
  ``function(args) AS name`` per aggregate;
- ``Deduplicate [keys]``, ``DeduplicateWithinWatermark [keys]``, ``Filter cond`` (the
  window's own ``isnotnull(ts)`` left out), ``Join``, a Python UDF (``name(args)#id``).

Columns the job reads: every event column a node refers to, through renames, except where a
projection only passes it on (``Project [a#1, b#2]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from windtunnel.oracle.model.errors import InvalidSpec

MICROS_PER_MS = 1000

ATTRIBUTE = re.compile(r"([A-Za-z_][\w.]*?)#(\d+)L?(?:-T\d+ms)?")
"""An attribute in plan text: ``name#id``, a ``L`` for longs, ``-T<delay>ms`` once watermarked."""

_TREE = re.compile(r"^[\s:|+\-]*~?")
_INTERVAL_UNITS_MS = {
    "week": 604_800_000, "weeks": 604_800_000, "day": 86_400_000, "days": 86_400_000,
    "hour": 3_600_000, "hours": 3_600_000, "minute": 60_000, "minutes": 60_000,
    "second": 1000, "seconds": 1000, "millisecond": 1, "milliseconds": 1,
    "microsecond": 0.001, "microseconds": 0.001,
}


@dataclass(frozen=True, slots=True)
class PlanWatermark:
    """``withWatermark(column, delay)``: ``delay_ms`` None when not a fixed duration."""

    column: str
    delay_ms: int | None
    delay_text: str


@dataclass(frozen=True, slots=True)
class PlanWindow:
    """A window column: ``kind`` ``fixed`` (``size_ms``, ``slide_ms``, ``offset_ms``) or
    ``session`` (``gap_ms``, None when computed per row; ``gap_text`` as written)."""

    kind: str
    column: str
    size_ms: int | None = None
    slide_ms: int | None = None
    offset_ms: int = 0
    gap_ms: int | None = None
    gap_text: str = ""


@dataclass(frozen=True, slots=True)
class PlanAggregate:
    """One aggregate output: its column ``name``, ``function`` and the event ``fields`` it
    reads (``count(1)``: none)."""

    name: str
    function: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class JobPlan:
    """What a job's plan says (module docstring); names are event columns where a node
    reads one, else the job's own column names."""

    watermarks: tuple[PlanWatermark, ...] = ()
    windows: tuple[PlanWindow, ...] = ()
    group_by: tuple[str, ...] = ()
    aggregates: tuple[PlanAggregate, ...] = ()
    deduplicate: tuple[str, ...] | None = None
    filters: tuple[str, ...] = ()
    joins: tuple[str, ...] = ()
    udfs: tuple[str, ...] = ()
    reads: frozenset[str] = frozenset()


def interval_ms(text: str) -> int | None:
    """Milliseconds of Spark's interval text (``1 minutes 30 seconds``, ``10 seconds``,
    ``0.5 seconds``), or None for months or years (no fixed length) or other text."""
    words = text.replace(",", " ").split()
    if not words or len(words) % 2:
        return None
    total = 0.0
    for amount, unit in zip(words[::2], words[1::2], strict=True):
        factor = _INTERVAL_UNITS_MS.get(unit.lower())
        try:
            total += float(amount) * factor if factor is not None else float("nan")
        except ValueError:
            return None
        if factor is None:
            return None
    return round(total)


def node_lines(text: str) -> list[str]:
    """The plan's nodes, one a line, without the tree's drawing (``+-``, ``:``, ``~``)."""
    return [_TREE.sub("", line).strip() for line in text.splitlines() if line.strip()]


def split_top(text: str) -> list[str]:
    """``text`` split at commas outside brackets and parentheses, parts stripped."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def _bracketed(text: str, start: int) -> tuple[str, int]:
    """The text inside the bracket opening at ``start``, and the index after its close."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] in "([":
            depth += 1
        elif text[index] in ")]":
            depth -= 1
            if depth == 0:
                return text[start + 1 : index], index + 1
    raise InvalidSpec("plan", text[:80], "has an unclosed bracket", "give Spark's plan text")


def _lists(node: str) -> list[str]:
    """The bracketed lists after a node's name (``Aggregate [a], [b]`` -> ``["a", "b"]``)."""
    found, index = [], node.find("[")
    while index != -1:
        inner, end = _bracketed(node, index)
        found.append(inner)
        rest = node[end:].lstrip()
        if not rest.startswith(","):
            break
        index = node.find("[", end)
    return found


def _items(lists: Sequence[str]) -> list[str]:
    """The items of bracketed lists, nested lists (``Expand``'s projections) flattened."""
    out = []
    for part in lists:
        for item in split_top(part):
            if item.startswith("[") and item.endswith("]"):
                out += _items([item[1:-1]])
            else:
                out.append(item)
    return out


def _bare(item: str) -> bool:
    return ATTRIBUTE.fullmatch(item) is not None


def _alias(item: str) -> tuple[str, str] | None:
    """``(new_id, old_id)`` for a rename ``a#1 AS b#2``; None otherwise."""
    found = re.fullmatch(rf"({ATTRIBUTE.pattern}) AS ({ATTRIBUTE.pattern})", item)
    return None if found is None else (found.group(6), found.group(3))


def _ids(text: str) -> Iterator[str]:
    for found in ATTRIBUTE.finditer(text):
        yield found.group(2)


class _Names:
    """Attribute ids of the job's plan mapped to event columns, through renames."""

    def __init__(self, columns: dict[str, str]) -> None:
        self.columns = dict(columns)  # id -> event column
        self.names: dict[str, str] = {}  # id -> the job's name for it

    def column(self, attribute_id: str) -> str | None:
        return self.columns.get(attribute_id)

    def name(self, found: re.Match[str]) -> str:
        return self.column(found.group(2)) or found.group(1)


def _shape(node: str) -> str:
    """A node without its attribute ids (two analyses of one plan number them apart)."""
    return re.sub(r"#\d+", "#", node)


def event_columns(events_text: str, text: str | None = None) -> dict[str, str]:
    """``{id: column}`` of the events DataFrame's columns, read from its plan's top node as
    it appears in the job's plan ``text`` (by its shape; the events' own ids without it)."""
    lines = node_lines(events_text)
    if not lines:
        return {}
    top = lines[0]
    if text is not None:
        top = next((n for n in node_lines(text) if _shape(n) == _shape(top)), top)
    columns = {}
    for item in split_top(_lists(top)[0]) if top.startswith("Project") else []:
        found = re.search(rf"(?:^| AS ){ATTRIBUTE.pattern}$", item)
        if found is not None:
            columns[found.group(2)] = found.group(1)
    return columns


def _window(struct: str) -> PlanWindow | None:
    """The window a ``named_struct(start, ..., end, ...)`` computes, or None."""
    column = re.search(rf"precisetimestampconversion\(\(*(?:cast\()?{ATTRIBUTE.pattern}", struct)
    if column is None:
        return None
    name = column.group(1)
    head, _, end = struct.partition(", end, ")
    gap = re.search(r"\+ cast\((.+?) as interval\)", end)
    if gap is not None:
        text = gap.group(1).strip("'")
        return PlanWindow("session", name, gap_ms=interval_ms(text), gap_text=text)
    if " + " in end and "% " not in end and "cast(" in end:
        return PlanWindow("session", name, gap_text="computed per row")
    slide = re.search(r"- (\d+)\) % (\d+)\)", head)
    size = re.search(r"\+ (\d+)\), LongType, TimestampType\)", end)
    if slide is None or size is None:
        return None
    return PlanWindow("fixed", name, size_ms=int(size.group(1)) // MICROS_PER_MS,
                      slide_ms=int(slide.group(2)) // MICROS_PER_MS,
                      offset_ms=int(slide.group(1)) // MICROS_PER_MS)


def _structs(text: str) -> Iterator[str]:
    index = text.find("named_struct(start, ")
    while index != -1:
        inner, end = _bracketed(text, index + len("named_struct"))
        yield inner
        index = text.find("named_struct(start, ", end)


def read_plan(text: str, events_text: str) -> JobPlan:
    """The :class:`JobPlan` of a job's analyzed plan ``text`` over the events whose own
    analyzed plan is ``events_text`` (both as Spark prints them)."""
    names = _Names(event_columns(events_text, text))
    own = {_shape(n) for n in node_lines(events_text)}
    reads: set[str] = set()
    watermarks, windows, groups, aggregates, filters, joins, udfs = [], [], [], [], [], [], []
    deduplicate: tuple[str, ...] | None = None
    window_ids: set[str] = set()
    for node in reversed(node_lines(text)):  # leaves first: renames before their readers
        if _shape(node) in own:
            continue
        kind = node.split(" ", 1)[0]
        lists = _lists(node) if "[" in node else []
        read_here = node
        if kind in ("Project", "Expand", "Aggregate"):
            # an Aggregate reads its grouping keys; its outputs and a projection's items
            # read what is not passed on as it is (a bare or renamed column)
            grouping = lists[0] if kind == "Aggregate" and lists else ""
            items = _items(lists[1:] if kind == "Aggregate" else lists)
            kept = [grouping]
            for item in items:
                alias = _alias(item)
                if alias is not None:
                    column = names.column(alias[1])
                    if column is not None:
                        names.columns[alias[0]] = column
                    continue
                if not _bare(item):
                    kept.append(item)
            read_here = ", ".join(kept)
            for struct in _structs(node):
                window = _window(struct)
                if window is not None:
                    column_id = next(_ids(struct), None)
                    window = _named(window, names.column(column_id or "") or window.column)
                    if window not in windows:
                        windows.append(window)
            window_ids.update(_window_ids(kind, lists))
        if kind == "EventTimeWatermark":
            found = re.search(rf", {ATTRIBUTE.pattern}: \w+, (.+)$", node)
            if found is not None:
                delay = found.group(3).strip()
                watermarks.append(PlanWatermark(names.name(found), interval_ms(delay), delay))
        elif kind == "Aggregate" and len(lists) >= 2:
            for key in split_top(lists[0]):
                found = ATTRIBUTE.fullmatch(key)
                if found is not None and found.group(2) in window_ids:
                    continue
                groups.append(names.name(found) if found else key)
            for item in split_top(lists[1]):
                output = re.fullmatch(rf"(.*) AS {ATTRIBUTE.pattern}", item)
                if output is None or _bare(output.group(1)):
                    continue
                call = re.fullmatch(r"(\w+)\((.*)\)", output.group(1))
                function = call.group(1) if call is not None else "expression"
                fields = tuple(dict.fromkeys(names.name(a) for a in ATTRIBUTE.finditer(
                    output.group(1))))
                aggregates.append(PlanAggregate(output.group(2), function, fields))
        elif kind in ("Deduplicate", "DeduplicateWithinWatermark") and lists:
            deduplicate = tuple(names.name(a) for a in ATTRIBUTE.finditer(lists[0]))
        elif kind == "Filter":
            condition = node[len("Filter ") :]
            if not re.fullmatch(rf"isnotnull\({ATTRIBUTE.pattern}\)", condition):
                filters.append(_readable(condition, names))
        elif kind == "Join":
            joins.append(_readable(node[len("Join ") :], names))
        for found in re.finditer(r"([\w<>]+)\(([^()]*)\)#\d+", node):
            udfs.append(f"{found.group(1)}({_readable(found.group(2), names)})")
        for attribute_id in _ids(read_here):
            column = names.column(attribute_id)
            if column is not None:
                reads.add(column.split(".")[0])
    return JobPlan(tuple(watermarks), tuple(windows), tuple(dict.fromkeys(groups)),
                   tuple(aggregates), deduplicate, tuple(filters), tuple(joins),
                   tuple(dict.fromkeys(udfs)), frozenset(reads))


def _window_ids(kind: str, lists: Sequence[str]) -> set[str]:
    """Ids of the window columns a ``Project`` or ``Expand`` node makes."""
    found: set[str] = set()
    if kind == "Project" and lists:
        for item in split_top(lists[0]):
            after = re.search(rf" AS {ATTRIBUTE.pattern}$", item)
            if "named_struct(start, " in item and after is not None:
                found.add(after.group(2))
    elif kind == "Expand" and len(lists) >= 2:
        first = split_top(split_top(lists[0])[0].strip("[]"))
        outputs = split_top(lists[-1])
        for item, output in zip(first, outputs, strict=False):
            named = ATTRIBUTE.fullmatch(output)
            if "named_struct(start, " in item and named is not None:
                found.add(named.group(2))
    return found


def _named(window: PlanWindow, column: str) -> PlanWindow:
    from dataclasses import replace

    return replace(window, column=column)


def _readable(text: str, names: _Names) -> str:
    """Plan text with attribute ids and watermark marks taken out (``user_id = bot-7``)."""
    return ATTRIBUTE.sub(lambda found: names.name(found), text)


def analyzed_section(explained: str) -> str:
    """The analyzed plan out of ``explain(extended=True)`` text (its schema line dropped)."""
    _, found, rest = explained.partition("== Analyzed Logical Plan ==")
    if not found:
        return explained
    body = rest.split("\n== ", 1)[0].strip("\n").splitlines()
    return "\n".join(body[1:] if body and ":" in body[0] and "[" not in body[0] else body)


def plan_text(frame: object) -> str:
    """A DataFrame's analyzed plan as Spark prints it: classic sessions through the JVM,
    Spark Connect through ``explain(extended)``."""
    jdf = getattr(frame, "_jdf", None)
    if jdf is not None:
        return str(jdf.queryExecution().analyzed().toString())
    explain = getattr(frame, "_explain_string", None)
    if not callable(explain):
        raise InvalidSpec("job", type(frame).__name__, "has no plan windtunnel can read",
                          "return a Spark DataFrame")
    return analyzed_section(str(explain(extended=True)))


def lines_of(plan: Sequence[str]) -> str:
    """Plan lines joined as Spark prints them (for tests and messages)."""
    return "\n".join(plan)
