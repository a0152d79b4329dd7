"""The JVM binding: windtunnel's compiled Java, how it is built, and how a session loads it.

- ``src/windtunnel/engine/``: the window engine (pure JDK: the default profile's rules);
- ``src/windtunnel/spark/``: the Spark side (packing rows by key slice, the per-slice step,
  state on the checkpoint's file system through Hadoop's FileSystem API);
- :mod:`~windtunnel.spark_impl.jvm.build`: the jar, built from these sources against the
  installed Spark (cached per source digest and Spark version), or the one shipped in the
  wheel when no ``javac`` is found;
- :mod:`~windtunnel.spark_impl.jvm.binding`: loading it into a session, a self-check, and
  calls into it; any load or link failure demotes queries to the general path with one
  warning line.
"""
