"""Gating conditions as typed predicates over sensor readings (pure; no ROS).

The router returns, for each action gated by a condition, the condition's text
("when it drops below 25%"). :func:`parse_condition` turns that text into a
:class:`Predicate` -- which sensor tool to read, which field of its reading,
a comparison, a threshold in a canonical unit -- or into an :class:`Unreadable`
that says why the text cannot be read. An unreadable condition is never guessed
at: the gated tool is not armed.

A sensor reading is a flat JSON object of numbers, booleans and short strings
(``{"battery_pct": 24.9, "voltage_v": 14.1}``). Sensor endpoints return it in
their answer after the human-readable text, on a line of its own starting with
``reading:`` (:func:`encode_reading` / :func:`decode_reading`).

The grammar (one quantity, one comparison, one threshold; the full table is in
docs/EXECUTOR.md, "Condition grammar"):

* numeric: ``[when|if|once|should|at|...] <quantity> <comparison> <number><unit>`` in words
  or symbols ("when the battery drops below 25%", "bat<20", "should the wind exceed 10 m/s",
  "if the signal gets weaker than -90"), or the threshold first ("at 15% battery",
  "20% battery", "10 m/s wind": the quantity reaching it); numbers may be spelled ("twenty
  percent"); a number without a unit is read in the quantity's canonical unit (°C for
  temperatures, m, m/s, %, V, dBm, ms, ppm) when it is plausible there, else refused;
* a pronoun ("when it drops below 25%") takes its quantity from what the request named
  before the condition, else from the request's other sensors, when exactly one fits;
* proximity of a detection: "if a person is within 3 m" -> the detector's distance to the
  nearest person (never the altitude);
* distance to a point: "when we are within 50 m of home", "... of 47.398, 8.546", arrival at a
  place of the places file ("when you reach the north gate"); any other place is refused;
* time: "after 30 seconds", "in 2 minutes", "wait 5 s", "at 14:30", "at 9am" (UTC);
* vehicle state: "once the mission is finished", "when it has landed", "once airborne";
* detections: "when you see a person", "once you see 3 or more people";
* link: "if we lose the link".

Refused (``Unreadable``): no threshold ("if it gets too windy"), a unit that does not fit the
quantity ("battery below 20 m"), an ambiguous quantity, two conditions joined by and/or,
negated or inverted connectives (unless, until, while, not), rates ("falls quickly"), an
unknown place, a time that is not today's (UTC), an angle, a cell voltage.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.numbers import UNITS_WORDS, digits
from tool_router.common.places import Place, place_key

READING_PREFIX = 'reading: '
HOME = (47.3977, 8.5456)  # the simulated launch point; "home" in distance conditions
HOME_RADIUS_M = 10.0  # "when you get home": how close counts as arrived
CLOCK = 'clock'  # pseudo-sensor for time conditions: read by the watch manager itself

Op = Literal['<', '<=', '>', '>=', '==']


@dataclass(frozen=True)
class Quantity:
    """A measurable quantity: which sensor reports it, under which field, in which unit."""

    name: str
    sensor: str
    field: str
    dimension: str  # percent length speed temperature time_ms signal ppm ratio voltage count
    words: str  # regex of words naming the quantity
    falls: Optional[bool] = False  # "reaches X" means "drops to X"; None: by the sign (<= 0 falls)
    bare: tuple[float, float] = (-math.inf, math.inf)  # plausible range of a number without unit
    worse: Optional[Op] = None  # what "worse than" means for it (None: not said of it)


QUANTITIES: tuple[Quantity, ...] = (
    Quantity('battery', 'battery_status', 'battery_pct', 'percent',
             r'battery|batt?\b|batery|battry|charge|state of charge|power level|juice|pack|'
             r'left\b|remaining', falls=True, bare=(0.0, 100.0)),
    Quantity('pack voltage', 'battery_status', 'voltage_v', 'voltage',
             r'pack voltage|battery voltage|voltage|volts?\b|pack\b', falls=True,
             bare=(0.0, 60.0)),
    Quantity('altitude', 'altitude_sensor', 'altitude_m', 'length',
             r'altitude|\balt\b|height|agl|elevation|climb\w*|descend\w*', bare=(0.0, 150.0)),
    Quantity('speed', 'velocity_estimate', 'speed_mps', 'speed',
             r'(?<!wind )speed|\bspd\b|velocity|ground ?speed|air ?speed|faster|slower|going',
             bare=(0.0, 30.0)),
    Quantity('wind', 'wind_estimate', 'wind_mps', 'speed', r'wind(?!\s*gust)|breeze',
             bare=(0.0, 30.0)),
    Quantity('gusts', 'wind_estimate', 'gust_mps', 'speed', r'gusts?', bare=(0.0, 40.0)),
    Quantity('air temperature', 'weather_sensor', 'air_temp_c', 'temperature',
             r'(?:air\s+|outside\s+|ambient\s+|outdoor\s+)?temp(?:erature)?s?\b|outside|'
             r'outdoors|ambient|weather|\bair\b(?!\s*quality)|it gets (?:colder|warmer)',
             falls=None, bare=(-50.0, 55.0)),
    Quantity('humidity', 'weather_sensor', 'humidity_pct', 'percent', r'humidity',
             bare=(0.0, 100.0)),
    Quantity('motor temperature', 'motor_status', 'esc_temp_c', 'temperature',
             r'esc temp(?:erature)?s?|motor temp(?:erature)?s?|motors?|escs?\b',
             bare=(-30.0, 150.0)),
    Quantity('surface temperature', 'thermal_camera', 'max_temp_c', 'temperature',
             r'(?:surface|panel|roof|pipe|object|target|transformer|chimney|wall|engine|fire|'
             r'water)\s+temp(?:erature)?s?|hot ?spots?|heat|thermal', bare=(-40.0, 400.0)),
    Quantity('signal strength', 'link_quality', 'rssi_dbm', 'signal',
             r'signal|rssi|link quality|link strength|reception|link\b|connection|telemetry',
             falls=True,
             bare=(-130.0, 0.0), worse='<'),
    Quantity('packet loss', 'link_quality', 'packet_loss_pct', 'percent',
             r'packet loss|packets|loss rate', bare=(0.0, 100.0), worse='>'),
    Quantity('link latency', 'link_quality', 'latency_ms', 'time_ms', r'latency|lag|delay|ping',
             bare=(0.0, 10000.0), worse='>'),
    Quantity('obstacle distance', 'obstacle_proximity', 'nearest_m', 'length',
             r'obstacles?|anything|something|wires?|branch|trees?|walls?|props|propellers|'
             r'clearance|nearest object|obstacle sensor|proximity|distance sensor',
             falls=True, bare=(0.0, 100.0)),
    Quantity('geofence margin', 'geofence_monitor', 'margin_m', 'length',
             r'geofence|fence|boundary|no-fly zone|no fly zone', falls=True,
             bare=(0.0, 1000.0)),
    Quantity('co', 'air_quality_sensor', 'co_ppm', 'ppm', r'\bco\b|carbon monoxide',
             bare=(0.0, 5000.0)),
    Quantity('methane', 'air_quality_sensor', 'ch4_ppm', 'ppm', r'methane|ch4',
             bare=(0.0, 100000.0)),
    Quantity('ndvi', 'multispectral_camera', 'ndvi', 'ratio', r'ndvi|vegetation index',
             bare=(-1.0, 1.0)),
    # "sats < 8", "fewer than 6 satellites": the satellites the GPS receiver uses (GPS_RAW_INT
    # satellites_visible); a count has no unit
    Quantity('satellites', 'gps_position', 'satellites', 'count',
             r'sats\b|\bsat\s+count|satellites?(?:\s+count)?|gps\s+(?:count|sats)',
             falls=True, bare=(0.0, 64.0), worse='<'),
)
BY_NAME = {q.name: q for q in QUANTITIES}
# Comparatives that name the quantity they compare (when the condition names none).
IMPLIED: tuple[tuple[str, str], ...] = (
    (r'weaker|stronger', 'signal strength'),
    (r'windier|calmer|calms|calmed|calm\s+down|dies\s+down|eases|eased', 'wind'),
)

# unit word -> (dimension, canonical unit, factor, offset): canonical = value * factor + offset
UNITS: dict[str, tuple[str, str, float, float]] = {}
for _words, _spec in (
    (('%', 'percent', 'per cent', 'pct'), ('percent', '%', 1.0, 0.0)),
    (('m', 'metre', 'metres', 'meter', 'meters', 'mtrs'), ('length', 'm', 1.0, 0.0)),
    (('ft', 'foot', 'feet'), ('length', 'm', 0.3048, 0.0)),
    (('km', 'kilometre', 'kilometres', 'kilometer', 'kilometers'), ('length', 'm', 1000.0, 0.0)),
    (('m/s', 'mps', 'metres per second', 'meters per second'), ('speed', 'm/s', 1.0, 0.0)),
    (('km/h', 'kph', 'kmh', 'kilometres per hour', 'kilometers per hour'),
     ('speed', 'm/s', 1 / 3.6, 0.0)),
    (('knots', 'knot', 'kt', 'kts', 'kn'), ('speed', 'm/s', 0.514444, 0.0)),
    (('mph', 'miles per hour'), ('speed', 'm/s', 0.44704, 0.0)),
    (('°c', 'degc', 'c', 'degrees celsius', 'celsius', 'degrees c', 'deg c'),
     ('temperature', '°C', 1.0, 0.0)),
    (('°f', 'degf', 'f', 'fahrenheit', 'degrees fahrenheit', 'degrees f', 'deg f'),
     ('temperature', '°C', 5 / 9, -32 * 5 / 9)),
    # "degrees" alone: a temperature in °C (angles are refused before units are read)
    (('degrees', 'degree', 'deg', '°'), ('temperature', '°C', 1.0, 0.0)),
    (('dbm',), ('signal', 'dBm', 1.0, 0.0)),
    (('ms', 'milliseconds', 'millisecond'), ('time_ms', 'ms', 1.0, 0.0)),
    (('s', 'sec', 'secs', 'second', 'seconds'), ('time_ms', 'ms', 1000.0, 0.0)),
    (('ppm',), ('ppm', 'ppm', 1.0, 0.0)),
    (('v', 'volt', 'volts'), ('voltage', 'V', 1.0, 0.0)),
):
    for _w in _words:
        UNITS[_w] = _spec
SHOWN = {'°c': '°C', 'degc': '°C', 'c': '°C', '°f': '°F', 'degf': '°F', 'f': '°F',
         'dbm': 'dBm', 'v': 'V', 'degrees': '°C', 'degree': '°C', 'deg': '°C', '°': '°C'}
TIME_UNITS = {'s': 1.0, 'sec': 1.0, 'secs': 1.0, 'second': 1.0, 'seconds': 1.0,
              'min': 60.0, 'mins': 60.0, 'minute': 60.0, 'minutes': 60.0,
              'h': 3600.0, 'hr': 3600.0, 'hrs': 3600.0, 'hour': 3600.0, 'hours': 3600.0}
# The unit a bare number is read in, per dimension (the executor's canonical units).
BARE_UNIT = {'percent': '%', 'ratio': '', 'count': '', 'signal': 'dBm', 'ppm': 'ppm',
             'voltage': 'V', 'length': 'm', 'speed': 'm/s', 'temperature': '°C', 'time_ms': 'ms'}

LEAD = re.compile(r'^(as soon as|in case|in the event that|provided that|whenever|every time|'
                  r'each time|any ?time|once|when|if|should|after|upon|on|'
                  r'at(?!\s+(?:least|most)\b)|wait(?:\s+for)?|give it)\b\s*', re.I)
INVERTED = re.compile(r'^(?:unless|until|till|while|before|as long as|except)\b', re.I)
NEGATED = re.compile(r"\b(?:not|never|no longer|isn'?t|aren'?t|doesn'?t|don'?t|won'?t|"
                     r"hasn'?t|haven'?t)\b", re.I)
JOINED = re.compile(r'\b(?:and|or|but)\b', re.I)
# "3 or more people", "20 m or less": one comparison, not two conditions
# ("below 20% or under 10 m" joins two: a number follows)
_NOT_JOINED = re.compile(r'\bor (?:more|less|fewer|above|below|higher|lower|over|under)\b'
                         r'(?!\s*[-+−]?\d)|'
                         # "less than or equal to 20%", "at or below 30%": one comparison
                         r'\bthan or equal to\b|\bequal to or\b|'
                         r'\bat or (?=below|under|above|over)|'
                         r'\d+[.,]\d+\s*,\s*-?\d|'
                         # "1 minute and 20 seconds": one duration
                         r'\b(?:h|hrs?|hours?|min|mins|minutes?)\s+and\s+(?=\d)')


def joined_parts(text: str) -> list[str]:
    """The readings of a condition joined by and/or/but, commas and spaces stripped.

    "wind over 10 m/s or battery under 25%" has two; "3 or more people" and "1 minute and 20
    seconds" one. The executor refuses a condition of several (one condition per action).
    """
    kept = [m.span() for m in _NOT_JOINED.finditer(text.lower())]
    parts, start = [], 0
    for m in JOINED.finditer(text):
        if not any(a <= m.start() < b for a, b in kept):
            parts.append(text[start:m.start()])
            start = m.end()
    parts.append(text[start:])
    return [p.strip(' ,') for p in parts if p.strip(' ,')]


_UNKNOWN_UNIT = re.compile(r'(?<![\w.])[-+−]?\d+(?:[.,]\d+)?\s*(yards?|yd|inch(?:es)?|miles?|mi|'
                           r'cm|mm|nmi|psi|bar|hpa|mbar|lux|rpm|amps?|mah|watts?|kw|kg|lbs?|'
                           r'pounds|gallons?|lit(?:er|re)s?|kelvin)\b', re.I)
# an altitude above sea level: every altitude here is above the launch point (the sensor's, the
# executor's targets), and the launch point's elevation is not known, so none is converted
SEA_LEVEL = re.compile(r'\b(?:a?msl|asl|above\s+(?:mean\s+)?sea[\s-]+level|above\s+sea)\b',
                       re.I)
PRONOUN = re.compile(r"^(?:it|they|its|it's|they're|them|that|this|those|these)\b", re.I)
# A comma before groups of exactly three digits separates thousands ("1,000 ft" is a thousand
# feet, "within 1,000 m" not 1 m); any other comma is a decimal one ("1,5 V")
NUMBER = r'[-+−]?(?:\d{1,3}(?:,\d{3})+(?![\d,])(?:\.\d+)?|\d+(?:[.,]\d+)?)'
_THOUSANDS = re.compile(r'[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?')
_UNIT_ALT = '|'.join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True))
UNIT_PATTERN = _UNIT_ALT  # every unit word, longest first (for other patterns to embed)
MEASURE = re.compile(rf'(?<![\w.])({NUMBER})\s*({_UNIT_ALT})?(?![\w/°])', re.I)
_COORD_NUM = r'[-+−]?\d{1,3}\.\d+'
COORD = re.compile(rf'(?:lat(?:itude)?\s*)?({_COORD_NUM})\s*°?\s*([NS])?\s*[,;/ ]\s*'
                   rf'(?:lon(?:g(?:itude)?)?\s*)?({_COORD_NUM})\s*°?\s*([EW])?', re.I)
VAGUE = re.compile(r'\b(?:low|high|too|strong|weak|quickly|fast|slowly|bad|good|critical|dying|'
                   r'gets? (?:worse|better)|thicker|stressed|looks?|near|close|far)\b', re.I)
ANGLE = re.compile(r'\b(?:heading|roll|pitch|yaw|bearing|angle|tilt|attitude|gimbal|compass|'
                   r'azimuth|'
                   # the vehicle leaning: "if it starts tilting more than 20 degrees" is an
                   # attitude, never a temperature (it had been read as the air's, > 20 °C)
                   r'tilts|tilted|tilting|tips|tipped|tipping|tip\s+over|leans?|leaning|leaned|'
                   r'banking|banked|rolls|rolling|rolled|keels?\s+over)\b',
                   re.I)
# "at waypoint 4", "when we hit WP 5", "once at wp3", "after the third waypoint", "at the 2nd
# wp": a mission item, which no reading reports (an ordinal before the word numbers it too)
ORDINALS = {'first': 1, 'second': 2, 'third': 3, 'fourth': 4, 'fifth': 5, 'sixth': 6,
            'seventh': 7, 'eighth': 8, 'ninth': 9, 'tenth': 10, 'eleventh': 11, 'twelfth': 12,
            'thirteenth': 13, 'fourteenth': 14, 'fifteenth': 15, 'sixteenth': 16,
            'seventeenth': 17, 'eighteenth': 18, 'nineteenth': 19, 'twentieth': 20}
_ORDINAL = r'(?:\d+\s*(?:st|nd|rd|th)|' + '|'.join(ORDINALS) + ')'
_ITEM = r'(?:\d+|' + '|'.join(sorted(set(UNITS_WORDS) - {'zero'}, key=len, reverse=True)) + ')'
WAYPOINT_PATTERN = (rf'\b(?:waypoint|way point|wpt?)\s*#?\s*{_ITEM}\b|\bwpt?\d+\b|'
                    rf'\b(?:the\s+)?{_ORDINAL}\s+(?:waypoint|way point|wpt?)\b')
WAYPOINT = re.compile(WAYPOINT_PATTERN, re.I)


def waypoint_number(written: str) -> int:
    """The item a WAYPOINT match names: "waypoint 4" and "the fourth waypoint" -> 4."""
    low = written.lower()
    for word, number in ORDINALS.items():
        if re.search(rf'\b{word}\b', low):
            return number
    numbers = re.findall(r'\d+', low)
    if numbers:
        return int(numbers[-1])
    return next(UNITS_WORDS[w] for w in re.findall(r'[a-z]+', low) if w in UNITS_WORDS)


SYMBOL = re.compile(r'(<=|>=|=<|=>|≤|≥|==|<|>|=)\s*$')
SYMBOL_OP: dict[str, str] = {'<=': '<=', '=<': '<=', '≤': '<=', '>=': '>=', '=>': '>=',
                             '≥': '>=', '<': '<', '>': '>', '==': 'reach', '=': 'reach'}

# comparison words, checked in this order (longest first where they overlap)
COMPARISONS: tuple[tuple[str, str], ...] = (
    (r'(?:less|lower|fewer) than or equal to|equal to or (?:less|lower) than|'
     r'at or (?:below|under)', '<='),
    (r'(?:greater|more|higher) than or equal to|equal to or (?:greater|more|higher) than|'
     r'at or (?:above|over)', '>='),
    (r'at least|no less than|not less than|or more|or above|or higher', '>='),
    (r'at most|no more than|not more than|or less|or below|or lower', '<='),
    (r'within|closer than|nearer than|inside', '<'),
    (r'farther than|further than|beyond', '>'),
    (r'worse than', 'worse'),
    (r'better than', 'better'),
    (r'(?:drops?|dropped|falls?|fell|goes|gone|gets?|is|are|\'s|\'re|decreases?|sinks?|'
     r'dips?|slows?)\s+(?:down\s+)?(?:below|under|beneath|less than|lower than)', '<'),
    (r'(?:rises?|rose|climbs?|goes|gets?|is|are|\'s|\'re|increases?|picks? up|grows?|'
     r'speeds? up)\s+(?:up\s+)?(?:above|over|beyond|more than|higher than|past)', '>'),
    (r'(?:drops?|dropped|falls?|fell|fallen|goes|gone|gets?|got|comes?|came|decreases?|'
     r"decreased|sinks?|sank|dips?|dipped|descends?|descended|slows?|slowed|is|are|'s|'re|was)\s+"
     r'down\s+to|(?:drops?|dropped|falls?|fell|fallen|decreases?|decreased|sinks?|sank|dips?|'
     r'dipped|descends?|descended)\s+to', 'down_to'),
    (r'(?:rises?|rose|risen|climbs?|climbed|goes|gone|gets?|got|increases?|increased|grows?|'
     r"grew|speeds?|is|are|'s|'re|was)\s+up\s+to|(?:rises?|rose|risen|climbs?|climbed|"
     r'increases?|increased|grows?|grew|ascends?|ascended)\s+to', 'up_to'),
    (r'below|under|beneath|less than|lower than|slower than|colder than|cooler than|'
     r'fewer than|weaker than|calmer than|sub', '<'),
    (r'above|over|exceeds?|exceeding|exceeded|more than|higher than|greater than|faster than|'
     r'warmer than|hotter than|windier than|stronger than|tops?|pass(?:es|ed)?|past|'
     r'surpass\w*|beyond', '>'),
    (r'reach(?:es|ed)?|hits?|gets? to|equals?|is at|\'s at|are at|at', 'reach'),
)

STATES: tuple[tuple[str, str, str, Any], ...] = (
    # (pattern, sensor, field, expected value)
    (r"(?:mission|survey|patrol|route|flight plan)(?:'s|\s+is|\s+has)?\s*(?:been\s+)?"
     r'(?:done|finished|complete|completed|completes|over|ended|ends|finishes)|(?:finish|'
     r'complete)\w*\s+the\s+(?:mission|survey|patrol)|done with the (?:mission|survey|patrol)',
     'vehicle_state', 'mission', 'finished'),
    (r'\b(?:landed|touch(?:es|ed)?\s*down|touchdown|(?:is|it\'s|we\'re|are)\s+(?:down\s+)?on '
     r'the ground|on the ground|back on the ground|(?:it|we|you|the drone)\s+lands?\b)',
     'vehicle_state', 'on_ground', True),
    (r'\b(?:airborne|in the air|(?:has\s+)?taken off|took off|lifts? off|off the ground)',
     'vehicle_state', 'on_ground', False),
    # "once armed take off", "when it's disarmed": the arming state the autopilot reports
    (r"\bdisarmed\b", 'vehicle_state', 'armed', False),
    (r"\b(?<!dis)armed\b", 'vehicle_state', 'armed', True),
    # "if gps is lost", "on loss of gps", "if we lose the gps fix": no 3D fix reported any more
    # (read before the link: "gps signal is lost" is the fix, not the radio)
    (r'\b(?:lose|lost|loses|losing)\s+(?:the\s+|our\s+)?gps\b|\bgps\s+(?:fix\s+|signal\s+|lock\s+)?'
     r'(?:is\s+|was\s+|gets\s+|goes\s+|has been\s+)?(?:lost|drops?|dropped|cuts? out|fails?|'
     r'failed|dies|down|glitch\w*)\b|\b(?:gps|fix)\s+loss\b|\bloss of (?:the\s+)?gps\b|'
     r'\bno\s+gps\b|\bgps\s+(?:fix|lock)\s+(?:is\s+)?(?:gone|lost)\b',
     'gps_position', 'gps_fix', False),
    # "when gps is back", "once we regain the gps fix", "after gps lock": a 3D fix reported again
    (r'\b(?:regain\w*|recover\w*|get|got|have|has|acquire\w*)\s+(?:a\s+|the\s+|our\s+)?gps\b|'
     r'\bgps\s+(?:fix\s+|signal\s+|lock\s+)?(?:is\s+|was\s+|gets\s+|has\s+|has been\s+)?'
     r'(?:back|comes? back|came back|returns?|returned|restored|recovered|regained|locks?|'
     r'locked|acquired|(?:is\s+)?good|ok(?:ay)?)\b|\bgps\s+(?:fix|lock)\b$',
     'gps_position', 'gps_fix', True),
    (r'\b(?:lose|lost|loses|losing|drops?|dropped)\s+(?:the\s+)?(?:rc\s+|radio\s+|data\s+|c2\s+)?'
     r'(?:link|connection|radio|signal|telemetry|comms|rc)|(?:link|connection|radio|signal|'
     r'telemetry|comms|rc|c2)\s+(?:is\s+|are\s+|was\s+|were\s+|gets\s+|goes\s+|be\s+|has been\s+)?'
     r'(?:lost|drops?|dropped|go(?:es)? down|'
     r'cuts? out|fails?|failed|dies|die|down)\b|\b(?:link|signal|connection)\s+loss|'
     r'\bloss of (?:the\s+)?(?:link|signal|connection|telemetry)|'
     r'\bno\s+(?:signal|link|connection|telemetry)',
     'link_quality', 'link_lost', True),
    # "when the link comes back", "once we regain the connection": the link reported again
    (r'\b(?:regain\w*|recover\w*|restore\w*)\s+(?:the\s+)?(?:rc\s+|radio\s+|data\s+|c2\s+)?'
     r'(?:link|connection|radio|signal|telemetry|comms)|(?:link|connection|radio|signal|'
     r'telemetry|comms)\s+(?:is\s+|are\s+|was\s+|gets\s+|has\s+|has been\s+)?(?:back|'
     r'comes? back|came back|returns?|returned|restored|recovered|regained)\b',
     'link_quality', 'link_lost', False),
    (r'\b(?:leave|leaves|left|leaving|exit|exits|exited|cross|crosses|crossed|outside|out of|'
     r'breach\w*)\s+(?:of\s+)?(?:the\s+)?(?:allowed\s+|operating\s+|flight\s+|mission\s+|'
     r'survey\s+)?(?:area|geofence|fence|boundary|zone)', 'geofence_monitor', 'inside', False),
)
# "after landing", "after the survey": an event the vehicle reports as a state
AFTER_EVENTS: tuple[tuple[str, str, str, Any], ...] = (
    (r'(?:the\s+)?(?:landing|touchdown|touch(?:ing)? down|we land|it lands|you land)',
     'vehicle_state', 'on_ground', True),
    (r'(?:the\s+)?(?:take-?off|takeoff|take off|lift-?off)', 'vehicle_state', 'on_ground', False),
    (r'(?:the\s+)?(?:mission|survey|patrol|flight plan)', 'vehicle_state', 'mission', 'finished'),
)


@dataclass(frozen=True)
class Detected:
    """A class of objects the detector reports: its count field and its distance field."""

    kind: str
    count: str
    distance: str
    words: str


DETECTIONS: tuple[Detected, ...] = (
    Detected('person', 'persons', 'person_distance_m',
             r'person|persons|people|someone|somebody|anyone|anybody|humans?|man|men|woman|women|'
             r'child|children|kids?|swimmers?|hikers?|pedestrians?|workers?|intruders?|'
             r'climbers?|surfers?|runners?|cyclists?|skiers?|trespassers?|crowd|individuals?'),
    Detected('vehicle', 'vehicles', 'vehicle_distance_m',
             r'cars?|(?<!the )(?<!our )(?<!my )(?<!this )vehicles?|trucks?|vans?|boats?|bus|'
             r'buses|tractors?|lorr(?:y|ies)|motorbikes?|motorcycles?|ships?|jet skis?|suvs?'),
    Detected('animal', 'animals', 'animal_distance_m',
             r'animals?|deer|dogs?|cows?|cattle|sheep|birds?|horses?|cats?|goats?|pigs?|fox(?:es)?|'
             r'wolf|wolves|bears?|moose|elk|boars?|livestock|wildlife|kangaroos?|geese|goose|'
             r'ducks?'),
)
DETECT_VERB = re.compile(r"\b(?:see|sees|seen|seeing|spot|spots|spotted|spotting|detect|detects|"
                         r'detected|detecting|find|finds|finding|notice|notices|noticing|'
                         r'shows? up|appears?|comes? into view|enters?|is seen|are seen|pick up|'
                         r'count|in view|in sight|on camera|in (?:the )?(?:frame|shot|image)|'
                         r'approach(?:es)?|walks? in|flies in|comes? in|turns? up|pops? up|'
                         r"is present|are present|there(?:'s| is| are))\b", re.I)
# "within 15 m of the drone": a distance to the vehicle itself
SELF = re.compile(r'(?:the\s+)?(?:drone|vehicle|uav|aircraft|copter|quad|us|me|you|it|props|'
                  r'propellers)\s*$', re.I)
HOME_WORDS = re.compile(r"(?:the\s+)?(?:home|home point|home position|launch|launch point|"
                        r'launch site|launch pad|launchpad|take-?off point|takeoff point|'
                        r"start(?:ing)? point|start|where we (?:took off|started)|base|"
                        r'home base)', re.I)  # ANNOTATION.md: back to base is back home
_TIME_ALT = '|'.join(sorted(TIME_UNITS, key=len, reverse=True))


class Predicate(BaseModel):
    """A condition the executor can watch: ``<sensor>.<field> <op> <threshold>``."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    text: str = Field(description='The condition as the router gave it.')
    quantity: str = Field(description='What is measured (battery, altitude, distance, ...).')
    sensor: str = Field(description="Catalog sensor tool read for it, or 'clock'.")
    field: str = Field(description='Field of the reading compared.')
    op: Op = Field(description='Comparison of reading against threshold.')
    threshold: float | bool | str = Field(description='In the canonical unit.')
    unit: str = Field('', description="Canonical unit ('%', 'm', 'm/s', '°C', 's', ...).")
    written: str = Field('', description='The threshold as written (e.g. "100 ft").')
    target: tuple[float, float] | None = Field(
        None, description='lat, lon of the point for distance conditions.')
    either_side: bool = Field(
        False, description='A level reached from wherever the vehicle is: the first reading '
                           'keeps `op` from below and turns it to <= from above (see settled).')
    held_s: float = Field(
        0.0, description='Seconds the comparison must hold without a break before the '
                         'condition is met ("if the link is lost for 5 s"); 0: at once.')

    def describe(self) -> str:
        """``battery_status.battery_pct < 25 %`` and, when converted, what was written."""
        value = self.threshold
        shown = (f'{value:g}' if isinstance(value, float) else json.dumps(value))
        unit = f' {self.unit}' if self.unit else ''
        where = f' of {self.target[0]:.5f},{self.target[1]:.5f}' if self.target else ''
        note = f' (written {self.written})' if self.written and self.written != \
            f'{shown}{unit}'.strip() else ''
        side = ' (<= when above it as the watch starts)' if self.either_side else ''
        held = f' for {self.held_s:g} s' if self.held_s else ''
        return f'{self.sensor}.{self.field}{where} {self.op} {shown}{unit}{note}{side}{held}'

    def settled(self, first: float | bool | str | None) -> Predicate:
        """The predicate with its side chosen by the first reading (itself when not either_side).

        Below the threshold it waits for ``>=`` (the climb), above it for ``<=`` (the descent);
        at the threshold it holds either way.
        """
        if not self.either_side or not isinstance(first, (int, float)) \
                or not isinstance(self.threshold, float):
            return self
        op: Op = '<=' if float(first) > self.threshold else '>='
        return self.model_copy(update={'op': op, 'either_side': False})

    def value(self, reading: dict[str, Any]) -> float | bool | str | None:
        """The compared value taken from a reading; KeyError when the reading lacks it.

        None when the sensor reports the field as null (e.g. a detection distance while
        nothing is detected); such a reading never satisfies the predicate.
        """
        if self.target is not None:
            return distance_m(float(reading['lat']), float(reading['lon']), *self.target)
        return reading[self.field]  # type: ignore[no-any-return]

    def holds(self, reading: dict[str, Any]) -> bool:
        """True when the reading satisfies the predicate; KeyError/TypeError if unusable."""
        got = self.value(reading)
        if got is None:
            return False
        want = self.threshold
        if self.op == '==':
            return bool(got == want)
        a, b = float(got), float(want)
        return {'<': a < b, '<=': a <= b, '>': a > b, '>=': a >= b}[self.op]


