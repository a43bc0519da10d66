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

The grammar (one quantity, one comparison, one threshold; see docs/EXECUTOR.md):

* numeric: ``[when|if|once|as soon as|whenever] <quantity> <comparison> <number><unit>``,
  e.g. "when the battery drops below 25%", "if the wind exceeds 15 knots",
  "once we're above 100 ft"; a pronoun ("when it drops below 25%") takes its
  quantity from the request's other sensors when exactly one of them fits the unit;
* distance: "when we are within 50 m of home", "... of 47.398, 8.546";
* time: "after 30 seconds", "in 2 minutes", "at 14:30" (UTC);
* vehicle state: "once the mission is finished", "when it has landed", "once airborne";
* detections: "when you see a person", "if a car shows up";
* link: "if we lose the link".

Refused (``Unreadable``): no threshold ("if it gets too windy"), a unit that
does not fit the quantity ("battery below 20 m"), an ambiguous quantity, two
conditions joined by and/or, negated or inverted connectives (unless, until,
not), rates ("falls quickly").
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

READING_PREFIX = 'reading: '
HOME = (47.3977, 8.5456)  # the simulated launch point; "home" in distance conditions
CLOCK = 'clock'  # pseudo-sensor for time conditions: read by the watch manager itself

Op = Literal['<', '<=', '>', '>=', '==']


@dataclass(frozen=True)
class Quantity:
    """A measurable quantity: which sensor reports it, under which field, in which unit."""

    name: str
    sensor: str
    field: str
    dimension: str  # percent | length | speed | temperature | time | signal | ppm
    words: str  # regex of words naming the quantity
    falls: bool = False  # "reaches X" means "drops to X" (battery)


QUANTITIES: tuple[Quantity, ...] = (
    Quantity('battery', 'battery_status', 'battery_pct', 'percent',
             r'battery|charge|state of charge|power level|juice', falls=True),
    Quantity('altitude', 'altitude_sensor', 'altitude_m', 'length',
             r'altitude|height|agl|climb\w*|descend\w*'),
    Quantity('speed', 'velocity_estimate', 'speed_mps', 'speed',
             r'(?<!wind )speed|velocity|faster|slower|going'),
    Quantity('wind', 'wind_estimate', 'wind_mps', 'speed', r'wind(?!\s+gust)|breeze'),
    Quantity('gusts', 'wind_estimate', 'gust_mps', 'speed', r'gusts?'),
    Quantity('air temperature', 'weather_sensor', 'air_temp_c', 'temperature',
             r'(?:air\s+)?temperature|outside|it gets (?:colder|warmer)'),
    Quantity('humidity', 'weather_sensor', 'humidity_pct', 'percent', r'humidity'),
    Quantity('motor temperature', 'motor_status', 'esc_temp_c', 'temperature',
             r'motors?|escs?|esc temperature|motor temperature'),
    Quantity('surface temperature', 'thermal_camera', 'max_temp_c', 'temperature',
             r'surface temperature|hot ?spot|heat'),
    Quantity('signal strength', 'link_quality', 'rssi_dbm', 'signal',
             r'signal|rssi|link quality|link strength'),
    Quantity('packet loss', 'link_quality', 'packet_loss_pct', 'percent', r'packet loss'),
    Quantity('link latency', 'link_quality', 'latency_ms', 'time_ms', r'latency|lag'),
    Quantity('obstacle distance', 'obstacle_proximity', 'nearest_m', 'length',
             r'obstacles?|anything|something|wires?|branch|trees?|walls?|props|propellers'),
    Quantity('geofence margin', 'geofence_monitor', 'margin_m', 'length',
             r'geofence|fence|boundary|no-fly zone|no fly zone'),
    Quantity('co', 'air_quality_sensor', 'co_ppm', 'ppm', r'\bco\b|carbon monoxide'),
    Quantity('methane', 'air_quality_sensor', 'ch4_ppm', 'ppm', r'methane|ch4'),
    Quantity('ndvi', 'multispectral_camera', 'ndvi', 'ratio', r'ndvi|vegetation index'),
)
BY_NAME = {q.name: q for q in QUANTITIES}

