"""The ``kdb`` profile: kdb Insights' ``.qsp.window`` operators and their options.
"""