class Unreadable(BaseModel):
    """A condition the executor will not act on, and why (the gated tool is not armed)."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    text: str
    reason: str


Parsed = Union[Predicate, Unreadable]


def distance_m(lat: float, lon: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in metres (haversine)."""
    r = 6_371_000.0
    p1, p2 = math.radians(lat), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(min(1.0, a)))


def encode_reading(text: str, values: dict[str, Any]) -> str:
    """A sensor answer: human text, then ``reading: {json}`` on its own line."""
    return f'{text}\n{READING_PREFIX}{json.dumps(values, sort_keys=True)}'


def decode_reading(message: str) -> dict[str, Any] | None:
    """The reading of a sensor answer, or None when it carries none."""
    for line in reversed(message.splitlines()):
        if line.startswith(READING_PREFIX):
            try:
                data = json.loads(line[len(READING_PREFIX):])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


# 47°23'54.6"N 8°32'47.8"E (as map apps copy them): degrees, minutes, seconds, hemisphere
DMS = re.compile(r'(?<![\d.])(\d{1,3})\s*°\s*(\d{1,2})\s*[\'′’]\s*(?:(\d{1,2}(?:\.\d+)?)\s*'
                 r'(?:"|″|”|\'\'))?\s*([NSEW])\b', re.I)
# "lat 47.3985 lon 8.5466", "latitude: 47.3985, longitude: 8.5466": the labels go
_LAT_LABEL = re.compile(r'\blat(?:itude)?\s*[:=]?\s*(?=[-+−]?\d)', re.I)
_LON_LABEL = re.compile(r'\s*,?\s*\blon(?:g(?:itude)?)?\s*[:=]?\s*(?=[-+−]?\d)', re.I)


