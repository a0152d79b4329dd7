"""The exception hierarchy: one root, subclasses that also inherit a builtin.

Every message states the rule, echoes ``name=value`` and says how to fix it.
"""

from __future__ import annotations

from typing import Any


class WindtunnelError(Exception):
    """Root of every error windtunnel raises on purpose."""


class InvalidInput(WindtunnelError, ValueError):
    """Bad user input: a spec, a scenario file, a stream item or an option.

    ``field`` is the dotted path of the offending value (``window.size``,
    ``input[3].at``); ``value`` is echoed back; ``rule`` says what is required;
    ``fix`` says what to do instead.
    """

    def __init__(self, field: str, value: Any, rule: str, fix: str) -> None:
        self.field = field
        self.value = value
        self.rule = rule
        self.fix = fix
        super().__init__(f"{field}={_echo(value)}: {rule}; {fix}")


class InvalidSpec(InvalidInput):
    """A window spec, aggregation or profile rule that cannot be run."""


class InvalidScenario(InvalidInput):
    """A scenario file whose structure or values are wrong."""


class InvalidStream(InvalidInput):
    """A stream whose items break the stream model (wall clock going back, items after end)."""


class EngineUnavailable(WindtunnelError, RuntimeError):
    """An engine (Spark, a Kafka broker) needed for a command could not be started."""


class MissingExtra(WindtunnelError, ImportError):
    """A command or option needs an optional part of windtunnel that is not installed.

    ``extra`` names the pip extra that brings it (``spark``, ``kafka``, ...), ``module``
    the module that could not be imported and ``purpose`` what asked for it.
    """

    def __init__(self, extra: str, module: str, purpose: str) -> None:
        self.extra = extra
        self.module = module
        self.purpose = purpose
        super().__init__(
            f"{purpose} needs windtunnel's {extra!r} extra, but module={module} is not "
            f"installed; install it with: pip install 'windtunnel[{extra}]'",
            name=module,
        )


ECHO_CHARS = 80
"""The longest echo of a value in a message."""

ECHO_TEXT_CHARS = 240
"""The longest echo of a text value (a path, a name)."""


def _echo(value: Any) -> str:
    """``repr(value)``, a long one cut in the middle: its end (a file's name) stays."""
    text = repr(value)
    limit = ECHO_TEXT_CHARS if isinstance(value, str) else ECHO_CHARS
    if len(text) <= limit:
        return text
    head = (limit - 3) // 2
    return text[:head] + "..." + text[head + 3 - limit:]
