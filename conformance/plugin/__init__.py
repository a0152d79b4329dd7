"""pytest plugin: scenario files as tests, and fixtures to check your own Spark job.

Enable collection by naming scenario files in ``pytest.ini``/``pyproject.toml``::

    [tool.pytest.ini_options]
    windtunnel_scenarios = ["scenarios/*.yaml"]

Each matching file becomes one test that replays it on the oracle and checks its
``expect`` block; with ``--windtunnel-target spark`` (alias: ``--windtunnel-engine spark``
or ``both``) it also replays it on Spark and compares as ``windtunnel replay --engine
both`` does (a ``profile: spark`` scenario on stock Spark, emissions only: stock Spark
reports no drops); any other target (``spark-stock``, ``oracle:PROFILE``,
``module:function``) is held to the oracle on the file's own input as ``windtunnel
check FILE --examples 0`` does.

Fixtures:

- ``windtunnel_spark``: the session's SparkSession (windtunnel's ``spark_session()``;
  ``--windtunnel-master spark://...`` or ``--windtunnel-remote sc://...``).
- ``windtunnel_check``: ``check(job_or_target, spec, *, examples=None, profile=None,
  seed=None)`` runs ``windtunnel check`` in the test and fails it with the divergence
  report; defaults from ``--windtunnel-examples``, ``--windtunnel-seed`` and
  ``--windtunnel-profile``; counterexamples go under pytest's temporary directory
  (``--windtunnel-out DIR`` for a folder of your own); the failure and the terminal
  summary name each file. The spec (a path, its data or a Scenario) may leave ``input``
  out, and its ``fields:``, ``where`` and ``deduplicate`` shape the generated streams as
  for ``windtunnel check``.
- ``windtunnel_oracle`` (replays a scenario on the oracle) and ``windtunnel_assert_same``
  (fails with a readable diff when two output lists diverge).

The plugin loads in every pytest run of an environment where windtunnel is installed,
so this package imports only pytest at load time: windtunnel's parts are imported when a
scenario runs or a fixture is used, and a missing optional extra (Spark without pyspark)
skips the test with the ``pip install`` line that fixes it.

Its modules, one concern each: :mod:`.options` (options, ini settings, header, summary),
:mod:`.collection` (scenario files as tests), :mod:`.spark` (the run's SparkSession),
:mod:`.fixtures` (the fixtures) and :mod:`.checking` (what ``windtunnel_check`` runs,
imported on first use). This module is the ``pytest11`` entry point: it names the hooks
and fixtures pytest registers.
"""


from windtunnel.conformance.plugin.collection import (
    ScenarioFailure,
    ScenarioFile,
    ScenarioItem,
    pytest_collect_file,
    spark_divergences,
)
from windtunnel.conformance.plugin.fixtures import (
    windtunnel_assert_same,
    windtunnel_check,
    windtunnel_oracle,
)
from windtunnel.conformance.plugin.options import (
    DEFAULT_EXAMPLES,
    DEFAULT_OUT,
    DEFAULT_SHRINK_SECONDS,
    ENGINES,
    chosen_target,
    counterexample_dir,
    pytest_addoption,
    pytest_configure,
    pytest_report_header,
    pytest_terminal_summary,
)
from windtunnel.conformance.plugin.spark import windtunnel_spark

__all__ = [
    "DEFAULT_EXAMPLES",
    "DEFAULT_OUT",
    "DEFAULT_SHRINK_SECONDS",
    "ENGINES",
    "ScenarioFailure",
    "ScenarioFile",
    "ScenarioItem",
    "chosen_target",
    "counterexample_dir",
    "pytest_addoption",
    "pytest_collect_file",
    "pytest_configure",
    "pytest_report_header",
    "pytest_terminal_summary",
    "spark_divergences",
    "windtunnel_assert_same",
    "windtunnel_check",
    "windtunnel_oracle",
    "windtunnel_spark",
]
