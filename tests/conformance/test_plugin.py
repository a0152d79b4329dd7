"""The pytest plugin: scenario files become tests; fixtures compare engines."""

from __future__ import annotations

import pytest

# imported here, not first inside an in-process pytester run: pytester drops the modules a
# run imported when it ends, and a second import of the YAML loader breaks the next run
import windtunnel.conformance.plugin.checking  # noqa: F401

pytest_plugins = ["pytester"]

GOOD = """
window: {size: 10s}
aggregate: {n: count()}
input: [{ts: 1}, {ts: 2}]
expect:
  emissions: [{window: [0, 10000], row: {n: 2}}]
"""


def test_scenario_files_are_collected_and_checked(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nwindtunnel_scenarios = scenarios/*.yaml\n")
    pytester.mkdir("scenarios")
    (pytester.path / "scenarios" / "good.yaml").write_text(GOOD)
    (pytester.path / "scenarios" / "bad.yaml").write_text(GOOD.replace("n: 2", "n: 3"))
    (pytester.path / "scenarios" / "broken.yaml").write_text("window: {size: nope}\ninput: []\n")
    (pytester.path / "other.yaml").write_text("not: a scenario\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*bad.yaml: oracle: expectation failed:*", "*missing emission*", "*broken.yaml: invalid scenario: window.size='nope'*"])


def test_nothing_is_collected_without_the_ini_option(pytester: pytest.Pytester) -> None:
    (pytester.path / "good.yaml").write_text(GOOD)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_assert_same_fixture_reports_divergences(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from windtunnel.oracle import Drop

        def test_same(windtunnel_assert_same):
            windtunnel_assert_same([Drop(1, "late")], [Drop(1, "late")])

        def test_different(windtunnel_assert_same):
            windtunnel_assert_same([Drop(1, "late")], [Drop(2, "late")], left="spark")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*2 divergence(s) between spark and oracle*", '*only spark, not oracle*"seq": 1*'])


def test_oracle_fixture_replays_a_path(pytester: pytest.Pytester) -> None:
    (pytester.path / "s.yaml").write_text(GOOD)
    pytester.makepyfile(
        """
        def test_replay(windtunnel_oracle):
            result = windtunnel_oracle("s.yaml")
            assert [e.row["n"] for e in result.emissions] == [2]
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("config_file", "config", "line"),
    [
        ("pytest.ini", "[pytest]\nwindtunnel_scenarios = scenarios/*.yaml\n",
         "add in pytest.ini, under [pytest]: windtunnel_scenarios = scenarios/*.yaml specs/*.yaml"),
        ("pyproject.toml",
         '[tool.pytest.ini_options]\nwindtunnel_scenarios = ["scenarios/*.yaml"]\n',
         'add in pyproject.toml, under [tool.pytest.ini_options]: windtunnel_scenarios = '
         '["scenarios/*.yaml", "specs/*.yaml"]'),
        (None, "", 'and it is not set; add in pyproject.toml, under [tool.pytest.ini_options]: '
         'windtunnel_scenarios = ["specs/*.yaml"]'),
    ],
)
def test_a_scenario_file_outside_the_setting_fails_naming_the_line_to_add(
    pytester: pytest.Pytester, config_file: str | None, config: str, line: str
) -> None:
    if config_file is not None:
        (pytester.path / config_file).write_text(config)
    pytester.mkdir("specs")
    (pytester.path / "specs" / "good.yaml").write_text(GOOD)
    (pytester.path / "specs" / "other.yaml").write_text("not: a scenario\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "specs/good.yaml")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error
    (said,) = [t for t in result.outlines if t.startswith("good.yaml is a scenario file")]
    assert "pytest collects scenario files only where the windtunnel_scenarios setting says" in said
    assert said.endswith(line)
    other = pytester.runpytest("-p", "no:cacheprovider", "specs/other.yaml")
    assert "windtunnel_scenarios" not in other.stdout.str()  # not a scenario: pytest's own error