def decimal_coordinates(text: str) -> str:
    """``text`` with its coordinates written as a decimal pair; the rest as it was.

    Degrees-minutes-seconds become "47.398500 N 8.546611 E", labelled ones ("lat 47.3985 lon
    8.5466") "47.3985, 8.5466".
    """
    def decimal(m: re.Match[str]) -> str:
        value = int(m.group(1)) + int(m.group(2)) / 60 + float(m.group(3) or 0) / 3600
        return f'{value:.6f} {m.group(4).upper()}'

    text = DMS.sub(decimal, text)
    if _LAT_LABEL.search(text) and _LON_LABEL.search(text):
        text = _LON_LABEL.sub(', ', _LAT_LABEL.sub('', text))
    return text


def number_value(text: str) -> float:
    """A number as written: '1,000' -> 1000.0, '1,5' -> 1.5, '−3' -> -3.0 (see NUMBER)."""
    text = text.replace('−', '-')
    if _THOUSANDS.fullmatch(text):
        return float(text.replace(',', ''))
    return float(text.replace(',', '.'))


_number = number_value


def _refuse(text: str, reason: str) -> Unreadable:
    return Unreadable(text=text, reason=reason)


@dataclass(frozen=True)
class _Text:
    """One condition being read: as given, normalised, its connective and its context."""

    raw: str
    low: str
    lead: str
    sensors: tuple[str, ...]
    places: Mapping[str, Place]
    before: str  # what the request says before the condition (for a pronoun's referent)