# unit word -> (dimension, canonical unit, factor, offset): canonical = value * factor + offset
UNITS: dict[str, tuple[str, str, float, float]] = {}
for _words, _spec in (
    (('%', 'percent', 'per cent', 'pct'), ('percent', '%', 1.0, 0.0)),
    (('m', 'metre', 'metres', 'meter', 'meters'), ('length', 'm', 1.0, 0.0)),
    (('ft', 'foot', 'feet'), ('length', 'm', 0.3048, 0.0)),
    (('km', 'kilometre', 'kilometres', 'kilometer', 'kilometers'), ('length', 'm', 1000.0, 0.0)),
    (('m/s', 'mps', 'metres per second', 'meters per second'), ('speed', 'm/s', 1.0, 0.0)),
    (('km/h', 'kph', 'kmh', 'kilometres per hour', 'kilometers per hour'),
     ('speed', 'm/s', 1 / 3.6, 0.0)),
    (('knots', 'knot', 'kt', 'kts', 'kn'), ('speed', 'm/s', 0.514444, 0.0)),
    (('mph', 'miles per hour'), ('speed', 'm/s', 0.44704, 0.0)),
    (('°c', 'degc', 'c', 'degrees celsius', 'celsius', 'degrees c'),
     ('temperature', '°C', 1.0, 0.0)),
    (('°f', 'degf', 'f', 'fahrenheit', 'degrees fahrenheit', 'degrees f'),
     ('temperature', '°C', 5 / 9, -32 * 5 / 9)),
    (('dbm',), ('signal', 'dBm', 1.0, 0.0)),
    (('ms', 'milliseconds', 'millisecond'), ('time_ms', 'ms', 1.0, 0.0)),
    (('ppm',), ('ppm', 'ppm', 1.0, 0.0)),
):
    for _w in _words:
        UNITS[_w] = _spec
SHOWN = {'°c': '°C', 'degc': '°C', 'c': '°C', '°f': '°F', 'degf': '°F', 'f': '°F',
         'dbm': 'dBm'}
TIME_UNITS = {'s': 1.0, 'sec': 1.0, 'secs': 1.0, 'second': 1.0, 'seconds': 1.0,
              'min': 60.0, 'mins': 60.0, 'minute': 60.0, 'minutes': 60.0,
              'h': 3600.0, 'hr': 3600.0, 'hrs': 3600.0, 'hour': 3600.0, 'hours': 3600.0}
# The unit a bare number is read in, per dimension (only where nothing else is plausible).
BARE_UNIT = {'percent': '%', 'ratio': '', 'signal': 'dBm', 'ppm': 'ppm'}

LEAD = re.compile(r'^(?:as soon as|in case|in the event that|provided that|whenever|once|when|'
                  r'if|after|in)\b\s*', re.I)
INVERTED = re.compile(r'^(?:unless|until|till|while|before)\b', re.I)
NEGATED = re.compile(r"\b(?:not|never|no longer|isn'?t|aren'?t|doesn'?t|don'?t|won'?t)\b", re.I)
JOINED = re.compile(r'\b(?:and|or|but)\b', re.I)
NUMBER = r'[-+−]?\d+(?:[.,]\d+)?'
_UNIT_ALT = '|'.join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True))
MEASURE = re.compile(rf'({NUMBER})\s*({_UNIT_ALT})?(?![\w/])', re.I)
COORD = re.compile(rf'({NUMBER})\s*°?\s*[NS]?\s*[,;/ ]\s*({NUMBER})\s*°?\s*[EW]?', re.I)
VAGUE = re.compile(r'\b(?:low|high|too|strong|weak|quickly|fast|slowly|bad|good|gets? '
                   r'(?:worse|better)|thicker|stressed|looks?)\b', re.I)

# comparison words, checked in this order (longest first where they overlap)
COMPARISONS: tuple[tuple[str, str], ...] = (
    (r'at least|no less than|not less than|or more', '>='),
    (r'at most|no more than|not more than|or less', '<='),
    (r'within|closer than|nearer than', '<'),
    (r'farther than|further than|beyond', '>'),
    (r'(?:drops?|dropped|falls?|fell|goes|gone|gets?|is|are|\'s|\'re|decreases?|sinks?|'
     r'dips?|slows?)\s+(?:down\s+)?(?:below|under|beneath|less than|lower than|to)', '<'),
    (r'(?:rises?|rose|climbs?|goes|gets?|is|are|\'s|\'re|increases?|picks? up|grows?|'
     r'speeds? up)\s+(?:up\s+)?(?:above|over|beyond|more than|higher than|past|to)', '>'),
    (r'below|under|beneath|less than|lower than|slower than|colder than|fewer than|<', '<'),
    (r'above|over|exceeds?|exceeding|more than|higher than|greater than|faster than|'
     r'warmer than|hotter than|tops|>', '>'),
    (r'reach(?:es|ed)?|hits?|gets? to|equals?', 'reach'),
)

