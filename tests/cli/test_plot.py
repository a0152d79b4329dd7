"""windtunnel plot: SVG marks, PNG size and content, a self-contained HTML page, exit codes."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.cli.plot import timeline_for
from windtunnel.cli.plotting.timeline import MAX_ITEMS, build
from windtunnel.oracle.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BRUTE = str(EXAMPLES / "brute-force.yaml")
SIX = str(EXAMPLES / "six-profiles.yaml")


def plot(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["plot", *args])
    return result.exit_code, result.stderr


def ids(svg_path: Path) -> list[str]:
    root = ET.parse(svg_path).getroot()
    return [e.get("id", "") for e in root.iter() if e.get("id")]


def test_svg_holds_every_event_and_window_mark(tmp_path: Path) -> None:
    out = tmp_path / "t.svg"
    code, err = plot(BRUTE, "--out", str(out))
    assert code == 0, err
    found = ids(out)
    events = sorted(i for i in found if re.fullmatch(r"tenzir-event-\d+-(delivered|dropped)", i))
    assert events == [
        "tenzir-event-0-delivered", "tenzir-event-1-delivered", "tenzir-event-2-delivered",
        "tenzir-event-3-delivered", "tenzir-event-4-dropped",
    ]
    windows = [i for i in found if i.startswith("tenzir-window-")]
    assert len(windows) == 22  # 12 of alice (idle_timeout) and 10 of bob (end of input)
    assert "tenzir-window-alice_10.0.0.1--540000-60000" in windows
    assert "tenzir-window-bob_10.0.0.9-120000-720000" in windows
    assert len([i for i in found if i.startswith("tenzir-emit-")]) == 22
    assert {"tenzir-clock-alice_10.0.0.1", "tenzir-clock-bob_10.0.0.9"} <= set(found)
    assert "tenzir-idle-4" in found  # the {at: 472} item: the wall clock moved, no event
    assert "late" in out.read_text()


def test_profiles_side_by_side(tmp_path: Path) -> None:
    out = tmp_path / "six.svg"
    code, err = plot(SIX, "--profiles", "tenzir,flink,spark", "--out", str(out))
    assert code == 0, err
    found = ids(out)
    assert [i for i in found if i.startswith("panel-")] == ["panel-tenzir", "panel-flink",
                                                          "panel-spark"]
    # flink and spark share one watermark: b@8 after a@12 is late there, on time under tenzir
    assert "flink-event-3-dropped" in found and "tenzir-event-3-delivered" in found
    assert "tenzir-window-a-0-10000" in found and "tenzir-window-b-0-10000" in found


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_png_has_the_configured_size_and_is_not_blank(tmp_path: Path) -> None:
    import matplotlib.image as mpimg
    import numpy as np

    out = tmp_path / "t.png"
    code, err = plot(BRUTE, "--out", str(out), "--size", "1000x700")
    assert code == 0, err
    assert png_size(out) == (1000, 700)
    pixels = mpimg.imread(out)
    colours = np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)
    assert len(colours) > 50
    assert float(pixels[..., :3].std()) > 0.05


def test_png_auto_size_grows_with_panels(tmp_path: Path) -> None:
    one, four = tmp_path / "1.png", tmp_path / "4.png"
    assert plot(SIX, "--out", str(one))[0] == 0
    assert plot(SIX, "--profiles", "tenzir,flink,spark,ekuiper", "--out", str(four))[0] == 0
    assert png_size(four)[0] > png_size(one)[0]


REMOTE = re.compile(
    r"""(src|href)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?\s*(https?:)?//|@import|<link\b""",
    re.IGNORECASE,
)


def test_html_is_self_contained(tmp_path: Path) -> None:
    out = tmp_path / "t.html"
    code, err = plot(SIX, "--profiles", "tenzir,flink", "--out", str(out))
    assert code == 0, err
    text = out.read_text()
    assert not REMOTE.search(text)
    # the only URL is the SVG namespace, an identifier that is never fetched
    assert re.findall(r"https?://[^\s\"'<>]+", text) == ["http://www.w3.org/2000/svg"]
    svg = ET.fromstring(re.search(r"<svg.*</svg>", text, re.S).group(0))
    found = [e.get("id") for e in svg.iter() if e.get("id")]
    assert "flink-event-3-dropped" in found and "tenzir-window-a-0-10000" in found
    assert "<script>" in text and "viewBox" in text and "wheel" in text


BLOCK = "import sys\nsys.modules['matplotlib'] = None\nsys.argv = ['windtunnel', *{args!r}]\n" \
        "from windtunnel.cli.main import main\nmain()\n"


def without_matplotlib(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK.format(args=list(args))],
                          capture_output=True, text=True, check=False, cwd=ROOT)


@pytest.mark.process  # a fresh Python without matplotlib
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_png_and_svg_without_matplotlib_name_the_extra(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"t{suffix}"
    done = without_matplotlib("plot", BRUTE, "--out", str(out))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "pip install 'windtunnel[plot]'" in done.stderr and "matplotlib" in done.stderr
    assert not out.exists()


@pytest.mark.process  # a fresh Python without matplotlib
def test_html_needs_no_matplotlib(tmp_path: Path) -> None:
    out = tmp_path / "t.html"
    done = without_matplotlib("plot", BRUTE, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "tenzir-event-4-dropped" in out.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "t.pdf"], "--out"),
        (["--out", "t.png", "--size", "big"], "--size"),
        (["--out", "t.png", "--profiles", "tenzir,nope"], "nope"),
        (["--out", "no/such/dir/t.html"], "cannot be written"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    args = [str(tmp_path / a) if a.startswith(("t.", "no/")) else a for a in args]
    result = CliRunner().invoke(cli, ["plot", BRUTE, *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_count_windows_without_times_use_event_seqs() -> None:
    timeline = timeline_for(load_scenario(EXAMPLES / "kdb-count.yaml"), "oracle", ["kdb"])
    assert timeline.x_is_seq and "event seq" in timeline.title
    bars = timeline.panels[0].bars
    assert [(b.start_ms, b.end_ms) for b in bars] == [(0, 9), (10, 19), (20, 29)]


def test_long_streams_are_cut_and_say_so() -> None:
    items = [{"ts": i * 1000} for i in range(MAX_ITEMS + 20)]
    scenario = parse_scenario({"name": "long", "window": {"kind": "fixed", "size": "10s", "on": "ts"},
                               "aggregate": {"n": "count()"}, "input": items})
    timeline = timeline_for(scenario, "oracle", ["tenzir"])
    assert len(timeline.rows) == MAX_ITEMS
    assert f"first {MAX_ITEMS} of {MAX_ITEMS + 21} input items" in timeline.title
    assert build("x", 1, [], []).rows == ()


@pytest.mark.spark
def test_spark_engine_panel_beside_the_oracle(tmp_path: Path) -> None:
    out = tmp_path / "both.svg"
    code, err = plot(SIX, "--engine", "both", "--out", str(out))
    assert code == 0, err
    found = ids(out)
    assert [i for i in found if i.startswith("panel-")] == ["panel-tenzir", "panel-tenzir_on_Spark"]
    spark_windows = sorted(i for i in found if i.startswith("tenzir_on_Spark-window-"))
    assert spark_windows == sorted(
        i.replace("tenzir-", "tenzir_on_Spark-", 1) for i in found if i.startswith("tenzir-window-")
    )
