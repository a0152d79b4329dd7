"""The ``ekuiper`` profile: eKuiper's window functions and their operators.
"""