_BATTERY_FRACTION = re.compile(r'\b(?:three\s+quarters|3\s+quarters)\b|\b(?:a\s+)?quarter\b|'
                               r'\bhalf\b', re.I)


def _normalise(body: str) -> str:
    """Lower case; numbers in words as digits; zero, freezing and fractions of a charge."""
    low = body.lower().replace('’', "'").rstrip(' .!?')
    low = re.sub(r'\bsub[- ]?zero\b', 'below zero', low)
    low = re.sub(r'\b(below|under|than|to|past|reaches|hits|at)\s+(?:the\s+)?freezing'
                 r'(?:\s+point)?\b', r'\1 0 freezing', low)
    low = digits(low)
    low = re.sub(r'(\d)\s*\+(?=\s|$)', r'\1 or more', low)  # "2+ people": at least 2
    if re.search(r'\b(?:battery|batt?|charge|pack|juice)\b', low):
        low = _BATTERY_FRACTION.sub(lambda m: '75%' if m.group(0).startswith(('three', '3'))
                                    else '25%' if 'quarter' in m.group(0) else '50%', low)
    return low


# "is the light on? if so, ...": a condition on the answer to the question before it
_ANSWERS = frozenset({'so', 'yes', 'no', 'not'})


def _referent_text(request: str, condition: str) -> str:
    """The part of ``request`` before ``condition`` ('' when the condition is not found)."""
    if not request:
        return ''
    low, cond = request.lower(), condition.lower()
    at = low.find(cond)
    if at < 0:
        words = cond.split()
        for n in (4, 3, 2):
            at = low.find(' '.join(words[:n])) if len(words) >= n else -1
            if at >= 0:
                break
    return digits(request[:at]) if at > 0 else ''


