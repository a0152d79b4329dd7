"""The window kinds the profiles share, the reference: the stream driver, fixed (tumbling
and hopping), session, count and trailing windows, and what they share (clocks, the reorder
buffer, stages before the window). Their fast paths live apart, in ``oracle/fast/``.
"""
