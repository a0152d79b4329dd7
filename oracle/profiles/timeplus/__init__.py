"""The ``timeplus`` profile: Timeplus streaming windows with emit policies.
"""
