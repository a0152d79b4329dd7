"""Beam's trigger transcripts as windtunnel scenario files, and their verdicts.

Reads ``apache_beam/testing/data/trigger_transcripts.yaml`` from the installed apache-beam
(the ``[beam]`` extra; nothing is copied into the repository), converts every case
(:mod:`windtunnel.conformance.beam.transcripts`), runs it step by step on the ``beam``
profile as Beam's ``TriggerDriverTranscriptTest`` does, and prints one line per case:
``pass``, ``fails as Beam requires`` (a case with an ``error:`` key), ``FAIL`` with what did
not hold, or ``left out`` with the reason. With ``--out DIR`` it also writes each case as a
scenario file whose ``expect`` block holds the transcript's panes (windows and pane fields;
the values are checked by the step-by-step run).

Run: python tools/beam_transcripts.py [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from windtunnel.conformance.beam.transcripts import Case, load_cases, run_case


def expected_panes(case: Case) -> list[dict[str, Any]]:
    """The transcript's expected panes as a scenario's expected emissions."""
    found = []
    for action, value in case.steps:
        if action != "expect":
            continue
        for pane in value:
            start, last = pane["window"]
            fields: dict[str, Any] = {}
            early, late = pane.get("early"), pane.get("late")
            if early or late or (early is False and late is False):
                fields["timing"] = "early" if early else "late" if late else "on_time"
            for theirs, ours in (("index", "index"), ("nonspeculative_index",
                                                      "nonspeculative_index"),
                                 ("final", "last"), ("timestamp", "timestamp_ms")):
                if theirs in pane:
                    fields[ours] = pane[theirs]
            found.append({"window": [start, last + 1], **({"pane": fields} if fields else {})})
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the scenario files here")
    args = parser.parse_args(argv)
    cases = load_cases()
    verdicts = {"pass": 0, "fails as Beam requires": 0, "FAIL": 0, "left out": 0}
    for case in cases:
        if case.data is None:
            verdict, detail = "left out", case.left_out
        else:
            problems = run_case(case)
            if case.error is not None:
                held = bool(problems) and problems[0].startswith(case.error)
                verdict = "fails as Beam requires" if held else "FAIL"
                detail = problems[0] if problems else f"did not fail ({case.error} expected)"
            else:
                verdict, detail = ("pass", "") if not problems else ("FAIL", "; ".join(problems))
            if args.out is not None:
                args.out.mkdir(parents=True, exist_ok=True)
                data = dict(case.data)
                if case.error is None:
                    data["expect"] = {"emissions": expected_panes(case)}
                path = args.out / f"{case.name.replace('#', '-')}.yaml"
                path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        verdicts[verdict] += 1
        print(f"{case.name}: {verdict}" + (f" ({detail})" if detail else ""))
    print(", ".join(f"{n} {v}" for v, n in verdicts.items()) + f" of {len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
