"""Writing a shrunk counterexample as a scenario file that ``windtunnel replay`` runs.

The file is the spec's own file (window, group_by, aggregate, rules, time unit: kept
as written) with ``profile`` set to the profile checked against, the shrunk stream as
``input`` and the oracle's outputs under that profile as ``expect`` (emissions with
their reason and ``partial`` flag, and drops). So ``windtunnel replay FILE`` reproduces
the expected side and exits 0, ``windtunnel replay FILE --engine spark`` holds windtunnel's
Spark operators to it, and ``windtunnel check FILE --target T --examples 0`` runs the
target on this input first and shows the divergence again (the comment at the top
names the command).
"""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from windtunnel.conformance.check import Failure
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.results import Drop, Emission, Output
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark

DEFAULT_OUT = "windtunnel-counterexamples"


def _when(at_ms: int, unit_ms: int) -> int | str:
    """A wall time in the file's unit, or an ISO string when the unit cannot hold it."""
    if at_ms % unit_ms == 0:
        return at_ms // unit_ms
    moment = datetime.datetime.fromtimestamp(at_ms / 1000, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _event(event: Event, unit_ms: int) -> dict[str, Any]:
    if event.at_ms is None:
        return {"event": dict(event.payload)}
    return {"event": dict(event.payload), "at": _when(event.at_ms, unit_ms)}


def item_json(item: Item, unit_ms: int = 1) -> dict[str, Any]:
    """One stream item as the scenario file writes it (times in the file's unit)."""
    if isinstance(item, Event):
        return _event(item, unit_ms)
    if isinstance(item, Batch):
        return {"batch": [_event(e, unit_ms) for e in item.events]}
    if isinstance(item, Advance):
        return {"at": _when(item.to_ms, unit_ms)}
    if isinstance(item, Watermark):
        return {"watermark": _when(item.to_ms, unit_ms)}
    assert isinstance(item, End)
    return {"end": True}


def expect_json(outputs: tuple[Output, ...]) -> dict[str, Any]:
    """An ``expect`` block holding exactly ``outputs`` (windows as millisecond mappings)."""
    emissions = [
        {
            "window": o.window.to_json(),
            "group": o.group,
            "row": dict(o.row),
            "reason": o.reason,
            "partial": o.partial,
        }
        for o in outputs
        if isinstance(o, Emission)
    ]
    drops = [{"seq": o.seq, "reason": o.reason} for o in outputs if isinstance(o, Drop)]
    return {"emissions": emissions, "drops": drops}


def counterexample_data(failure: Failure, spec_data: Mapping[str, Any], profile: str) -> dict[str, Any]:
    """The counterexample file's content: the spec as written, the shrunk input, the
    oracle's outputs under ``profile`` as ``expect``."""
    data = {k: v for k, v in spec_data.items() if k not in ("input", "expect", "name", "profile")}
    scenario = failure.scenario
    unit_ms = scenario.time_unit_ms
    name = str(spec_data.get("name", "spec"))
    suffix = "-counterexample"
    out: dict[str, Any] = {"name": name if name.endswith(suffix) else name + suffix}
    out["profile"] = profile
    out.update(data)
    out["input"] = [item_json(i, unit_ms) for i in scenario.items if not isinstance(i, End)]
    out["expect"] = expect_json(failure.expected)
    return out


def write_counterexample(
    failure: Failure,
    spec_data: Mapping[str, Any],
    *,
    target: str,
    profile: str,
    rerun: str,
    out_dir: str | Path = DEFAULT_OUT,
) -> Path:
    """Write the counterexample as YAML under ``out_dir`` (created); returns its path.
    ``rerun`` is the option that names the target again (``--target spark-stock``).
    Raises InvalidInput when the directory cannot be written."""
    data = counterexample_data(failure, spec_data, profile)
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    digest = hashlib.sha1(body.encode()).hexdigest()[:8]
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{data['name']}-{target}").strip("-")
    directory = Path(out_dir)
    path = directory / f"{stem}-{digest}.yaml"
    header = (
        f"# windtunnel check: target {target} diverges from the oracle (profile {profile})\n"
        f"# on this stream, shrunk from a failing one. expect: holds the oracle's outputs.\n"
        f"# Show the divergence again: windtunnel check {path} {rerun} --examples 0\n"
        f"# The oracle's side: windtunnel replay {path}\n"
    )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(header + body, encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(
            "--out", str(directory), f"cannot be written ({exc.strerror})", "give a writable directory"
        ) from None
    return path
