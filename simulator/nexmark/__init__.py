"""The ``nexmark`` workload: Nexmark's persons, auctions and bids (``workload.py``), by the
rules of Nexmark's generator (``rules.py``, ``text.py``), drawn in blocks of event numbers
(``events.py``) and put in arrival order (``stream.py``); its knobs in ``config.py``."""
