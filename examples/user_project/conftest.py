"""Shared test settings: which module holds the jobs under test.

``pytest --jobs-module jobs_broken`` runs the same checks against the candidate in
``jobs_broken.py`` (a change under review) instead of ``jobs.py``.
"""

from pathlib import Path

import pytest

SPECS = Path(__file__).parent / "specs"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--jobs-module", default="jobs", help="module holding the jobs under test")


@pytest.fixture
def jobs_module(request: pytest.FixtureRequest) -> str:
    return str(request.config.getoption("--jobs-module"))


@pytest.fixture
def spec() -> Path:
    return SPECS / "failed_logins.yaml"
