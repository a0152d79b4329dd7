"""Progress on stderr: lines with count, rate and ETA when piped, spaced in time; nothing
when disabled; logging off while a command runs and restored after."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.errors import quiet_logging
from windtunnel.cli.main import cli
from windtunnel.cli.progress import Progress, duration_text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (59.9, "59s"), (61, "1m01s"), (3 * 3600 + 20 * 60, "3h20m"),
     (4 * 86_400 + 3 * 3600, "4d3h"), (42 * 365 * 86_400, "42y")],
)
def test_durations(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_piped_lines_carry_count_rate_and_eta() -> None:
    out = io.StringIO()
    with Progress("checking t", 4, "scenarios", per_minute=True, stream=out) as bar:
        bar.advance(1)
        bar.advance(3)
    first, last = out.getvalue().splitlines()
    assert first.startswith("checking t: 1/4 scenarios (25%) in 0s, ")
    assert "scenarios/min, ETA " in first
    assert last.startswith("checking t: 4/4 scenarios (100%) in ") and "ETA" not in last


class FakeClock:
    """Seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _eta_seconds(line: str) -> float | None:
    import re

    found = re.search(r"ETA (?:(\d+)m)?(\d+)s", line)
    return None if found is None else int(found.group(1) or 0) * 60 + int(found.group(2))


@pytest.mark.parametrize("start_up_s", [5.0, 40.0, 300.0])
def test_no_eta_until_the_first_step_after_start_up_then_within_twice_the_truth(
    start_up_s: float,
) -> None:
    """A check: start-up and the spec's own input in the first step, then calls of 200
    scenarios taking 40 to 60 s each."""
    clock, out = FakeClock(), io.StringIO()
    steps = [(1, start_up_s), *[(200, s) for s in (50.0, 40.0, 60.0, 55.0, 45.0)]]
    total = sum(n for n, _ in steps)
    with Progress("checking job", total, "scenarios", per_minute=True, stream=out,
                  warm_up=True, clock=clock) as bar:
        for n, seconds in steps:
            clock.now += seconds
            bar.advance(n)
    lines = out.getvalue().splitlines()
    assert "ETA" not in lines[0]
    for index, line in enumerate(lines[1:-1], start=1):
        left = sum(s for _, s in steps[index + 1 :])
        estimate = _eta_seconds(line)
        assert estimate is not None and left / 2 <= estimate <= left * 2, (line, left)


def test_lines_are_spaced_but_the_last_always_prints() -> None:
    out = io.StringIO()
    with Progress("generating", 1000, "records", every_s=3600, stream=out) as bar:
        for _ in range(9):
            bar.advance(100)
    lines = out.getvalue().splitlines()  # the first step, then the state at the end
    assert [line.split(" in ")[0] for line in lines] == [
        "generating: 100/1,000 records (10%)", "generating: 900/1,000 records (90%)"]
    with Progress("generating", None, "records", every_s=3600, stream=out) as bar:
        bar.advance(5)
        bar.advance(5)
    assert out.getvalue().splitlines()[-1].startswith("generating: 10 records in ")


def test_a_step_line_gets_the_status_appended_and_nothing_prints_when_disabled() -> None:
    out = io.StringIO()
    with Progress("job", 10, "rows", stream=out) as bar:
        bar.advance(5, "batch 0: 5 rows in")
    assert out.getvalue().startswith("batch 0: 5 rows in; 50%, ")
    quiet = io.StringIO()
    with Progress("job", 10, "rows", stream=quiet, enabled=False) as bar:
        bar.advance(5, "batch 0")
        bar.note("a note")
    assert quiet.getvalue() == ""


def test_logging_is_off_inside_a_command_and_restored_after() -> None:
    before = logging.root.manager.disable
    with quiet_logging(debug=False):
        assert not logging.getLogger("py4j").isEnabledFor(logging.CRITICAL)
    assert logging.root.manager.disable == before
    with quiet_logging(debug=True):
        assert logging.root.manager.disable == before


SPEC = """
name: tiny
window: {size: 10s, on: ts}
group_by: k
aggregate: {n: count()}
input: [{ts: 1000, k: a}]
"""


def test_check_reports_progress_on_stderr_only(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    result = CliRunner().invoke(
        cli, ["check", str(tmp_path / "spec.yaml"), "--target", "oracle:tenzir", "--examples", "20"]
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1].startswith(
        "checking oracle:tenzir: 21/21 scenarios (100%) in ")
    assert "checking" not in result.stdout and result.stdout.startswith("checked 21 scenarios")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_shows_count_rate_and_no_eta_after_start_up() -> None:
    clock, out = FakeClock(), Terminal()
    with Progress("checking job", 401, "scenarios", per_minute=True, stream=out,
                  warm_up=True, clock=clock) as bar:
        clock.now += 120.0
        bar.advance(1)
        first = bar.status()
        clock.now += 60.0
        bar.advance(200)
        second = bar.status()
    assert "ETA" not in first
    assert second.endswith("ETA 1m00s")
    assert "checking job" in out.getvalue() and "201/401" in out.getvalue()