def parse_condition(text: str, context_sensors: tuple[str, ...] | list[str] = (),
                    places: Mapping[str, Place] | None = None, request: str = '') -> Parsed:
    """Read one gating condition; ``context_sensors`` = the request's other selected tools.

    ``places`` are the named points an arrival may name (:mod:`tool_router.common.places`);
    ``request`` is the whole request, where a pronoun ("when it drops below 25%") finds the
    quantity it stands for. A condition without a named quantity takes it from what the request
    named before the condition, else from ``context_sensors``, when exactly one fits the unit.
    """
    raw = ' '.join(decimal_coordinates(text).split())
    if not raw:
        return _refuse(text, 'empty condition')
    held = _HELD.search(raw)
    if held and held.start() > 0:  # "if the link is lost for 5 s": a reading held that long
        inner = parse_condition(raw[:held.start()], context_sensors, places, request)
        if isinstance(inner, Predicate) and inner.sensor != CLOCK:
            parts = _TIME_PART.findall(held.group('d'))
            seconds = sum(_number(n) * TIME_UNITS[u.lower()] for n, u in parts)
            if seconds <= 0:
                return _refuse(text, 'a time to hold for must be positive')
            return inner.model_copy(update={'text': raw, 'held_s': float(seconds)})
    if INVERTED.match(raw):
        word = raw.split()[0].lower()
        if word == 'as':
            word = 'as long as'
        return _refuse(text, f'"{word}" conditions are not executed (only when/if/once/as soon '
                             'as/after: the action runs when the condition becomes true)')
    lead_match = LEAD.match(raw)
    lead = ' '.join(lead_match.group(1).lower().split()) if lead_match else ''
    body = raw[lead_match.end():] if lead_match else raw
    low = _normalise(body)
    if low in _ANSWERS:
        return _refuse(text, f'"{raw.lower()}" waits on the answer to a question, which is not '
                             'executed: ask first, then give the order, or say what to wait for')
    if NEGATED.search(low):
        return _refuse(text, 'negated conditions are not executed; say what to wait for '
                             '(e.g. "when the battery drops below 25%")')
    if len(joined_parts(low)) > 1:
        return _refuse(text, 'one condition per action: combined conditions (and/or) are not '
                             'executed')
    unknown = _UNKNOWN_UNIT.search(low)
    if unknown:
        return _refuse(text, f'unit {unknown.group(1)!r} is not read: give m, ft, km, m/s, km/h, '
                             'knots, mph, °C, °F, %, V, dBm, ms or ppm')
    waypoint = WAYPOINT.search(low)
    if waypoint and not any(name.lower() in low for name in (places or {})):
        return _waypoint(raw, low, waypoint)
    if SEA_LEVEL.search(low):
        return _refuse(text, 'an altitude above sea level (MSL) is not compared: the altitude '
                             'sensor reads above the launch point, whose elevation is not known '
                             'here; give the altitude above the launch point')
    t = _Text(raw, low, lead, tuple(context_sensors), places or {},
              _referent_text(request, body) if PRONOUN.match(low) else '')
    parsers: tuple[Callable[[_Text], Optional[Parsed]], ...] = (
        _clock, _elapsed, _state, _detection, _place, _distance, _numeric)
    for parse in parsers:
        result = parse(t)
        if result is not None:
            return result
    if VAGUE.search(low):
        return _refuse(text, 'no threshold: say a number and unit (e.g. "if the wind exceeds '
                             '12 m/s")')
    return _refuse(text, 'no known quantity, state or detection in the condition')


# -- a mission's waypoint ----------------------------------------------------------------------
# "at waypoint 4", "when we hit WP 5", "once past wp3", "after waypoint four": the mission's item
# reached, numbered as a ground station shows them (the first item is 1, home is not one);
# vehicle_state.waypoint is the last item reached (docs/EXECUTOR.md, "Conditions")
_WAYPOINT_WORDS = frozenset((
    'we', 'you', 'it', 'i', 'the', 'drone', 'vehicle', 'uav', 'aircraft', 'copter', 'quad', 'are',
    'is', 're', "we're", "you're", "it's", 's', 'get', 'gets', 'got', 'to', 'reach', 'reaches',
    'reached', 'reaching', 'hit', 'hits', 'hitting', 'arrive', 'arrives', 'arrived', 'arriving',
    'at', 'pass', 'passes', 'passed', 'passing', 'past', 'make', 'makes', 'made', 'complete',
    'completes', 'completed', 'finish', 'finishes', 'finished', 'after', 'upon', 'on', 'has',
    'have', 'been', 'mission', 'route', 'number', 'no', 'item', 'there', 'over', 'done', 'with',
    'gotten', 'comes', 'come', 'up', 'next'))


def _waypoint(raw: str, low: str, m: re.Match[str]) -> Parsed:
    number = waypoint_number(m.group(0))
    rest = re.findall(r"[a-z']+|\d+", f'{low[:m.start()]} {low[m.end():]}')
    if number < 1 or any(word not in _WAYPOINT_WORDS for word in rest):
        return _refuse(raw, "only reaching a mission's waypoint is watched (\"at waypoint 4\", "
                            '"once past wp 3"): the executor knows which item the mission has '
                            'reached, not where a waypoint is or what happens near it')
    return Predicate(text=raw, quantity='mission waypoint', sensor='vehicle_state',
                     field='waypoint', op='>=', threshold=float(number),
                     written=' '.join(m.group(0).split()))


# -- time ------------------------------------------------------------------------------------
_CLOCK_TIME = re.compile(
    r"(?:it(?:'s| is)\s+)?(?:at\s+)?(?:"
    r'(?P<h1>\d{1,2})[:h](?P<m1>\d{2})(?::\d{2})?(?:\s*(?P<ap1>[ap])\.?\s*m\b\.?)?|'
    r'(?P<h2>\d{1,2})\s*(?P<ap2>[ap])\.?\s*m\b\.?|'
    r'(?P<word>noon|midday|midnight)|'
    r"(?P<h3>\d{1,2})\s*o'?\s*clock|"
    r'(?P<h4>[01]\d|2[0-3])(?P<m4>[0-5]\d)(?:\s*(?:h|hrs|hours))?(?=\s|$))', re.I)
_CLOCK_OK = {'sharp', 'exactly', 'utc', 'z', 'gmt', 'today', 'hours', 'hrs', 'h', 'precisely'}
_CLOCK_PAST = {'yesterday', 'ago', 'earlier', 'last'}
_CLOCK_LATER = {'tomorrow', 'next', 'tonight'}


def _clock(t: _Text) -> Parsed | None:
    if re.fullmatch(r"(?:at\s+)?(?:sunset|sunrise|dusk|dawn|nightfall)(?:\s+[\w']+)*", t.low):
        return _refuse(t.raw, 'sunrise and sunset are not known to the executor: give a clock '
                              'time (UTC), e.g. "at 18:30"')
    m = _CLOCK_TIME.match(t.low)
    if m is None or (m.group('h4') and t.lead != 'at'):
        return None
    tail = re.findall(r"[\w']+", t.low[m.end():])
    if any(w in _CLOCK_PAST for w in tail):
        return _refuse(t.raw, 'a time in the past is never reached: give a time later today '
                              '(UTC) or a delay ("in 10 minutes")')
    if any(w in _CLOCK_LATER for w in tail):
        return _refuse(t.raw, 'only times of the current day (UTC) are executed: a watch does '
                              'not wait into another day')
    if 'local' in tail:
        return _refuse(t.raw, 'clock times are read in UTC; the executor does not know the local '
                              'time zone: give the time in UTC')
    if any(w not in _CLOCK_OK for w in tail):
        return None
    if m.group('h3'):
        return _refuse(t.raw, f"{m.group('h3')} o'clock: say am or pm, or a 24-hour time")
    if m.group('word'):
        hours, minutes = (0, 0) if m.group('word') == 'midnight' else (12, 0)
    else:
        hours = int(m.group('h1') or m.group('h2') or m.group('h4'))
        minutes = int(m.group('m1') or m.group('m4') or 0)
        half = (m.group('ap1') or m.group('ap2') or '').lower()
        if half:
            if not 1 <= hours <= 12:
                return _refuse(t.raw, f'{hours} {half}m is not a clock time')
            hours = hours % 12 + (12 if half == 'p' else 0)
    if hours > 23 or minutes > 59:
        return _refuse(t.raw, f'{hours}:{minutes:02d} is not a clock time')
    return Predicate(text=t.raw, quantity='clock time', sensor=CLOCK, field='clock_s', op='>=',
                     threshold=float(hours * 3600 + minutes * 60), unit='s',
                     written=f'{hours:02d}:{minutes:02d} UTC')


_TIME_PART = re.compile(rf'({NUMBER})\s*-?\s*({_TIME_ALT})\b', re.I)
_ELAPSED = re.compile(
    rf'(?:(?:after|in|for|wait(?:\s+for)?|give it)\s+)?'
    rf'(?:another\s+|about\s+|around\s+|roughly\s+)?'
    rf'({NUMBER}\s*-?\s*(?:{_TIME_ALT})\b(?:\s*(?:,\s*|and\s+)?{NUMBER}\s*-?\s*(?:{_TIME_ALT})\b)*)'
    rf'(?:\s+(?:have\s+|has\s+)?(?:passed|elapsed|gone by|'
    rf'from now|later|of\s+\w+ing(?:\s+[\w-]+){{0,3}}))?', re.I)
