"""windtunnel.oracle: the pure-Python reference for stream window semantics.

Default semantics are Tenzir's ``window`` operator; other engines are named profiles.
Time is integer epoch milliseconds; fixed windows are half-open ``[start_ms, end_ms)``.
"""

from windtunnel.oracle.clauses import parse_clause
from windtunnel.oracle.compare import Comparison, compare
from windtunnel.oracle.engine import replay, run, stream_outputs
from windtunnel.oracle.model.errors import (
    InvalidInput,
    InvalidScenario,
    InvalidSpec,
    InvalidStream,
    WindtunnelError,
)
from windtunnel.oracle.model.results import Drop, Emission, Result, WindowRef
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import (
    Aggregation,
    CountWindows,
    CumulateWindows,
    FixedWindows,
    Query,
    SessionWindows,
    TrailingWindows,
)
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, numbered
from windtunnel.oracle.profiles import PROFILES, Profile, profile_named
from windtunnel.oracle.scenario import Scenario, load_scenario, parse_scenario

__all__ = [
    "PROFILES",
    "Advance",
    "Aggregation",
    "Batch",
    "Comparison",
    "CountWindows",
    "CumulateWindows",
    "Drop",
    "Emission",
    "End",
    "Event",
    "FixedWindows",
    "InvalidInput",
    "InvalidScenario",
    "InvalidSpec",
    "InvalidStream",
    "Profile",
    "Query",
    "Result",
    "Rules",
    "Scenario",
    "SessionWindows",
    "TrailingWindows",
    "WindowRef",
    "WindtunnelError",
    "compare",
    "load_scenario",
    "numbered",
    "parse_clause",
    "parse_scenario",
    "profile_named",
    "replay",
    "run",
    "stream_outputs",
]

# Profiles defined in their own modules register themselves (profile, kinds, operators) on import.
from windtunnel.oracle.profiles.beam import profile as _beam_profile  # noqa: F401
from windtunnel.oracle.profiles.ekuiper import profile as _ekuiper_profile  # noqa: F401
from windtunnel.oracle.profiles.kdb import profile as _kdb_profile  # noqa: F401
from windtunnel.oracle.profiles.timeplus import profile as _timeplus_profile  # noqa: F401
