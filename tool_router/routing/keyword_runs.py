"""A request made only of catalog words reads as their tools (pure).

Operators type lists of readings and runs of orders with nothing but the catalog's own words:
"alt speed heading?", "esc, imu and health status", "arm takeoff hover". The clause splitter
cuts no unpunctuated run, and lcr scores a word standing alone ("imu") below what it scores it
in a sentence: on the fifth public-style dev writer (pubw5) those three lost a tool each.

The rule reads the whole screened request as a run of keywords, each naming exactly one catalog
tool (``config/catalog.yaml``'s ``keywords``), with nothing else in it but separators (commas,
"and", "then", "n", "+", "->"), item words ("status", "check", "reading", "please", "now", a
question mark), after an order's keyword only a number with its unit ("hover 30 s"), and after
a list of readings only what they are of ("lidar, multispectral and rgb of the orchard"). It
fires only when the run names two tools or more and every word is accounted for: one unknown
word ("tilt camera down", "pause the route", "no photo"), a negation, a condition word, or a
number after a reading ("alt 30": an altitude to set or to read?) leaves the request to the
policy. Two keywords side by side with no separator are both single words ("alt speed"); "gas
leak detection" is one thing, not two. Words that name a flight mode ("mode", "loiter mode")
and ``vehicle_state``'s state words are not read: a mode is a switch or a question, never a
list item (routing/flight_modes.py).

An order that names where it goes ("fly to", "go to", "orbit") is followed by its place: a
determiner and one word whatever it is ("fly to the pad": a place, not a landing), then one
more that is no keyword ("the old mill", "tower_07"). Two orders may stand side by side when
the second is one word or opens with a verb ("takeoff fly to the barn"); a word said twice is
emphasis ("go up go up lift off") and reads as no run, and an order's keyword with a reading's
right after it is one thing, the order's setting ("rtl alt?", "takeoff speed"): no run.

The rule adds the run's tools the policy left out, each with the best score the policy gave
that tool (or its smallest chosen score), in the clause that holds its keyword; it never drops
a tool, never adds a critical one (``arm``, ``kill``, ``drop it`` stay the policy's call), and
fills an answer the scope decision left empty (a run of catalog words is for the vehicle).
docs/CONVENTIONS.md, "Runs of catalog words".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tool_router.common.catalog import Catalog, Kind, Risk
from tool_router.common.clauses import split_clauses
from tool_router.routing.policies.base import Decision

_SEPARATORS = frozenset({',', ';', 'and', 'then', 'n', '&', '+', '/', '->', '>', 'also', 'plus',
                         '|'})
_ITEM_WORDS = frozenset({'status', 'check', 'reading', 'readings', 'level', 'levels', 'data',
                         'info', 'now', 'pls', 'please', '?', '!', '.'})
_NUMBER_OR_UNIT = re.compile(
    r'^(?:-?\d+(?:\.\d+)?(?:m|ft|s|sec|secs|%|km/h|kmh|kph|mph|kts|kt|m/s|mps|deg|°)?|m|ft|'
    r'meters|metres|feet|s|sec|secs|seconds|%|km/h|kmh|kph|m/s|mps|mph|kts|kt|knots|deg|'
    r'degrees|percent|min|mins|minutes)$')
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_./%°'-]*[a-z0-9%°/]|[a-z0-9]|->|[+&>,;?!|]")
_STATE_TOOL = 'vehicle_state'
# "thermal snapshot", "ir pic": a picture word joined to another camera's word is that camera's
_PICTURE = 'rgb_camera'
_CAMERAS = frozenset({'thermal_camera', 'multispectral_camera', 'lidar_scanner'})
_IMAGES = _CAMERAS | {_PICTURE}  # a picture after an order is a step ("takeoff photo land")
# an order that names where it goes: its place follows ("fly to the barn", "orbit tower_07")
_DESTINATIONS = frozenset({'goto_waypoint', 'orbit_point'})
_ORDER_VERBS = frozenset({'fly', 'go', 'head', 'climb', 'descend', 'take', 'start', 'stop',
                          'return', 'come', 'move', 'navigate', 'proceed', 'drop', 'lift', 'get',
                          'set', 'turn', 'face', 'point', 'land', 'touch', 'spin'})
_DETERMINERS = frozenset({'the', 'a', 'an', 'that', 'this', 'our', 'my'})
# what the readings are of, after a list of readings only: "lidar and rgb of the orchard"
_OF_PLACE = re.compile(
    r'\s+(?:of|over|on|at)\s+(?:the|this|that|our|my)\s+[a-z]+(?:\s+[a-z]+)?\s*[?!.]*\s*$')


@dataclass(frozen=True)
class RunRead:
    """The request read as a run of catalog words, and the tools the rule added."""

    tools: tuple[str, ...]  # the run's tools, in request order, once each
    added: tuple[str, ...]


class KeywordRuns:
    """The keyword table of one catalog: each keyword that names exactly one tool."""

    def __init__(self, catalog: Catalog) -> None:
        owners: dict[str, set[str]] = {}
        for tool in catalog:
            for keyword in tool.keywords:
                owners.setdefault(keyword, set()).add(tool.name)
        self._tool_of = {
            tuple(_TOKEN.findall(k)): next(iter(names)) for k, names in owners.items()
            if len(names) == 1 and 'mode' not in k and _STATE_TOOL not in names
        }
        self._longest = max((len(k) for k in self._tool_of), default=0)
        self._sensor = {t.name for t in catalog if t.kind == Kind.SENSOR}
        self._critical = {t.name for t in catalog if t.risk == Risk.CRITICAL}

    def read(self, text: str) -> tuple[tuple[str, str], ...]:
        """(keyword, tool) of each item when ``text`` is a run of catalog words, else ()."""
        lowered = text.lower()
        place = _OF_PLACE.search(lowered)
        if place:  # the readings' object: the run before it must be readings only
            items = self.read(lowered[:place.start()])
            return items if all(t in self._sensor for _, t in items) else ()
        tokens = _TOKEN.findall(lowered)
        found: list[tuple[str, str]] = []
        i, last, joined = 0, '', 0  # joined: words of the keyword just before (0 = separated)
        while i < len(tokens):
            token = tokens[i]
            if token in _SEPARATORS:
                i, joined = i + 1, 0
                continue
            if joined and last in _DESTINATIONS:  # "fly to the barn", "orbit tower_07"
                i += 1 if token in _DETERMINERS else 0
                if i < len(tokens) and tokens[i] not in _SEPARATORS:
                    i += 1  # the place's first word, whatever it is ("fly to the pad")
                    if i < len(tokens) and not self._keyword_at(tokens, i) \
                            and tokens[i] not in _SEPARATORS | _ITEM_WORDS \
                            and not _NUMBER_OR_UNIT.match(tokens[i]):
                        i += 1  # and a second ("the old barn", "north gate")
                joined = 0
                continue
            if token in _ITEM_WORDS:
                i += 1
                continue
            if _NUMBER_OR_UNIT.match(token):
                if not last or last in self._sensor:
                    return ()
                i += 1
                continue
            size = self._keyword_at(tokens, i)
            if not size:
                return ()
            keyword = tuple(tokens[i:i + size])
            tool = self._tool_of[keyword]
            # two orders side by side: "takeoff fly to the barn" (a verb leads the second)
            orders = (last not in self._sensor and tool not in self._sensor
                      and (size == 1 or keyword[0] in _ORDER_VERBS))
            if joined and (joined > 1 or size > 1) and not orders:
                return ()
            if joined and last not in self._sensor and tool in self._sensor \
                    and tool not in _IMAGES:
                return ()  # "rtl alt", "takeoff speed": the order's own setting, one thing
            if not (joined and tool == _PICTURE and last in _CAMERAS):
                last = tool
                found.append((' '.join(keyword), tool))
            i, joined = i + size, size
        if len({k for k, _ in found}) < len(found):
            return ()  # a word said twice is emphasis ("go up go up lift off"), not a list
        return tuple(found) if len({t for _, t in found}) >= 2 else ()

    def _keyword_at(self, tokens: list[str], i: int) -> int:
        """How many tokens from ``i`` the longest keyword there spans (0: none)."""
        return next((n for n in range(min(self._longest, len(tokens) - i), 0, -1)
                     if tuple(tokens[i:i + n]) in self._tool_of), 0)

    def add(self, decision: Decision, text: str) -> tuple[Decision, RunRead | None]:
        """``decision`` with the run's tools it lacks (never a critical one)."""
        items = self.read(text)
        if not items:
            return decision, None
        tools = tuple(dict.fromkeys(t for _, t in items))
        missing = [t for t in tools if t not in decision.tools and t not in self._critical]
        if not missing:
            return decision, RunRead(tools, ())
        clauses = split_clauses(text)
        candidate = dict(decision.candidates)
        floor = min(decision.aligned_scores(), default=0.5)
        for tool in missing:
            keyword = next(k for k, t in items if t == tool)
            at = re.compile(rf'(?<!\w){re.escape(keyword)}(?!\w)', re.IGNORECASE)
            clause = next((c.index for c in clauses if at.search(c.text)), 0)
            score = max(candidate.get(tool, 0.0), floor)
            decision = decision.with_rule_tool(tool, score, clause, keyword,
                                               'a run of catalog words')
        return replace(decision, abstained=False), RunRead(tools, tuple(missing))