STATES: tuple[tuple[str, str, str, Any], ...] = (
    # (pattern, sensor, field, expected value)
    (r'(?:mission|survey|patrol|route|flight plan)\s+(?:is\s+|has\s+)?'
     r'(?:done|finished|complete|completed|over|ended)|(?:finish|complete)\w*\s+the\s+'
     r'(?:mission|survey|patrol)', 'vehicle_state', 'mission', 'finished'),
    (r'\b(?:landed|touch(?:es|ed)? down|(?:is|it\'s|we\'re|are)\s+(?:down\s+)?on the ground|'
     r'down on the ground)', 'vehicle_state', 'on_ground', True),
    (r'\b(?:airborne|in the air|(?:has\s+)?taken off|took off|lifts? off)', 'vehicle_state',
     'on_ground', False),
    (r'\b(?:lose|lost|loses|drops?|dropped)\s+(?:the\s+)?(?:link|connection|radio|signal|'
     r'telemetry)|(?:link|connection|radio|signal|telemetry)\s+(?:is\s+)?(?:lost|drops|'
     r'goes down)', 'link_quality', 'link_lost', True),
    (r'\b(?:leave|leaves|left|exit|exits|cross|crosses|crossed|outside)\s+(?:of\s+)?'
     r'(?:the\s+)?(?:allowed area|geofence|fence|boundary)', 'geofence_monitor', 'inside',
     False),
)
DETECTIONS: tuple[tuple[str, str], ...] = (
    (r'person|people|someone|anyone|somebody|anybody|human|man|woman|child|swimmer|hiker',
     'persons'),
    (r'car|vehicle|truck|van|boat', 'vehicles'),
    (r'animal|deer|dog|cow|sheep|bird', 'animals'),
)
DETECT_VERB = re.compile(r'\b(?:see|sees|spot|spots|detect|detects|find|finds|notice|'
                         r'shows? up|appears?|enters?|comes? into view|is detected|'
                         r'are detected|is spotted|pick up)\b', re.I)


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

    def describe(self) -> str:
        """``battery_status.battery_pct < 25 %`` and, when converted, what was written."""
        value = self.threshold
        shown = (f'{value:g}' if isinstance(value, float) else json.dumps(value))
        unit = f' {self.unit}' if self.unit else ''
        where = f' of {self.target[0]:.5f},{self.target[1]:.5f}' if self.target else ''
        note = f' (written {self.written})' if self.written and self.written != \
            f'{shown}{unit}'.strip() else ''
        return f'{self.sensor}.{self.field}{where} {self.op} {shown}{unit}{note}'

    def value(self, reading: dict[str, Any]) -> float | bool | str:
        """The compared value taken from a reading; KeyError when the reading lacks it."""
        if self.target is not None:
            return distance_m(float(reading['lat']), float(reading['lon']), *self.target)
        return reading[self.field]  # type: ignore[no-any-return]

    def holds(self, reading: dict[str, Any]) -> bool:
        """True when the reading satisfies the predicate; KeyError/TypeError if unusable."""
        got = self.value(reading)
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


def _number(text: str) -> float:
    return float(text.replace(',', '.').replace('−', '-'))


def _refuse(text: str, reason: str) -> Unreadable:
    return Unreadable(text=text, reason=reason)


def parse_condition(text: str, context_sensors: tuple[str, ...] | list[str] = ()) -> Parsed:
    """Read one gating condition; ``context_sensors`` = the request's other selected tools.

    A condition without a named quantity ("when it drops below 25%") takes it from
    ``context_sensors`` when exactly one of their quantities fits the unit.
    """
    raw = ' '.join(text.split())
    if not raw:
        return _refuse(text, 'empty condition')
    if INVERTED.match(raw):
        word = raw.split()[0].lower()
        return _refuse(text, f'"{word}" conditions are not executed (only when/if/once/as soon '
                             'as/after: the action runs when the condition becomes true)')
    body = LEAD.sub('', raw, count=1)
    low = body.lower().rstrip(' .!')
    if NEGATED.search(low):
        return _refuse(text, 'negated conditions are not executed; say what to wait for '
                             '(e.g. "when the battery drops below 25%")')
    if JOINED.search(re.sub(r'\d+[.,]\d+\s*,\s*\d', '', low)):
        return _refuse(text, 'one condition per action: combined conditions (and/or) are not '
                             'executed')
    for parse in (_clock, _elapsed, _state, _detection, _distance, _numeric):
        result = parse(raw, low, tuple(context_sensors))
        if result is not None:
            return result
    if VAGUE.search(low):
        return _refuse(text, 'no threshold: say a number and unit (e.g. "if the wind exceeds '
                             '12 m/s")')
    return _refuse(text, 'no known quantity, state or detection in the condition')


