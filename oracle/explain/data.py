"""The account as JSON-ready data (``windtunnel explain --format json``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from windtunnel.oracle.explain.values import Account, EventFate, ItemAccount


def fate_json(fate: EventFate) -> dict[str, Any]:
    return {
        "seq": fate.seq,
        "payload": dict(fate.payload),
        "group": fate.group,
        "arrived_ms": fate.arrived_ms,
        "item": fate.item,
        "delivered_to": [w.to_json() for w in fate.delivered_to],
        "drop": None if fate.drop is None else fate.drop.to_json(),
        "misses": list(fate.misses),
        "emissions": [e.to_json() for e in fate.emissions],
    }


def item_json(item: ItemAccount, clock: str) -> dict[str, Any]:
    return {
        "index": item.index,
        "kind": item.kind,
        "micro_batch": item.batch,
        "wall_before_ms": item.wall_before_ms,
        "wall_after_ms": item.wall_after_ms,
        "watermark_ms": item.watermark_ms,
        "clocks": [
            {"name": clock, "group": c.group, "per_key": c.per_key, "before_ms": c.before_ms,
             "after_ms": c.after_ms}
            for c in item.clocks
        ],
        "events": [fate_json(f) for f in item.events],
        "closed": [
            {"window": c.window.to_json(), "group": c.group, "reason": c.reason,
             "wall_ms": c.wall_ms}
            for c in item.closings
        ],
        "emissions": [e.to_json() for e in item.emissions],
    }


def explanation_json(expl: Account, seqs: tuple[int, ...], drops: bool) -> dict[str, Any]:
    """``items`` (every input item) or, with ``seqs``/``drops``, ``events`` (those chosen);
    plus ``never_emitted``."""
    data: dict[str, Any] = {"scenario": expl.scenario, "profile": expl.profile,
                            "clock": expl.words.clock}
    if seqs or drops:
        chosen = [expl.event(s) for s in seqs] if seqs else expl.fates()
        data["events"] = [fate_json(f) for f in chosen if not drops or f.drop is not None]
    else:
        data["items"] = [item_json(i, expl.words.clock) for i in expl.items]
    data["never_emitted"] = [
        {"window": w.window.to_json(), "group": w.group, "seqs": list(w.seqs), "why": w.why}
        for w in expl.lost
    ]
    return data
