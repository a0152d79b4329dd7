"""Every command and Python snippet shown in README.md and docs/*.md runs as written.

Fenced blocks are read from the pages: shell blocks (```console, ```sh, ```bash, ```text
or a bare fence) whose lines start with ``$ `` give commands and, below each, the output
the page shows; ```sh / ```bash blocks without prompts are scripts, one command a line;
```python blocks are programs. ``windtunnel`` commands run through click's CliRunner in a
scratch copy of ``examples/`` and ``docs/`` (one per page, commands in page order, so a
command can read what an earlier one wrote); their exit code must be 0, or 1 when the
page shows a failure, and every line of the shown output (``...`` lines aside; decimal
numbers such as timings compared as ``N``; a line ending in `` ...`` matches any line that
starts with the rest) must appear in that order in the real output. ``pytest FILES`` runs
as a subprocess there (the plugin collecting scenario files).
Python blocks run with ``exec`` in a fresh namespace in the same scratch directory.

Commands that need Spark run only with the ``spark`` marker (as subprocesses of the
venv's ``windtunnel``). The rest are skipped by the rules in ``SKIPPED``, each naming
why; a command no rule covers fails the test, so a new page cannot add an untested one.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")))
SHELL_FENCES = ("console", "sh", "bash", "shell", "text", "")
SCRIPT_FENCES = ("sh", "bash", "shell")

# Commands (regex on the command as written) and Python blocks (regex on their text) that
# are not run, and why. Keep it small: every rule must match something (tested).
SKIPPED: tuple[tuple[str, str], ...] = (
    (r"^python3 -m venv ", "sets up a virtual environment (CI runs the README's two commands)"),
    (r"^(\.venv/bin/)?pip install ", "installs packages"),
    (r"^(\.venv/bin/)?pytest -q -n 3$", "runs the whole test suite (this test is part of it)"),
    (r"^export ", "sets environment variables for the cluster commands that follow"),
    (r"spark-class org\.apache\.spark\.deploy", "starts a standalone Spark master or worker"),
    (r"start-connect-server\.sh", "starts a Spark Connect server"),
    (r"--master spark://", "needs the standalone cluster started above"),
    (r"--remote sc://", "needs the Spark Connect server started above"),
    (r"kafka://|--format kafka", "needs a Kafka broker"),
    (r"^spark-submit ", "a user's own job submitted with Spark's Kafka connector"),
    (r"spark\.jars\.packages", "downloads Spark's Kafka connector from Maven Central"),
    (r"^windtunnel check spec\.yaml", "spec.yaml is the reader's own spec, not in the repository"),
    (r"--flink-sql examples/", "runs the real Flink engine for a minute; "
     "tests/conformance/test_flink_target.py runs both examples (marker flink)"),
    (r"--beam-transform examples\.", "runs a Beam pipeline per stream on the DirectRunner; "
     "tests/conformance/beam/test_pipeline_target.py runs the example transforms (marker beam)"),
    (r"^windtunnel broker$", "serves until Ctrl-C (tests/cli/test_broker.py runs it)"),
    (r"^out = apply_window\(", "a call signature with every parameter, not a program"),
    (r'load_job_spec\("payments\.yaml"\)', "needs a Spark session and payments-dir (see run below)"),
    (r"callable_target\(my_function\)", "checks the reader's own function my_function"),
    (r"^events = \(spark\.readStream", "a fragment for the reader's Spark session (spark, F)"),
    (r'kafka_source\(spark, bootstrap="127\.0\.0\.1:9092"', "needs a Spark session and a Kafka broker"),
)

_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_DECIMAL = re.compile(r"\d+\.\d+")
_SPARK = re.compile(r"--engine (spark|both)|^windtunnel (run|check) ")


@dataclass(frozen=True)
class Snippet:
    """One command or Python block of a page, with the output the page shows under it."""

    page: str
    line: int
    kind: str  # "shell" or "python"
    text: str
    shown: tuple[str, ...] = ()

    @property
    def ident(self) -> str:
        return f"{self.page}:{self.line}:{self.text[:40]}"


def _blocks(page: str) -> list[tuple[int, str, list[str]]]:
    """The fenced blocks of a page: (first line number, language, dedented lines)."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    found: list[tuple[int, str, list[str]]] = []
    opened: tuple[int, str, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, start=1):
        fence = _FENCE.match(line)
        if opened is None and fence:
            opened, body = (number + 1, fence.group(2).lower(), fence.group(1)), []
        elif opened is not None and fence and fence.group(2) == "":
            indent = len(opened[2])
            found.append((opened[0], opened[1], [b[indent:] if b[:indent].isspace() else b for b in body]))
            opened = None
        elif opened is not None:
            body.append(line)
    return found