def _clock(raw: str, low: str, ctx: tuple[str, ...]) -> Parsed | None:
    m = re.fullmatch(r'(?:it(?:\'s| is)\s+)?(?:at\s+)?(\d{1,2}):(\d{2})\s*(utc|z)?', low)
    if m is None:
        return None
    hours, minutes = int(m.group(1)), int(m.group(2))
    if hours > 23 or minutes > 59:
        return _refuse(raw, f'{hours}:{minutes:02d} is not a clock time')
    return Predicate(text=raw, quantity='clock time', sensor=CLOCK, field='clock_s', op='>=',
                     threshold=float(hours * 3600 + minutes * 60), unit='s',
                     written=f'{hours:02d}:{minutes:02d} UTC')


def _elapsed(raw: str, low: str, ctx: tuple[str, ...]) -> Parsed | None:
    units = '|'.join(sorted(TIME_UNITS, key=len, reverse=True))
    m = re.fullmatch(rf'(?:(?:after|in|wait)\s+)?({NUMBER})\s*({units})(?:\s+(?:have\s+|has\s+)?'
                     r'(?:passed|elapsed|gone by|from now|later))?', low)
    if m is None:
        m = re.fullmatch(rf'({NUMBER})\s*({units})\s+(?:have|has)\s+(?:passed|elapsed)', low)
    if m is None:
        return None
    seconds = _number(m.group(1)) * TIME_UNITS[m.group(2)]
    if seconds <= 0:
        return _refuse(raw, 'a waiting time must be positive')
    return Predicate(text=raw, quantity='time elapsed', sensor=CLOCK, field='elapsed_s',
                     op='>=', threshold=float(seconds), unit='s',
                     written=f'{m.group(1)} {m.group(2)}')


def _state(raw: str, low: str, ctx: tuple[str, ...]) -> Parsed | None:
    if MEASURE.search(low) and not re.search(r'mission|survey|patrol', low):
        return None
    for pattern, sensor, field, value in STATES:
        if re.search(pattern, low):
            return Predicate(text=raw, quantity=field.replace('_', ' '), sensor=sensor,
                             field=field, op='==', threshold=value)
    return None


def _detection(raw: str, low: str, ctx: tuple[str, ...]) -> Parsed | None:
    if not DETECT_VERB.search(low) or MEASURE.search(low):
        return None
    for pattern, field in DETECTIONS:
        if re.search(rf'\b(?:{pattern})s?\b', low):
            return Predicate(text=raw, quantity=f'{field} detected', sensor='object_detector',
                             field=field, op='>=', threshold=1.0)
    return None


def _distance(raw: str, low: str, ctx: tuple[str, ...]) -> Parsed | None:
    m = re.search(r'\b(?:within|closer than|nearer than|less than|under|more than|farther than|'
                  r'further than|beyond)?\s*(' + NUMBER + r')\s*(' + _UNIT_ALT + r')\s+'
                  r'(?:of|from|away from|to)\s+(.+)$', low)
    if m is None:
        return None
    place = m.group(3).strip()
    coords = COORD.search(place)
    if coords:
        lat, lon = _number(coords.group(1)), _number(coords.group(2))
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            return _refuse(raw, f'{lat}, {lon} is not a latitude, longitude')
        target = (lat, lon)
    elif re.fullmatch(r'(?:the\s+)?(?:home|home point|launch point|take-?off point|launch pad|'
                      r'start)', place):
        target = HOME
    else:
        for q in QUANTITIES:
            if q.dimension == 'length' and re.search(rf'\b(?:{q.words})', place):
                return _numeric(raw, low, ctx)
        return _refuse(raw, f'unknown point {place!r}: give "home" or a latitude, longitude')
    unit = UNITS.get(m.group(2))
    if unit is None or unit[0] != 'length':
        return _refuse(raw, f'distance needs a length unit (m, ft, km), got {m.group(2)!r}')
    metres = _number(m.group(1)) * unit[2]
    head = low[:m.start(1)]
    op: Op = '>' if re.search(r'more than|farther|further|beyond', head) else '<='
    return Predicate(text=raw, quantity='distance', sensor='gps_position', field='distance_m',
                     op=op, threshold=round(metres, 6), unit='m', target=target,
                     written=f'{m.group(1)} {m.group(2)}')


