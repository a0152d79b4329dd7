"""A streaming job's trigger: when its micro-batches run."""

from __future__ import annotations

from typing import Any

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.timeparse import parse_duration_ms

TRIGGER_HELP = "availableNow, or a processing interval such as '5 seconds'"


def trigger_options(trigger: str) -> dict[str, Any]:
    """``writeStream.trigger`` keyword arguments for ``trigger`` (``availableNow``: the input
    present at start, then stop; an interval: a micro-batch every interval). Raises
    InvalidInput for an unknown trigger or an interval that is not positive."""
    text = trigger.strip()
    if text.lower() in ("availablenow", "available-now", "available_now"):
        return {"availableNow": True}
    try:
        interval_ms = parse_duration_ms(text.removeprefix("processing").strip(" =:"), "trigger")
    except InvalidInput as exc:
        raise InvalidInput("trigger", trigger, "unknown trigger", f"give {TRIGGER_HELP}") from exc
    if interval_ms < 1:
        raise InvalidInput("trigger", trigger, "interval must be positive", f"give {TRIGGER_HELP}")
    return {"processingTime": f"{interval_ms} milliseconds"}