# "for 5 s", "for more than 10 seconds", "for 2 minutes straight" after a reading: it holds
# that long without a break
_HELD = re.compile(
    rf'\s+for\s+(?:(?:more|longer)\s+than\s+|over\s+|at\s+least\s+)?'
    rf'(?P<d>{NUMBER}\s*-?\s*(?:{_TIME_ALT})\b(?:\s*(?:,\s*|and\s+)?{NUMBER}\s*-?\s*'
    rf'(?:{_TIME_ALT})\b)*)(?:\s+(?:straight|in\s+a\s+row|continuously|or\s+(?:more|longer)))?'
    r'\s*$', re.I)
_VAGUE_TIME = re.compile(r'(?:(?:after|in|wait(?:\s+for)?|give it)\s+)?(?:a few|a couple(?: of)?|'
                         r'some|several|a while|a bit|a moment|a little while)\b', re.I)


def _elapsed(t: _Text) -> Parsed | None:
    m = _ELAPSED.fullmatch(t.low)
    if m is None:
        if (t.lead in ('after', 'wait', 'wait for', 'give it') or t.low.startswith('in ')) \
                and _VAGUE_TIME.match(t.low):
            return _refuse(t.raw, 'no duration: say how long (e.g. "in 30 seconds")')
        return None
    parts = _TIME_PART.findall(m.group(1))  # "2 min 30 s": the parts add up
    seconds = sum(_number(n) * TIME_UNITS[u.lower()] for n, u in parts)
    if seconds <= 0 or any(_number(n) <= 0 for n, _ in parts):
        return _refuse(t.raw, 'a waiting time must be positive')
    return Predicate(text=t.raw, quantity='time elapsed', sensor=CLOCK, field='elapsed_s',
                     op='>=', threshold=float(seconds), unit='s',
                     written=' '.join(f'{n} {u}' for n, u in parts))


# -- states, detections, places ----------------------------------------------------------------
def _state(t: _Text) -> Parsed | None:
    if t.lead in ('after', 'upon', 'on'):
        for pattern, sensor, field, value in AFTER_EVENTS:
            if re.fullmatch(pattern, t.low):
                return Predicate(text=t.raw, quantity=field.replace('_', ' '), sensor=sensor,
                                 field=field, op='==', threshold=value)
    if MEASURE.search(t.low) and not re.search(r'mission|survey|patrol', t.low):
        return None
    for pattern, sensor, field, value in STATES:
        if re.search(pattern, t.low):
            return Predicate(text=t.raw, quantity=field.replace('_', ' '), sensor=sensor,
                             field=field, op='==', threshold=value)
    return None


def _detected_in(text: str) -> list[tuple[Detected, re.Match[str]]]:
    found = []
    for d in DETECTIONS:
        for m in re.finditer(rf'\b(?:{d.words})\b', text):
            found.append((d, m))
    return sorted(found, key=lambda x: x[1].start())


def _detection(t: _Text) -> Parsed | None:
    measures = [m for m in MEASURE.finditer(t.low)]
    lengths = [m for m in measures if UNITS.get((m.group(2) or '').lower(), ('',))[0] == 'length']
    if lengths:
        m = lengths[0]
        head, tail = t.low[:m.start()], t.low[m.end():].strip()
        subjects = _detected_in(head)
        if not subjects and PRONOUN.match(t.low) and t.before:
            subjects = _detected_in(t.before.lower())[-1:]
            if subjects and _named(t.before.lower(), 'length'):
                return None  # "the wall ... if it gets within": an obstacle, not a detection
        if not subjects:
            return None
        away = bool(re.match(r'(?:away|off)\b', tail))
        tail = re.sub(r'^(?:away|off)\b\s*', '', tail)
        if tail and not re.fullmatch(r'(?:(?:away\s+)?(?:of|from|to)\s+)?' + SELF.pattern, tail):
            return None  # "within 20 m of the boat": a place, not a detection's distance
        kinds = {d.kind for d, _ in subjects}
        if len(kinds) > 1:
            return _refuse(t.raw, f'ambiguous detection: {", ".join(sorted(kinds))}')
        d = subjects[0][0]
        op = _proximity_op(head) or ('<=' if away else None)  # "a person 3 m away": at 3 m
        if op is None:
            return _refuse(t.raw, f'no comparison for the {d.kind} distance: say within / closer '
                                  'than / farther than')
        spec = UNITS[(m.group(2) or '').lower()]
        value = _number(m.group(1)) * spec[2]
        if value <= 0:
            return _refuse(t.raw, 'a distance must be positive')
        return Predicate(text=t.raw, quantity=f'{d.kind} distance', sensor='object_detector',
                         field=d.distance, op=op, threshold=round(value, 6), unit='m',
                         written=f'{m.group(1)} {m.group(2)}')
    if not DETECT_VERB.search(t.low) or any(m.group(2) for m in measures):
        return None
    found = _detected_in(t.low)
    if not found:
        return None
    d, noun = found[0]
    count = re.search(r'(?:(at least|more than|over|fewer than|less than|under)\s+)?(\d+)\s+'
                      r'(?:(or more|or fewer|or less)\s+)?(?:[a-z]+\s+)?$', t.low[:noun.start()])
    if count is None:
        if measures:
            return None
        return Predicate(text=t.raw, quantity=f'{d.count} detected', sensor='object_detector',
                         field=d.count, op='>=', threshold=1.0)
    n = float(count.group(2))
    word = count.group(1) or count.group(3) or ''
    how: Op = ('>' if word in ('more than', 'over') else '<' if word in ('fewer than', 'less than',
              'under') else '<=' if word in ('or fewer', 'or less') else '>=')
    if how in ('<', '<='):
        return _refuse(t.raw, 'fewer detections than a number is not watched (it holds while '
                              'nothing is seen): say how many to wait for')
    return Predicate(text=t.raw, quantity=f'{d.count} detected', sensor='object_detector',
                     field=d.count, op=how, threshold=n)


def _proximity_op(head: str) -> Op | None:
    symbol = SYMBOL.search(head)
    if symbol:
        got = SYMBOL_OP[symbol.group(1)]
        return got if got in ('<', '<=', '>', '>=') else None  # type: ignore[return-value]
    if re.search(r'\b(?:at most|no more than|not more than)\s*$', head):
        return '<='
    if re.search(r'\b(?:at least|no less than|not less than)\s*$', head):
        return '>='
    if re.search(r'\b(?:within|closer than|nearer than|less than|under|below|inside|fewer '
                 r'than)\s*$', head):
        return '<'
    if re.search(r'\b(?:farther than|further than|more than|beyond|over|above)\s*$', head):
        return '>'
    return None


_ARRIVE = re.compile(
    r"\b(?:reach(?:es|ed|ing)?|get(?:s|ting)?\s+(?:back\s+)?to|got\s+(?:back\s+)?to|"
    r"arriv(?:e|es|ed|ing)(?:\s+(?:at|in))?|(?:are|is|'re|'s|be|am|'m|were|was)\s+"
    r"(?:back\s+)?(?:at|over|above|near|by)|over|above|(?:come|comes|get|gets|are|'re|is|'s)"
    r"\s+back|(?:get|gets|getting|come|comes|are|is|'re|'s)\s+(?:near|close to|closer to|"
    r'next to))\s+(?P<place>.+)$')
_HOME_ARRIVAL = re.compile(
    r"(?:(?:we|you|it|the drone)(?:'re|'s| are| is| get| gets| got| come| comes)?\s+)?"
    r'(?:back\s+)?(?:at\s+)?(?:home|(?:the\s+)?(?:base|home base|launch point|launch site|'
    r'launch pad|launchpad))(?:\s+again)?')


def _place(t: _Text) -> Parsed | None:
    """An arrival without a distance: "when you reach the gate", "at 47.39, 8.54", "once home"."""
    if _HOME_ARRIVAL.fullmatch(t.low):
        return _arrival(t, 'home', None)
    if any(x.group(2) for x in MEASURE.finditer(t.low)):
        return None  # a measured distance or threshold: not an arrival without one
    m = _ARRIVE.search(t.low)
    if m is not None and _detected_in(t.low[:m.start()]):
        return None
    name = m.group('place').strip(' ,') if m else t.low if t.lead == 'at' else ''
    coords = COORD.fullmatch(name.strip('() '))
    if coords:
        lat, lon = _coordinates(coords)
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            return _refuse(t.raw, f'{lat}, {lon} is not a latitude, longitude')
        return Predicate(text=t.raw, quantity='distance', sensor='gps_position',
                         field='distance_m', op='<=', threshold=HOME_RADIUS_M, unit='m',
                         target=(lat, lon), written=f'{lat}, {lon}, within {HOME_RADIUS_M:g} m')
    if not name or re.fullmatch(NUMBER, name) or _comparison(name, '') not in (None, 'reach'):
        return None
    if any(re.search(rf'\b(?:{q.words})', name) for q in QUANTITIES) or ANGLE.search(name):
        return None
    return _arrival(t, name, None)


def _coordinates(m: re.Match[str]) -> tuple[float, float]:
    lat, lon = _number(m.group(1)), _number(m.group(3))
    if (m.group(2) or '').upper() == 'S':
        lat = -abs(lat)
    if (m.group(4) or '').upper() == 'W':
        lon = -abs(lon)
    return lat, lon