def _numeric(raw: str, low: str, ctx: tuple[str, ...]) -> Parsed | None:
    measures = list(MEASURE.finditer(low))
    if not measures:
        return None
    if len(measures) > 1:
        return _refuse(raw, 'more than one number: one threshold per condition')
    m = measures[0]
    number, unit_word = _number(m.group(1)), (m.group(2) or '').lower()
    before = low[:m.start()]
    op = next((o for pattern, o in COMPARISONS if re.search(rf'(?:^|\W)(?:{pattern})', before)),
              None)
    if op is None and re.match(r'\s*(?:above (?:the )?ground|agl|high|up)\b', low[m.end():]):
        op = '>='  # "when the drone is 200 ft above ground": the height, reached
    if op is None:
        return _refuse(raw, 'no comparison: say above/below/exceeds/drops below/reaches')
    rest = low[:m.start()] + ' ' + low[m.end():]
    spans = {q.name: found.span() for q in QUANTITIES
             if (found := re.search(rf'\b(?:{q.words})', rest))}
    # the most specific words win ("surface temperature" over "temperature")
    named = [q for q in QUANTITIES if q.name in spans and not any(
        o != q.name and s[0] <= spans[q.name][0] and spans[q.name][1] <= s[1]
        and s != spans[q.name] for o, s in spans.items())]
    spec = UNITS.get(unit_word) if unit_word else None
    dimension = spec[0] if spec else None
    if named:
        fitting = [q for q in named if dimension is None or q.dimension == dimension]
        if not fitting:
            names = ', '.join(q.name for q in named)
            return _refuse(raw, f'unit {unit_word!r} does not fit {names}')
        named = fitting
    else:
        if dimension is None:
            return _refuse(raw, 'no quantity named and no unit to infer it from')
        named = [q for q in QUANTITIES if q.dimension == dimension and q.sensor in ctx]
        if not named and dimension == 'length':
            named = [BY_NAME['altitude']]  # "once we're above 30 m": height is the default length
        if not named:
            return _refuse(raw, f'no quantity named, and no sensor of this request measures '
                                f'{dimension} ({unit_word})')
    if len({q.name for q in named}) > 1:
        names = ', '.join(sorted({q.name for q in named}))
        return _refuse(raw, f'ambiguous quantity: {names}')
    q = named[0]
    if spec is None:
        bare = BARE_UNIT.get(q.dimension)
        if bare is None:
            return _refuse(raw, f'{q.name} needs a unit (e.g. m, ft, m/s, knots, °C)')
        spec = UNITS.get(bare, (q.dimension, bare, 1.0, 0.0))
    final: Op
    if op == 'reach':
        final = '<=' if q.falls or re.search(r'drops?|falls?|down', before) else '>='
    else:
        final = {'<': '<', '>': '>', '<=': '<=', '>=': '>='}[op]  # type: ignore[assignment]
    value = number * spec[2] + spec[3]
    if q.dimension == 'percent' and not 0 <= value <= 100:
        return _refuse(raw, f'{number:g} % is outside 0-100 %')
    written = f'{m.group(1)} {SHOWN.get(unit_word, unit_word)}'.strip()
    return Predicate(text=raw, quantity=q.name, sensor=q.sensor, field=q.field,
                     op=final, threshold=round(value, 6), unit=spec[1], written=written)


def sensors_of(parsed: Parsed) -> list[str]:
    """Catalog sensor tools a predicate reads (none for clock conditions or refusals)."""
    if isinstance(parsed, Predicate) and parsed.sensor != CLOCK:
        return [parsed.sensor]
    return []


def condition_notes(tools: list[str], conditions: dict[str, str]) -> list[str]:
    """One line per conditional tool: what the executor will watch, or why it will not arm it.

    The router puts these in its service response, so the caller learns at once that a
    condition cannot be executed (the executor traces the same reason).
    """
    notes = []
    for tool in tools:
        text = conditions.get(tool, '')
        if not text:
            continue
        parsed = parse_condition(text, [t for t in tools if t != tool])
        if isinstance(parsed, Predicate):
            notes.append(f'{tool} waits for {parsed.describe()}')
        else:
            notes.append(f'{tool} will not be armed: condition {text!r} not executable: '
                         f'{parsed.reason}')
    return notes
