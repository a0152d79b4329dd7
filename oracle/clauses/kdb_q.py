"""kdb Insights window operators as q text.

Source: https://code.kx.com/insights/1.11/api/stream-processor/q/windows.html::

    .qsp.window.tumbling[00:00:10; `time; .qsp.use ``lateness!(::;00:00:02)]
    .qsp.window.sliding[00:00:05; 00:00:10; `time]
    .qsp.window.count[10; 5]
    .qsp.window.timer[00:00:05; .qsp.use enlist[`countTrigger]!enlist 10000]

Options dictionaries: ```name!(::;value)``, ```name!11b``, ``enlist[`name]!enlist value``,
``(enlist `name)!enlist value`` and ```a`b!(v1;v2)``. Times: ``hh:mm:ss[.fff]``, ``hh:mm``,
``0Dhh:mm:ss[.nnn]``. ``.qsp.window.global`` takes a q lambda and is not parsed: use the
``kdb_global`` kind with a built-in trigger. Aggregations come from the scenario's
``aggregate``.
"""

from __future__ import annotations

import re
from typing import Any, Final

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import WindowSpec
from windtunnel.oracle.profiles.kdb.spec import KdbCountWindows, KdbTimerWindows, KdbTimeWindows

SUPPORTED = (
    ".qsp.window.tumbling[period; `col; opts], .sliding[period; duration; `col; opts], "
    ".count[size; frequency], .timer[period; opts] with opts .qsp.use dicts of lateness, "
    "passthrough, sort, countTrigger, skipEmptyWindows, acceptDictionaries"
)
_TOKEN: Final = re.compile(
    r"\s*(?:(?P<time>(?:\d+D)?\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)|(?P<bools>[01]+b)"
    r"|(?P<long>\d+[jhi]?)|(?P<sym>`[\w.]*)|(?P<name>\.qsp\.[\w.]+|enlist|::)"
    r"|(?P<punct>[\[\]();!])|(?P<bad>\S))"
)
_OPTIONS: Final = {
    "tumbling": ("lateness", "passthrough", "sort", "countTrigger", "skipEmptyWindows",
                 "acceptDictionaries"),
    "sliding": ("lateness", "passthrough", "sort", "countTrigger", "skipEmptyWindows",
                "acceptDictionaries"),
    "count": ("acceptDictionaries",),
    "timer": ("countTrigger", "skipEmptyWindows", "acceptDictionaries"),
}


