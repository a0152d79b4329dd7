"""``examples/user_project`` is a project of its own (its own pytest configuration and
Spark tests): the repository's suite runs it only through
``tests/conformance/test_user_project.py`` (pytester), never by collecting it here."""

collect_ignore = ["user_project"]