def _joined(lines: list[str], start: int) -> tuple[str, int]:
    """The command starting at ``lines[start]`` with its ``\\`` continuations, and the next index."""
    parts, index = [lines[start].rstrip()], start
    while parts[-1].endswith("\\") and index + 1 < len(lines):
        parts[-1] = parts[-1][:-1].rstrip()
        index += 1
        parts.append(lines[index].strip())
    return " ".join(parts), index + 1


def _split_and(command: str) -> list[str]:
    return [part.strip() for part in command.split(" && ")]


def snippets(page: str) -> list[Snippet]:
    found: list[Snippet] = []
    for first, language, body in _blocks(page):
        if language in ("python", "py"):
            found.append(Snippet(page, first, "python", "\n".join(body)))
        elif language in SHELL_FENCES and any(b.startswith("$ ") for b in body):
            index = 0
            while index < len(body):
                if not body[index].startswith("$ "):
                    index += 1
                    continue
                command, index = _joined(body, index)
                line = first + index - 1
                shown: list[str] = []
                while index < len(body) and not body[index].startswith("$ "):
                    shown.append(body[index])
                    index += 1
                for part in _split_and(command[2:]):
                    found.append(Snippet(page, line, "shell", part, tuple(shown)))
        elif language in SCRIPT_FENCES:
            index = 0
            while index < len(body):
                if not body[index].strip() or body[index].lstrip().startswith("#"):
                    index += 1
                    continue
                line = first + index
                command, index = _joined(body, index)
                for part in _split_and(command):
                    found.append(Snippet(page, line, "shell", part))
    return found


ALL = [s for page in PAGES for s in snippets(page)]


def skip_reason(snippet: Snippet) -> str | None:
    for pattern, reason in SKIPPED:
        if re.search(pattern, snippet.text, flags=re.MULTILINE):
            return reason
    return None


def _words(command: str) -> tuple[dict[str, str], list[str], str | None]:
    """Leading ``NAME=value`` assignments, the words (comments dropped) and a ``> file``."""
    words = shlex.split(command, comments=True)
    env: dict[str, str] = {}
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    redirect = None
    if ">" in words:
        at = words.index(">")
        redirect, words = words[at + 1], words[:at]
    return env, words, redirect


def _is_windtunnel(snippet: Snippet) -> bool:
    if snippet.kind != "shell":
        return False
    words = _words(snippet.text)[1]
    return bool(words) and words[0] in ("windtunnel", ".venv/bin/windtunnel")


def _is_pytest(snippet: Snippet) -> bool:
    """``pytest FILES...``: the plugin collecting scenario files (run as a subprocess)."""
    if snippet.kind != "shell":
        return False
    words = _words(snippet.text)[1]
    return bool(words) and words[0] in ("pytest", ".venv/bin/pytest")


def _runnable(snippet: Snippet) -> bool:
    return _is_windtunnel(snippet) or _is_pytest(snippet)


def needs_spark(snippet: Snippet) -> bool:
    """A windtunnel command that starts Spark (replay/plot on Spark, run, check)."""
    if not _is_windtunnel(snippet):
        return False
    words = _words(snippet.text)[1]
    return bool(_SPARK.search(shlex.join(["windtunnel", *words[1:]])))


def _normal(line: str) -> str:
    return _DECIMAL.sub("N", line.rstrip())


def expected_exit(snippet: Snippet) -> int:
    """1 when the page shows a failure (a divergence or a failed expectation), else 0."""
    failure = re.compile(r"^(divergence:|checked .*: [1-9]\d* divergence|expectations failed)")
    return 1 if any(failure.match(line) for line in snippet.shown) else 0