def _arrival(t: _Text, name: str, distance: tuple[Op, float, str] | None) -> Parsed:
    """The predicate "within the place's radius (or ``distance``) of ``name``", or a refusal."""
    if HOME_WORDS.fullmatch(name):
        target, label, radius = HOME, 'home', HOME_RADIUS_M
    else:
        place = t.places.get(place_key(name))
        if place is None:
            known = ', '.join(sorted({p.name for p in t.places.values()})) or 'none configured'
            return _refuse(t.raw, f'unknown place {name!r}: a condition may name home, the '
                                  f'places of the places file ({known}) or a latitude, '
                                  'longitude')
        target, label, radius = (place.lat, place.lon), place.name, place.radius_m
    op, metres, written = distance or ('<=', radius, f'{label}, within {radius:g} m')
    return Predicate(text=t.raw, quantity='distance', sensor='gps_position', field='distance_m',
                     op=op, threshold=round(metres, 6), unit='m', target=target, written=written)


_HOME_AWAY = re.compile(rf'(?:(?:the\s+)?(?:distance|range|dist)\s+(?:to|from)\s+)?'
                        rf'(?P<place>{HOME_WORDS.pattern})(?:\s+(?:is|gets|drops|falls|comes)\s+'
                        rf'(?P<cmp>[a-z ]*?)|\s*(?P<sym><=|>=|≤|≥|<|>))\s*(?P<n>{NUMBER})\s*'
                        rf'(?P<u>{_UNIT_ALT})?(?:\s+away)?$')
# "once 2 km out", "if we get more than 500 m away": far from home, the vehicle's only reference
# when nothing else is named (near something unnamed stays refused: "within 5 m" of what?)
_OUT = re.compile(r"^(?P<cmp>(?:(?:we|you|it|i|(?:the\s+)?(?:drone|vehicle|uav|aircraft))"
                  r"(?:'re|'s|'m)?(?:\s+(?:are|is|am|get|gets|got|go|goes))?\s+)?"
                  r'(?:more than|farther than|further than|over|beyond|at least|past)?)\s*'
                  rf'(?P<n>{NUMBER})\s*(?P<u>{_UNIT_ALT})?\s+'
                  r'(?:out|away)(?:\s+from\s+(?:here|us|me)|\s+now|\s+yet)?$')


def _distance(t: _Text) -> Parsed | None:
    low = t.low
    m = re.search(rf'(?<![\w.])(?P<n>{NUMBER})\s*(?P<u>{_UNIT_ALT})?\s+(?:away\s+)?'
                  r'(?:of|from|to)\s+(?P<place>.+)$', low)
    head = low[:m.start()] if m else ''
    if m is None:
        m = _HOME_AWAY.search(low)
        if m is None:
            return _out(t)
        head = m.group('cmp') or m.group('sym')
    place = m.group('place').strip()
    unit_word = (m.group('u') or '').lower()
    if unit_word and UNITS[unit_word][0] != 'length':
        return None  # "more than 10% of packets": not a distance
    coords = COORD.search(place)
    if SELF.fullmatch(place) and not coords:
        return None
    unit = UNITS.get(unit_word) if unit_word else ('length', 'm', 1.0, 0.0)
    if coords:
        lat, lon = _coordinates(coords)
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            return _refuse(t.raw, f'{lat}, {lon} is not a latitude, longitude')
    elif not HOME_WORDS.fullmatch(place) and place_key(place) not in t.places:
        for q in QUANTITIES:
            if q.dimension == 'length' and re.search(rf'\b(?:{q.words})', place):
                return _numeric(t)
        if _detected_in(place) and not re.match(r'(?:the|that|this)\s', place):
            return None
    if unit is None or unit[0] != 'length':
        return _refuse(t.raw, f'distance needs a length unit (m, ft, km), got {unit_word!r}')
    metres = _number(m.group('n')) * unit[2]
    if metres <= 0:
        return _refuse(t.raw, 'a distance must be positive')
    op = _point_op(head)
    written = f"{m.group('n')} {unit_word}".strip()
    if coords:
        return Predicate(text=t.raw, quantity='distance', sensor='gps_position',
                         field='distance_m', op=op, threshold=round(metres, 6), unit='m',
                         target=(lat, lon), written=written)
    return _arrival(t, place, (op, metres, written))


_FAR: dict[str | None, Op] = {None: '>=', 'reach': '>=', '>': '>', '>=': '>='}


def _out(t: _Text) -> Parsed | None:
    """Far from home with nothing else named: "once 2 km out", "more than 500 m away"."""
    m = _OUT.search(t.low)
    if m is None or not m.group('u'):
        return None  # only the vehicle is far ("the gate is 50 m away" names a place, "an
        # obstacle is 2 m away" a reading); a length is written ("hotter than 35 out")
    unit = UNITS[m.group('u').lower()]
    op = _comparison(m.group('cmp'), '')
    far = _FAR.get(op)
    if unit[0] != 'length' or far is None:
        return None  # closer than something unnamed: refused by the numeric reading
    metres = _number(m.group('n')) * unit[2]
    return _arrival(t, 'home', (far, metres, f"{m.group('n')} {m.group('u')} from home"))


_POINT_SYMBOL: dict[str, Op] = {'<': '<', '<=': '<=', '>': '>', '>=': '>='}


def _point_op(head: str) -> Op:
    """The comparison of a distance's head: a symbol it ends with, else its words."""
    symbol = SYMBOL.search(head.strip())
    if symbol and SYMBOL_OP[symbol.group(1)] in _POINT_SYMBOL:  # ">= 500 m from home"
        return _POINT_SYMBOL[SYMBOL_OP[symbol.group(1)]]
    if re.search(r'\b(?:at least|no less than|or more)\b', head):
        return '>='
    if re.search(r'\b(?:more than|farther|further|beyond|over|greater than)\b|>', head):
        return '>'
    if re.search(r'\b(?:closer than|nearer than|less than|under|below|fewer than)\b|<', head):
        return '<'
    return '<='  # within, at most, "50 m from home"


# -- numeric -----------------------------------------------------------------------------------
def _spans(text: str, quantities: tuple[Quantity, ...] = QUANTITIES) -> dict[str, tuple[int, int]]:
    return {q.name: found.span() for q in quantities
            if (found := re.search(rf'\b(?:{q.words})', text))}


def _specific(spans: dict[str, tuple[int, int]]) -> list[Quantity]:
    """The quantities named, the most specific words winning ("esc temp" over "temp")."""
    return [q for q in QUANTITIES if q.name in spans and not any(
        o != q.name and s[0] <= spans[q.name][0] and spans[q.name][1] <= s[1]
        and s != spans[q.name] for o, s in spans.items())]


def names_quantity(text: str) -> bool:
    """True when ``text`` names a quantity the grammar reads (battery, wind, escs, ...)."""
    low = text.lower()
    return bool(_spans(low)) or any(re.search(rf'\b(?:{p})\b', low) for p, _ in IMPLIED)


def watchable(text: str) -> bool:
    """True when ``when <text>`` reads as a predicate (used to tell a condition clause)."""
    return isinstance(parse_condition(f'when {text}'), Predicate)


def time_only(text: str) -> bool:
    """True when the condition ``text`` waits for the clock alone ("in 10 s", "at 14:30")."""
    parsed = parse_condition(text)
    return isinstance(parsed, Predicate) and parsed.sensor == CLOCK


def _named(text: str, dimension: str | None) -> list[Quantity]:
    named = _specific(_spans(text))
    return [q for q in named if dimension is None or q.dimension == dimension]


def _comparison(before: str, after: str) -> str | None:
    symbol = SYMBOL.search(before)
    if symbol:
        return SYMBOL_OP[symbol.group(1)]
    op = next((o for pattern, o in COMPARISONS
               if re.search(rf'(?:^|\W)(?:{pattern})(?:\W|$)', before)), None)
    if op is None and re.match(r'\s*(?:above (?:the )?ground|agl|high|up)\b', after):
        op = '>='  # "when the drone is 200 ft above ground": the height, reached
    if op is None and _LEVEL_VERB.search(before) and not _LEVEL_NOT.match(after):
        op = 'reach'  # "when the battery is 20%", "once the altitude reads 50 m": a level
    if op is None and sensed_level(before) and not _LEVEL_NOT.match(after):
        op = 'reach'  # "batt 20% -> land": a sensed quantity's name, then its level
    return op


_OWNER = re.compile(r"^(?:the|my|our|its|your)\s+")
_SET_BY_ORDERS = frozenset({'altitude', 'speed'})  # "altitude 50 m" is an order, not a level


def sensed_level(name: str) -> bool:
    """True when ``name`` is only the name of a quantity no order sets.

    "batt", "the wind", "esc temp": followed by a number it is that quantity's level ("batt
    20%"); "altitude 50 m" and "speed 5" are orders.
    """
    words = _OWNER.sub('', name.strip().lower())
    if not words or words in ('left', 'remaining'):  # "left 2 m": a move
        return False
    spans = _spans(words)
    named = _specific(spans)
    if not named or any(q.name in _SET_BY_ORDERS for q in named):
        return False
    covered = sorted(spans[q.name] for q in named)
    rest = words
    for a, b in reversed(covered):
        rest = rest[:a] + ' ' * (b - a) + rest[b:]
    return not rest.strip()


