"""The real Apache Flink engine as ground truth (the ``[flink]`` extra).

- :mod:`.runtime`: finding Flink's jars (``apache-flink-libraries``), a Java runtime and the
  harness jar shipped beside this module (``windtunnel-flink.jar``, built from the Java
  sources here by ``tools/build_flink_jar.py``), and running one job per batch;
- :mod:`.server`: the one JVM (and MiniCluster) every run of a Python process uses, started
  at the first run and stopped at exit;
- :mod:`.windows`: scenarios as DataStream window jobs (Flink's own ``WindowOperator``:
  tumbling, sliding and session windows, allowed lateness, late side output; cumulating
  windows on Flink SQL's ``CUMULATE``) and their firings back as the contract's outputs;
- :mod:`.sql`: a user's Flink SQL (``CREATE TABLE`` with ``WATERMARK FOR`` and a windowing
  TVF query) run over scenarios through Flink's Table API in the same harness.
"""
