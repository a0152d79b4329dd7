"""Apache Beam as ground truth for the ``beam`` profile: its trigger driver, its DirectRunner,
its own transcripts (:mod:`windtunnel.conformance.targets.beam` names the targets).

``engine``, ``driver`` and ``pipeline`` import apache_beam (the ``[beam]`` extra);
``transcripts``, ``streams`` and ``families`` do not.
"""
