"""The ``beam`` profile: Apache Beam's windowing, triggers, panes and accumulation.
"""
