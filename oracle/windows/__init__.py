"""The window kinds the profiles share: the stream driver, fixed (tumbling and hopping),
session, count and trailing windows, and their fast paths beside the reference.
"""
