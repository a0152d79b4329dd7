"""Timeline pictures of a run (``windtunnel plot``): what to draw, and how.

:mod:`~windtunnel.cli.plotting.sources` reads a run (the oracle's own account, or a Spark
replay's outputs) into :class:`~windtunnel.cli.plotting.timeline.PanelSource` values;
:mod:`~windtunnel.cli.plotting.timeline` lays them out (pure data, no drawing);
:mod:`~windtunnel.cli.plotting.mpl` draws PNG and SVG with matplotlib (the ``plot`` extra)
and :mod:`~windtunnel.cli.plotting.html` wraps the SVG in one self-contained page.
"""
