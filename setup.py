"""Package discovery for windtunnel's root layout (metadata lives in pyproject.toml).

The design card keeps each part at the repository root (``oracle/``, ``cli/``, ...)
while users import them as ``windtunnel.<part>``. Every package below a part is
discovered here, so a new subpackage ships without editing a list.
"""

from setuptools import find_packages, setup

PARTS = ("oracle", "simulator", "spark_impl", "conformance", "cli")

packages = [f"windtunnel.{part}" for part in PARTS]
packages += [f"windtunnel.{part}.{sub}" for part in PARTS for sub in find_packages(part)]

setup(
    packages=packages,
    package_dir={f"windtunnel.{part}": part for part in PARTS},
    package_data={
        **{f"windtunnel.{part}": ["py.typed"] for part in ("oracle", "simulator")},
        # the production operator's sources (built against the installed Spark on first use) and
        # its jar for machines without javac (tools/build_jar.py)
        "windtunnel.spark_impl.jvm": ["*.jar", "src/**/*.java"],
        # the Flink harness, compiled (tools/build_flink_jar.py) and its sources
        "windtunnel.conformance": ["flink/*.jar", "flink/*.java"],
    },
)