def assert_shown(snippet: Snippet, output: str) -> None:
    """Every shown line (``...`` aside) appears, in order, among the output's lines."""
    actual = [_normal(line) for line in output.splitlines()]
    at = 0
    for line in snippet.shown:
        if not line.strip() or line.strip() == "...":
            continue
        wanted = _normal(line)
        prefix = wanted.endswith(" ...")  # "text ..." stands for a line starting with text
        if prefix:
            wanted = wanted.removesuffix(" ...")
        while at < len(actual) and not (
            actual[at].startswith(wanted) if prefix else actual[at] == wanted
        ):
            at += 1
        assert at < len(actual), (
            f"{snippet.page}:{snippet.line}: `{snippet.text}` no longer prints\n  {line}\n"
            f"(in this order); it printed:\n{output}"
        )
        at += 1


@dataclass
class Workspace:
    """A scratch copy of examples/ and docs/ for one page; commands run in page order."""

    path: Path
    done: set[int] = field(default_factory=set)


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Workspace]:
    return {}


def _workspace(workspaces: dict[str, Workspace], page: str, factory: pytest.TempPathFactory) -> Workspace:
    if page not in workspaces:
        path = factory.mktemp(page.replace("/", "-"))
        for part in ("examples", "docs"):
            shutil.copytree(ROOT / part, path / part, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(ROOT / "pyproject.toml", path / "pyproject.toml")  # the plugin's settings
        workspaces[page] = Workspace(path)
    return workspaces[page]


def _run_in_process(snippet: Snippet, where: Path) -> tuple[int, str]:
    env, words, redirect = _words(snippet.text)
    with contextlib.chdir(where):
        result = CliRunner().invoke(cli, words[1:], env=env, prog_name="windtunnel")
        if redirect is not None:
            Path(redirect).write_text(result.stdout, encoding="utf-8")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stderr if redirect is not None else result.output


def _run_subprocess(snippet: Snippet, where: Path) -> tuple[int, str]:
    env, words, redirect = _words(snippet.text)
    executable = str(Path(sys.executable).with_name(Path(words[0]).name))
    full_env = {**os.environ, **env, "COLUMNS": "80", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    if "PYTHONPATH" in env:
        full_env["PYTHONPATH"] = str(where / env["PYTHONPATH"])
    done = subprocess.run(
        [executable, *words[1:]], cwd=where, env=full_env, capture_output=True, text=True,
        timeout=900, check=False,
    )
    if redirect is not None:
        (where / redirect).write_text(done.stdout, encoding="utf-8")
        return done.returncode, done.stderr
    return done.returncode, done.stdout + done.stderr


def _run_python(snippet: Snippet, where: Path) -> None:
    code = compile(snippet.text, f"{snippet.page}:{snippet.line}", "exec")
    with contextlib.chdir(where):
        exec(code, {"__name__": "__doc_snippet__"})


def _execute(snippet: Snippet, where: Path) -> None:
    if snippet.kind == "python":
        _run_python(snippet, where)
        return
    run = _run_subprocess if needs_spark(snippet) or _is_pytest(snippet) else _run_in_process
    code, output = run(snippet, where)
    want = expected_exit(snippet)
    assert code == want, (
        f"{snippet.page}:{snippet.line}: `{snippet.text}` exited {code}, the page implies {want}:\n{output}"
    )
    assert_shown(snippet, output)


def checked_earlier(snippet: Snippet) -> Snippet | None:
    """An earlier page's same Spark command (writing no file) showing at least the same
    lines: it is run there once, not again here (each Spark command starts a JVM)."""
    writes = ("--out", ">", "--checkpoint", "-o ")
    if snippet.kind != "shell" or not needs_spark(snippet) or any(w in snippet.text for w in writes):
        return None
    for prior in ALL[: ALL.index(snippet)]:
        same = prior.kind == "shell" and prior.text == snippet.text and prior.page != snippet.page
        if same and set(snippet.shown) <= set(prior.shown) and skip_reason(prior) is None:
            return prior
    return None


def _params() -> list[object]:
    params: list[object] = []
    for snippet in ALL:
        if snippet.kind == "shell" and not _runnable(snippet) and skip_reason(snippet) is None:
            params.append(pytest.param(snippet, id=snippet.ident))  # fails: unclassified
            continue
        marks = [pytest.mark.spark] if needs_spark(snippet) else (
            [pytest.mark.process] if _is_pytest(snippet) else [])  # pytest in a fresh Python
        params.append(pytest.param(snippet, id=snippet.ident, marks=marks))
    return params


@pytest.mark.parametrize("snippet", _params())
def test_command_runs_as_written(
    snippet: Snippet, workspaces: dict[str, Workspace], tmp_path_factory: pytest.TempPathFactory
) -> None:
    reason = skip_reason(snippet)
    if reason is not None:
        pytest.skip(f"{snippet.text[:60]}: {reason}")
    if (earlier := checked_earlier(snippet)) is not None:
        pytest.skip(f"{snippet.text[:60]}: runs as {earlier.ident}")
    assert snippet.kind == "python" or _runnable(snippet), (
        f"{snippet.page}:{snippet.line}: `{snippet.text}` is neither a windtunnel or pytest command nor "
        "covered by a SKIPPED rule: make it runnable or add a rule naming why it is not run"
    )
    space = _workspace(workspaces, snippet.page, tmp_path_factory)
    index = ALL.index(snippet)
    if index in space.done:  # ran as set-up for a later command: its files are there already
        del workspaces[snippet.page]
        space = _workspace(workspaces, snippet.page, tmp_path_factory)
    for earlier, prior in enumerate(ALL[:index]):
        # earlier commands set up the page's files; a pytest run writes none
        runnable = skip_reason(prior) is None and not needs_spark(prior) and not _is_pytest(prior)
        if prior.page == snippet.page and earlier not in space.done and runnable:
            space.done.add(earlier)
            with contextlib.suppress(Exception):  # its own test reports it
                _execute(prior, space.path)
    space.done.add(index)
    _execute(snippet, space.path)


def test_pages_show_commands() -> None:
    by_page = {page: [s for s in ALL if s.page == page] for page in PAGES}
    assert any(_is_windtunnel(s) and s.shown for s in by_page["README.md"])
    assert any(s.kind == "python" for s in by_page["docs/simulator.md"])
    assert sum(1 for s in ALL if _is_windtunnel(s) and not needs_spark(s)) >= 10


def test_every_skip_rule_is_used() -> None:
    unused = [pattern for pattern, _ in SKIPPED
              if not any(re.search(pattern, s.text, flags=re.MULTILINE) for s in ALL)]
    assert not unused, f"SKIPPED rules that match no command any more (remove them): {unused}"


def test_shown_output_is_compared() -> None:
    snippet = Snippet("x.md", 1, "shell", "windtunnel replay f", ("a 1.5 s", "...", "c"))
    assert_shown(snippet, "a 2.0 s\nb\nc\n")
    with pytest.raises(AssertionError, match="no longer prints"):
        assert_shown(snippet, "c\na 2.0 s\n")
    assert_shown(Snippet("x.md", 1, "shell", "w", ("run took ...",)), "run took 3 s (fast)\n")
    with pytest.raises(AssertionError):
        assert_shown(Snippet("x.md", 1, "shell", "w", ("run took ...",)), "run failed\n")
    assert expected_exit(Snippet("x.md", 1, "shell", "w", ("divergence: x",))) == 1


def test_readme_keeps_the_two_commands() -> None:
    """CI and the contract run these two lines exactly as the README shows them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]"'
    assert f"{setup} && .venv/bin/windtunnel replay examples/brute-force.yaml\n" in readme
    assert f"{setup} && .venv/bin/pytest -q -n 3\n" in readme


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("docs/")])
def test_every_page_is_linked_from_readme_and_index(page: str) -> None:
    name = page.removeprefix("docs/")
    assert f"]({page})" in (ROOT / "README.md").read_text(encoding="utf-8"), f"README: {page}"
    if name != "index.md":
        assert f"]({name})" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8"), name
