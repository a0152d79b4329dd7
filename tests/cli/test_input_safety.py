"""Bad scenario files and bad ``generate --out`` paths: one line on stderr, exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.generate import generate_command
from windtunnel.oracle.model.timefmt import time_text

BAD_FILES = {
    "dup.yaml": b"window: {size: 1s}\ninput: []\nwindow: {size: 2s}\n",
    "dup.json": b'{"window": {"size": "1s"}, "input": [], "window": {}}',
    "latin.yaml": "name: caf\xe9\nwindow: {size: 1s}\ninput: []\n".encode("latin-1"),
    "bomb.yaml": (
        b"a: &a [x, x, x, x, x, x, x, x, x]\n"
        + b"".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n".encode()
            for i in range(8)
        )
    ),
    "deep.yaml": b"[" * 100_000 + b"]" * 100_000,
}


def one_line_exit_2(result: object) -> str:
    output = result.output  # type: ignore[attr-defined]
    assert result.exit_code == 2, output  # type: ignore[attr-defined]
    assert "Traceback" not in output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("windtunnel: "), output
    return lines[0]


@pytest.mark.parametrize("command", [["replay"], ["compare"], ["explain", "--seq", "0"]])
@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_files_give_one_line(tmp_path: Path, name: str, command: list[str]) -> None:
    from windtunnel.cli.main import cli

    path = tmp_path / name
    path.write_bytes(BAD_FILES[name])
    line = one_line_exit_2(CliRunner().invoke(cli, [*command, str(path)]))
    assert f"file='{path}'" in line


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-o", "missing/x.yaml"], "directory missing does not exist; create it first"),
        (["-o", "afile/x.yaml"], "afile is a file, not a directory"),
        (["-o", "afile", "--format", "spark-dir"], "is an existing file; spark-dir writes a directory"),
        (["-o", "adir"], "is a directory; this format writes a file"),
        (["-o", "ok.yaml", "--summary-json", "missing/s.json"], "--summary-json='missing/s.json'"),
    ],
)
def test_generate_out_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], words: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    result = CliRunner().invoke(generate_command, ["bare", "-n", "10", "-q", *args])
    assert words in one_line_exit_2(result)
    assert not (tmp_path / "ok.yaml").exists()  # refused before anything is written


@pytest.mark.parametrize("ms", [10**17, -(10**17), 10**30, 253402300800000])
def test_times_beyond_the_calendar_print_as_numbers(ms: int) -> None:
    assert time_text(ms) == str(ms)


def test_huge_size_replays_and_prints(tmp_path: Path) -> None:
    from windtunnel.cli.main import cli

    path = tmp_path / "huge.yaml"
    path.write_text(
        "window: {size: 1000000000000000d}\naggregate: {n: count()}\n"
        "input:\n  - {ts: 1}\n  - {ts: 99999999999999999999}\n"
    )
    result = CliRunner().invoke(cli, ["replay", str(path)])
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 0:
        assert "86400000000000000000" in result.output