class _Q:
    def __init__(self, text: str, field: str) -> None:
        self.text = text
        self.field = field
        self.tokens = [(m.lastgroup or "", m.group(m.lastgroup or 0), m.start(m.lastgroup or 0))
                       for m in _TOKEN.finditer(text) if m.lastgroup]
        self.tokens.append(("end", "", len(text)))
        self.pos = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.pos]

    def next(self) -> tuple[str, str, int]:
        token = self.tokens[self.pos]
        self.pos = min(self.pos + 1, len(self.tokens) - 1)
        return token

    def take(self, text: str) -> bool:
        if self.peek()[1] == text:
            self.next()
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.take(text):
            self.fail(f"expected {text!r}")

    def fail(self, what: str, token: tuple[str, str, int] | None = None) -> Any:
        kind, text, offset = token or self.peek()
        shown = "the end of the text" if kind == "end" else repr(text)
        raise InvalidSpec(self.field, self.text, f"{what}, found {shown} at offset {offset}",
                          f"supported: {SUPPORTED}")

    def time_ms(self) -> int:
        kind, text, _ = token = self.next()
        if kind != "time":
            self.fail("expected a time such as 00:00:10", token)
        days = 0
        if "D" in text:
            head, text = text.split("D")
            days = int(head)
        parts = text.split(":")
        hours, minutes = int(parts[0]), int(parts[1])
        seconds = float(parts[2]) if len(parts) > 2 else 0.0
        return round(((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000)

    def long(self) -> int:
        kind, text, _ = token = self.next()
        if kind != "long":
            self.fail("expected a whole number", token)
        return int(text.rstrip("jhi"))

    def value(self) -> Any:
        kind, text, _ = token = self.peek()
        if kind == "time":
            return ("time", self.time_ms())
        if kind == "long":
            return ("long", self.long())
        if kind == "bools":
            self.next()
            return ("bools", [c == "1" for c in text[:-1]])
        if text == "::":
            self.next()
            return ("null", None)
        return self.fail("expected a value", token)

    def keys(self) -> list[str]:
        if self.take("enlist"):
            if self.take("["):
                inner = self.keys()
                self.expect("]")
                return inner
            return self.keys()
        if self.take("("):
            inner = self.keys()
            self.expect(")")
            return inner
        keys: list[str] = []
        while self.peek()[0] == "sym":
            symbols = self.next()[1]
            keys.extend(symbols.split("`")[1:] or [""])
        if not keys:
            self.fail("expected option names such as ``lateness")
        return keys

    def values(self, count: int) -> list[Any]:
        if self.take("enlist"):
            return [self.value()]
        if self.take("("):
            values = [self.value()]
            while self.take(";"):
                values.append(self.value())
            self.expect(")")
            return values
        value = self.value()
        if value[0] == "bools" and len(value[1]) == count:
            return [("bool", b) for b in value[1]]
        return [value]


def parse_kdb_q(text: str, field: str = "query") -> WindowSpec:
    """The window spec a ``.qsp.window.*`` call describes; raises InvalidSpec at the token."""
    q = _Q(text, field)
    kind, name, _ = head = q.next()
    operator = name.removeprefix(".qsp.window.") if kind == "name" else ""
    if operator == "global":
        q.fail("q lambdas are not parsed: use window kind kdb_global with a built-in trigger",
               head)
    if operator not in _OPTIONS:
        q.fail("expected .qsp.window.tumbling, .sliding, .count or .timer", head)
    assigner = text.find("`timeAssigner")
    if assigner >= 0:  # a q function: scenario files run no arbitrary code
        q.fail("timeAssigner takes a q function and is API-only: pass "
               "KdbTimeWindows(time_assigner=...) from Python, or name a `timeColumn",
               ("sym", "`timeAssigner", assigner))
    q.expect("[")
    args: list[Any] = []
    options: dict[str, Any] = {}
    while True:
        kind, value, _ = token = q.peek()
        if value == ".qsp.use":
            q.next()
            options = _options(q, operator)
        elif kind == "time":
            args.append(q.time_ms())
        elif kind == "long":
            args.append(q.long())
        elif kind == "sym":
            q.next()
            args.append(value[1:])
        else:
            q.fail("expected an argument", token)
        if not q.take(";"):
            break
    q.expect("]")
    if q.peek()[0] != "end":
        q.fail("unexpected text after the operator")
    return _spec(q, operator, args, options)


def _options(q: _Q, operator: str) -> dict[str, Any]:
    keys = q.keys()
    q.expect("!")
    values = q.values(len(keys))
    if len(values) != len(keys):
        q.fail(f"{len(keys)} option names but {len(values)} values")
    options: dict[str, Any] = {}
    for key, (kind, value) in zip(keys, values, strict=True):
        if key == "":  # the generic null key of ``name!(::;value)
            continue
        if key not in _OPTIONS[operator]:
            q.fail(f"option `{key} is not supported by .qsp.window.{operator} "
                   f"(use {', '.join(_OPTIONS[operator])})",
                   ("sym", f"`{key}", q.text.find(f"`{key}")))
        options[key] = value
        if kind == "bools":
            options[key] = value[-1]
    return options


def _spec(q: _Q, operator: str, args: list[Any], options: dict[str, Any]) -> WindowSpec:
    def flag(name: str) -> bool:
        value = options.get(name, False)
        if not isinstance(value, bool):
            q.fail(f"`{name} must be a boolean such as 1b")
        return bool(value)

    count_trigger = options.get("countTrigger")
    accept_dictionaries = options.get("acceptDictionaries", True)
    if not isinstance(accept_dictionaries, bool):
        q.fail("`acceptDictionaries must be a boolean such as 0b")
    if operator == "count":
        if not 1 <= len(args) <= 2 or not all(isinstance(a, int) for a in args):
            q.fail(".qsp.window.count takes [size] or [size; frequency]")
        return KdbCountWindows(args[0], args[1] if len(args) > 1 else None,
                               accept_dictionaries=accept_dictionaries)
    if operator == "timer":
        if len(args) != 1:
            q.fail(".qsp.window.timer takes [period]")
        return KdbTimerWindows(args[0], count_trigger=count_trigger,
                               skip_empty_windows=flag("skipEmptyWindows"),
                               accept_dictionaries=accept_dictionaries)
    expected = 2 if operator == "tumbling" else 3
    if len(args) != expected or not isinstance(args[-1], str):
        q.fail(f".qsp.window.{operator} takes {expected - 1} time(s) and a `timeColumn "
               "(timeAssigner is API-only)")
    return KdbTimeWindows(
        period_ms=args[0],
        duration_ms=args[1] if operator == "sliding" else None,
        on=args[-1],
        lateness_ms=options.get("lateness", 0),
        passthrough=flag("passthrough"),
        sort=flag("sort"),
        count_trigger=count_trigger,
        skip_empty_windows=flag("skipEmptyWindows"),
        accept_dictionaries=accept_dictionaries,
    )