# a level written with its verb alone ("the battery is 20%"); a time after the number is no
# level of the quantity ("the battery is 20 minutes from empty" stays refused)
_LEVEL_VERB = re.compile(r"(?:(?:^|\W)(?:is|are|was|reads?|shows?)|[a-z]'s)\s*$")
_LEVEL_NOT = re.compile(r'\s*(?:minutes?|mins?|seconds?|secs?|hours?|hrs?|h|s|from|away|'
                        r'left|remaining|to\s+go)\b')


def _numeric(t: _Text) -> Parsed | None:
    low = t.low
    measures = list(MEASURE.finditer(low))
    if not measures:
        return None
    if len(measures) > 1:
        return _refuse(t.raw, 'more than one number: one threshold per condition')
    if ANGLE.search(low):
        return _refuse(t.raw, 'headings, attitude and other angles are not watchable (no sensor '
                              'field reports them to conditions)')
    m = measures[0]
    number, unit_word = _number(m.group(1)), (m.group(2) or '').lower()
    before, after = low[:m.start()], low[m.end():]
    op = _comparison(before, after)
    if op is None and (not before.strip() or t.lead == 'at'
                       or re.match(r'\s*(?:left|remaining)\b', after)):
        op = 'reach'  # the threshold first: "20% battery", "at 15% battery", "35% left"
    if op is None:
        return _refuse(t.raw, 'no comparison: say above/below/exceeds/drops below/reaches')
    rest = before + ' ' + after
    spec = UNITS.get(unit_word) if unit_word else None
    zero = bool(re.search(r'\bzero\b|\bfreezing\b', t.raw.lower())) and number == 0
    dimension = spec[0] if spec else 'temperature' if zero else None
    named = _specific(_spans(rest))
    if not named:
        for pattern, name in IMPLIED:
            if re.search(rf'\b(?:{pattern})\b', rest):
                named = [BY_NAME[name]]
    if dimension is None and re.search(r'\b(?:hotter|colder|warmer|cooler)\b', rest):
        dimension = 'temperature'
    if named:
        fitting = [q for q in named if dimension is None or q.dimension == dimension]
        if not fitting:
            names = ', '.join(q.name for q in named)
            shown = SHOWN.get(unit_word, unit_word) or 'degrees'
            return _refuse(t.raw, f'unit {shown!r} does not fit {names}')
        named = fitting
    else:
        found = _unnamed(t, dimension, before, unit_word, number)
        if isinstance(found, Unreadable):
            return found
        named = found
    if len({q.name for q in named}) > 1:
        names = ', '.join(sorted({q.name for q in named}))
        return _refuse(t.raw, f'ambiguous quantity: {names}')
    q = named[0]
    if q.name == 'pack voltage' and re.search(r'\bcells?\b|per cell', low):
        return _refuse(t.raw, 'cell voltages are not reported: give the pack voltage')
    written = f'{m.group(1)} {SHOWN.get(unit_word, unit_word)}'.strip()
    if spec is None:
        bare = BARE_UNIT[q.dimension]
        spec = (q.dimension, bare, 1.0, 0.0)
        if not q.bare[0] <= number <= q.bare[1]:
            return _refuse(t.raw, f'{m.group(1)} without a unit is not a plausible {q.name} in '
                                  f'{bare or "its unit"}: write the unit')
        if bare:
            written = f'{m.group(1)}, no unit: read as {bare}'
    value = number * spec[2] + spec[3]
    final = _final_op(op, q, value, before)
    if isinstance(final, Unreadable):
        return _refuse(t.raw, final.reason)
    if q.dimension == 'percent' and not 0 <= value <= 100:
        return _refuse(t.raw, f'{number:g} % is outside 0-100 %')
    # "when it's 2 m off the ground, release the load" is said on the way down as often as
    # "when you reach 50 m" on the way up: an altitude reached without a direction is reached
    # from wherever the vehicle is when the watch starts (Predicate.either_side)
    either = (op == 'reach' and q.name == 'altitude'
              and not (_FALLING.search(before) or _RISING.search(before)))
    return Predicate(text=t.raw, quantity=q.name, sensor=q.sensor, field=q.field,
                     op=final, threshold=round(value, 6), unit=spec[1], written=written,
                     either_side=either)


def _unnamed(t: _Text, dimension: str | None, before: str, unit_word: str,
             number: float) -> list[Quantity] | Unreadable:
    """The quantity of a condition that names none: referent, context, or a default.

    A pronoun's referent (what the request named before the condition) comes first, then the
    request's other sensors; for a number without a unit, only the quantities it is a
    plausible value of count.
    """
    def fits(q: Quantity) -> bool:
        return q.dimension == dimension if dimension else q.bare[0] <= number <= q.bare[1]

    if t.before:  # a pronoun: what the request named before the condition
        named = [q for q in _named(t.before.lower(), None) if fits(q)]
        if len({q.name for q in named}) == 1:
            return named
    named = [q for q in QUANTITIES if q.sensor in t.sensors and fits(q)]
    if named and (dimension or len({q.name for q in named}) == 1):
        return named
    if dimension is None and number < 0 and not named and \
            BY_NAME['air temperature'].bare[0] <= number:
        dimension = 'temperature'  # "if it gets below -5": below zero is the weather's
    if dimension is None:
        return _refuse(t.raw, 'no quantity named and no unit to infer it from')
    if dimension == 'percent' and not PRONOUN.match(t.low):
        return [BY_NAME['battery']]  # "at 20%", "land at twenty percent": the charge
    of_dimension = [q for q in QUANTITIES if q.dimension == dimension]
    if len(of_dimension) == 1:  # V, dBm, ms, NDVI: one quantity has the unit
        return of_dimension
    if dimension == 'length':
        if re.search(r'\b(?:within|closer|nearer|away|from|of|distance|range)\b',
                     before + ' ' + t.low):
            return _refuse(t.raw, 'a distance to what? name the obstacle, a detected person, '
                                  'vehicle or animal, home or a point (a proximity is never '
                                  'read as the altitude)')
        return [BY_NAME['altitude']]  # "once we're above 30 m": height is the default length
    if dimension == 'temperature':
        subject = re.search(r"\b(?:the|a|an|any|that|this)\s+([a-z]+)(?:'s)?\s|\b([a-z]+)'s\s",
                            before)
        noun = (subject.group(1) or subject.group(2)) if subject else ''
        if noun in ('it', 'that', 'there', 'what', 'here', 'he', 'she', 'who'):
            noun = ''  # "if it's colder than 0": the weather, not a thing's surface
        if noun in ('drone', 'vehicle', 'uav', 'aircraft', 'copter', 'battery'):
            return _refuse(t.raw, f'which temperature of the {noun}? name the motors (ESCs) or '
                                  'the air')
        if noun and noun not in ('air', 'weather', 'day', 'temperature', 'temp'):
            return [BY_NAME['surface temperature']]  # "if the roof gets hotter than 60"
        return [BY_NAME['air temperature']]  # "if it drops below zero": the weather
    shown = SHOWN.get(unit_word, unit_word) or dimension
    return _refuse(t.raw, f'no quantity named, and no sensor of this request measures '
                          f'{dimension} ({shown})')


_FALLING = re.compile(r'\b(?:drops?|falls?|down|dips?|sinks?|decreases?)\b')
_RISING = re.compile(r'\b(?:rises?|climbs?|up|increases?|grows?)\b')


def _final_op(op: str, q: Quantity, value: float, before: str) -> Op | Unreadable:
    if op in ('worse', 'better'):
        if q.worse is None:
            return Unreadable(text='', reason=f'"{op} than" says no direction for {q.name}: '
                                              'say above or below')
        if op == 'worse':
            return q.worse
        return '>' if q.worse == '<' else '<'
    if op == 'down_to':
        return '<='
    if op == 'up_to':
        return '>='
    if op == 'reach':
        if _FALLING.search(before):
            return '<='
        if _RISING.search(before):
            return '>='
        falls = q.falls if q.falls is not None else value <= 0
        return '<=' if falls else '>='
    return {'<': '<', '>': '>', '<=': '<=', '>=': '>='}[op]  # type: ignore[return-value]


def sensors_of(parsed: Parsed) -> list[str]:
    """Catalog sensor tools a predicate reads (none for clock conditions or refusals)."""
    if isinstance(parsed, Predicate) and parsed.sensor != CLOCK:
        return [parsed.sensor]
    return []


def condition_notes(tools: list[str], conditions: dict[str, str],
                    places: Mapping[str, Place] | None = None, request: str = '') -> list[str]:
    """One line per conditional tool: what the executor will watch, or why it will not arm it.

    The router puts these in its service response, so the caller learns at once that a
    condition cannot be executed (the executor traces the same reason).
    """
    notes = []
    for tool in tools:
        text = conditions.get(tool, '')
        if not text:
            continue
        parsed = parse_condition(text, [t for t in tools if t != tool], places, request)
        if isinstance(parsed, Predicate):
            notes.append(f'{tool} waits for {parsed.describe()}')
        else:
            notes.append(f'{tool} will not be armed: condition {text!r} not executable: '
                         f'{parsed.reason}')
    return notes
