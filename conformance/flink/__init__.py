"""The real Apache Flink engine as ground truth (the ``[flink]`` extra).

- :mod:`.runtime`: finding Flink's jars (``apache-flink-libraries``), a Java runtime and the
  harness jar shipped beside this module (``windtunnel-flink.jar``, built from the Java
  sources here by ``tools/build_flink_jar.py``), and running one JVM per batch;
- :mod:`.windows`: scenarios as DataStream window jobs (Flink's own ``WindowOperator``:
  tumbling, sliding and session windows, allowed lateness, late side output) and their
  firings back as the contract's outputs;
- :mod:`.sql`: a user's Flink SQL (``CREATE TABLE`` with ``WATERMARK FOR`` and a windowing
  TVF query) run over scenarios through Flink's Table API in the same harness.
"""
