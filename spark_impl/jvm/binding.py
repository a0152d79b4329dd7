"""Loading windtunnel's jar into a session, checking it, and calling into it.

:func:`load` gives the session's :class:`Jvm` (once per Spark application) or None, with the
reason: a Spark Connect client (no JVM in this process), no jar (no javac and none shipped),
a build that failed, or a jar the running Spark cannot link (the self-check,
``windtunnel.spark.Entry#selfCheck``, touches every Spark and Hadoop API the operator uses
and runs the engine on a small stream, so a missing class or method surfaces here, not in the
middle of a query). Any such failure demotes queries to the general path; :func:`load` prints
one warning line saying why (once per application), and the reason is what
``windtunnel run --explain`` shows.

The jar goes to executors with ``addJar``; the driver loads it through a class loader of its
own (Py4J resolves classes through the gateway's, which does not see added jars) and calls
the one static entry point ``windtunnel.spark.Entry#call(String, Object[])``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from windtunnel.spark_impl.jvm.build import BuildFailed, jar_for_spark

ENTRY = "windtunnel.spark.Entry"


@dataclass(frozen=True, slots=True)
class Jvm:
    """The loaded jar of one SparkContext."""

    gateway: Any
    loader: Any
    entry: Any
    """``Entry.call`` as a java.lang.reflect.Method."""
    jar: Path
    how: str
    """How the jar was found: ``cached``, ``built`` or ``shipped``."""
    names: dict[str, Any] = field(default_factory=dict)

    def call(self, name: str, *args: Any) -> Any:
        """``Entry.call(name, args)``: the Java result (Py4J converts strings, numbers, bools)."""
        gateway = self.gateway
        objects = self.names.get("Object")
        if objects is None:  # looked up once: each lookup of a package name misses the classpath
            objects = self.names["Object"] = gateway.jvm.java.lang.Object
        array = gateway.new_array(objects, len(args))
        for index, value in enumerate(args):
            array[index] = value
        outer = gateway.new_array(objects, 2)
        outer[0] = name
        outer[1] = array
        return self.entry.invoke(None, outer)

    def strings(self, values: list[str] | tuple[str, ...]) -> Any:
        """A Java String array."""
        array = self.gateway.new_array(self.gateway.jvm.java.lang.String, len(values))
        for index, value in enumerate(values):
            array[index] = value
        return array


@dataclass(frozen=True, slots=True)
class Loaded:
    """What :func:`load` found: the Jvm, or None and the reason in one line."""

    jvm: Jvm | None
    reason: str


_loaded: dict[str, Loaded] = {}
_lock = threading.Lock()

Warn = Callable[[str], None]


def _stderr(line: str) -> None:
    print(f"windtunnel: {line}", file=sys.stderr, flush=True)


def load(spark: Any, *, jar: Path | None = None, warn: Warn = _stderr) -> Loaded:
    """The jar loaded into ``spark``'s JVM and checked, once per application (``jar``: this
    jar instead of :func:`~windtunnel.spark_impl.jvm.build.jar_for_spark`'s, for tests).
    On failure ``warn`` gets one line (once) and the result's ``jvm`` is None."""
    try:
        context = spark.sparkContext
        app = context.applicationId
        gateway = context._gateway
    except Exception:  # Spark Connect: no SparkContext in this process
        return Loaded(None, "a Spark Connect client has no JVM in this process")
    key = f"{app}:{jar}"
    with _lock:
        found = _loaded.get(key)
        if found is None:
            found = _loaded[key] = _load(context, gateway, jar)
            if found.jvm is None:
                warn(f"the production operator is not available ({found.reason}); "
                     "queries run on the general path")
        return found


def _load(context: Any, gateway: Any, jar: Path | None) -> Loaded:
    try:
        path, how = (jar, "given") if jar is not None else jar_for_spark()
    except (BuildFailed, FileNotFoundError, OSError) as exc:
        return Loaded(None, f"building the jar failed: {exc}")
    jvm = gateway.jvm
    try:
        urls = gateway.new_array(jvm.java.net.URL, 1)
        urls[0] = jvm.java.io.File(str(path)).toURI().toURL()
        parent = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        loader = jvm.java.net.URLClassLoader(urls, parent)
        cls = jvm.java.lang.Class.forName(ENTRY, True, loader)
        types = gateway.new_array(jvm.java.lang.Class, 2)
        types[0] = jvm.java.lang.Class.forName("java.lang.String")
        types[1] = jvm.java.lang.Class.forName("[Ljava.lang.Object;")
        entry = cls.getMethod("call", types)
        loaded = Jvm(gateway, loader, entry, path, how)
        spec, values = check_query()
        array = gateway.new_array(jvm.java.lang.Object, len(values))
        for index, value in enumerate(values):
            array[index] = jvm.java.lang.Long(value)
        loaded.call("selfCheck", spec, array)
    except Exception as exc:  # a link error, a missing class: another Spark build
        return Loaded(None, f"{path.name} does not link with this Spark: {_first_line(exc)}")
    context._jsc.sc().addJar(str(path))  # executors fetch it
    return Loaded(loaded, f"loaded {path.name} ({how})")


def check_query() -> tuple[str, list[int]]:
    """The self-check's query (10 ms tumbling windows counting events of ``ts``) as the
    engine's spec, and one event's slot values (``ts`` = 5)."""
    from windtunnel.oracle.engine import DEFAULT_RULES
    from windtunnel.oracle.model.spec import Aggregation, FixedWindows, Query
    from windtunnel.spark_impl.jvm.engine_spec import engine_spec

    query = Query(FixedWindows(10, on="ts"), aggregate=(Aggregation("n", "count"),))
    return engine_spec(query, DEFAULT_RULES, 1, 0), [5]


def _first_line(exc: BaseException) -> str:
    """The Java exception's own line (``java.lang.NoSuchMethodError: ...``) or Python's."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        cause = java
        while cause.getCause() is not None:
            cause = cause.getCause()
        return str(cause.toString()).splitlines()[0]
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
