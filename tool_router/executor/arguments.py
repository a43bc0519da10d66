"""Arguments of parameterised tools, read from the request text (pure; no ROS, no MAVLink).

A router selection names tools, not numbers: "take off to 20 m and fly to
47.3990, 8.5470" selects ``takeoff`` and ``goto_waypoint``; the height and
the coordinates come from the request text. :func:`extract` finds, for one
tool, the action clause that talks about it (:func:`tool_router.common.clauses.split_clauses`;
condition clauses are never read, so "when within 50 m of 47.39, 8.54" gives
no goto target) and reads its values in canonical units.

Rules (docs/MAVLINK.md lists every tool):

* a required value that is not written is an :class:`ArgumentError` -- the tool is
  refused, nothing is sent; nothing is ever guessed (no default coordinate,
  no default altitude for ``set_altitude``);
* numbers may be written in words ("take off to twenty metres", "hover for half a minute":
  :func:`tool_router.common.numbers.digits`, as for conditions);
* lengths and speeds need a unit ("20 m", "100 ft", "5 m/s", "10 knots"): a bare
  "climb to 50" is refused, because metres and feet differ by a factor three;
* a heading is "270 degrees", "heading 270" or a compass word ("north-east");
* coordinates are a decimal latitude/longitude pair ("47.3990, 8.5470",
  "47.399 N 8.547 E"), both with a decimal point, inside [-90, 90] x [-180, 180];
* a duration is a number with a time unit ("for 30 s", "2 minutes"); an orbit radius a
  length next to the word "radius" ("30 m radius", "radius of 100 ft");
* when two clauses give a value for the same tool, the first is used.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from tool_router.common.clauses import split_clauses
from tool_router.common.errors import ToolRouterError
from tool_router.common.conditions import (MEASURE, NUMBER, SEA_LEVEL, TIME_UNITS, UNITS,
                                           decimal_coordinates, number_value)
from tool_router.common.numbers import digits

DECIMAL = r'[-+−]?\d{1,3}\.\d+'
COORDINATES = re.compile(
    rf'(?<![\d.])({DECIMAL})\s*°?\s*([NS])?\s*[,;/ ]\s*({DECIMAL})\s*°?\s*([EW])?(?![\d.])', re.I)
DEGREES = re.compile(rf'({NUMBER})\s*(?:°|deg\b|degs\b|degrees?\b)', re.I)
HEADING_BARE = re.compile(rf'\b(?:heading|bearing|yaw|course)\s+(?:of\s+|to\s+)?({NUMBER})\b'
                          r'(?!\s*(?:m\b|ft\b|%))', re.I)
COMPASS = {
    'north': 0.0, 'north-east': 45.0, 'northeast': 45.0, 'north east': 45.0, 'east': 90.0,
    'south-east': 135.0, 'southeast': 135.0, 'south east': 135.0, 'south': 180.0,
    'south-west': 225.0, 'southwest': 225.0, 'south west': 225.0, 'west': 270.0,
    'north-west': 315.0, 'northwest': 315.0, 'north west': 315.0,
}
COMPASS_RE = re.compile(r'\b(' + '|'.join(sorted((re.escape(w) for w in COMPASS),
                                                 key=len, reverse=True)) + r')\b', re.I)
PITCH_WORDS = ((re.compile(r'straight down|nadir|look(?:ing)? down|point(?:ing)? down|'
                           r'face down|downwards?', re.I), -90.0),
               (re.compile(r'forward|level|horizon|straight ahead', re.I), 0.0))
DOWN = re.compile(r'\bdown\w*|\bbelow\b', re.I)
DURATION = re.compile(rf'(?<![\w.])({NUMBER})\s*(seconds?|secs?|s|minutes?|mins?|hours?|hrs?|hr|h)'
                      r'(?![\w/])', re.I)
RADIUS_WORD = re.compile(r'\bradius\b', re.I)


class ArgumentError(ToolRouterError):
    """A required argument is not in the request (or not readable); the tool is refused."""


class ToolArguments(BaseModel):
    """Values read for one tool, in canonical units; None = not written."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    height_m: float | None = Field(None, description='Take-off height above the launch point.')
    altitude_m: float | None = Field(None, description='Altitude above the launch point.')
    heading_deg: float | None = Field(None, description='Heading, degrees from north, [0, 360).')
    speed_mps: float | None = Field(None, description='Ground speed in m/s.')
    lat: float | None = Field(None, description='Target latitude, degrees.')
    lon: float | None = Field(None, description='Target longitude, degrees.')
    pitch_deg: float | None = Field(None, description='Gimbal pitch, degrees (down < 0).')
    radius_m: float | None = Field(None, description='Orbit radius in metres.')
    duration_s: float | None = Field(None, description='How long, in seconds (hold, orbit).')
    source: str = Field('', description='The clause the values were read from.')


@dataclass(frozen=True)
class ArgSpec:
    """Which values a tool takes and which words name it in a clause."""

    required: tuple[str, ...]
    optional: tuple[str, ...]
    cue: str  # regex naming the tool in a clause


SPECS: dict[str, ArgSpec] = {
    'takeoff': ArgSpec((), ('height_m',),
                       r'take\s*-?\s*off|takeoff|launch|lift\s*off|airborne|get\s+up'),
    'set_altitude': ArgSpec(('altitude_m',), (),
                            r'altitude|height|climb|descend|ascend|go\s+(?:up|down)|'
                            r'fly\s+at|\bagl\b|rise|drop\s+to'),
    'set_heading': ArgSpec(('heading_deg',), (),
                           r'heading|yaw|fac(?:e|ing)|turn|rotate|bearing|point\s+(?:the\s+)?'
                           r'(?:nose|drone)'),
    'set_speed': ArgSpec(('speed_mps',), (),
                         r'speed|velocity|faster|slower|slow\s+down|knots|m/s|km/h|mph'),
    'goto_waypoint': ArgSpec(('lat', 'lon'), ('altitude_m', 'speed_mps'),
                             r'go\s+to|fly\s+(?:to|over)|head\s+(?:to|for)|move\s+to|waypoint|'
                             r'navigate|proceed|goto|coordinates?|position|reposition'),
    'gimbal_control': ArgSpec(('pitch_deg',), (),
                              r'gimbal|tilt|pitch|camera|look|point'),
    'hold_position': ArgSpec((), ('duration_s',),
                             r'hold|hover|loiter|stay|wait|pause|station'),
    'orbit_point': ArgSpec((), ('lat', 'lon', 'radius_m', 'duration_s', 'speed_mps'),
                           r'orbit|circl|go\s+around|fly\s+around|loiter\s+around'),
}


def takes_arguments(tool: str) -> bool:
    """Whether ``tool`` reads values from the request text."""
    return tool in SPECS


def extract(tool: str, text: str) -> ToolArguments:
    """Read ``tool``'s values from ``text``; ArgumentError when a required one is missing."""
    spec = SPECS.get(tool)
    if spec is None:
        return ToolArguments()
    clauses = _action_clauses(_spelled(decimal_coordinates(text)))
    cue = re.compile(spec.cue, re.I)
    named = [c for c in clauses if cue.search(c)]
    if tool == 'goto_waypoint':  # a coordinate pair names the move by itself
        named += [c for c in clauses if c not in named and COORDINATES.search(c)]
    candidates = named or (clauses if len(clauses) == 1 else [])
    values: dict[str, float] = {}
    source = ''
    problems: list[str] = []
    for clause in candidates:
        found, problem = _read(tool, clause)
        if problem:
            problems.append(problem)
        for key, value in found.items():
            if key not in values:
                values[key] = value
                source = source or clause
        if all(k in values for k in spec.required + spec.optional):
            break
    missing = [k for k in spec.required if k not in values]
    if missing:
        why = problems[0] if problems else (
            f'no clause of the request gives {_WHAT[missing[0]]}' if candidates else
            f'no clause of the request names {tool.replace("_", " ")}')
        raise ArgumentError(f'{tool} needs {_WHAT[missing[0]]}: {why}',
                            hint=_HINT[missing[0]])
    return ToolArguments(source=source, **values)


_WHAT = {'altitude_m': 'a target altitude', 'heading_deg': 'a heading',
         'speed_mps': 'a speed', 'lat': 'coordinates', 'lon': 'coordinates',
         'pitch_deg': 'a gimbal pitch', 'height_m': 'a height', 'radius_m': 'a radius',
         'duration_s': 'a duration'}
_HINT = {'altitude_m': "say it with a unit, e.g. 'climb to 40 m' or 'altitude 120 ft'",
         'heading_deg': "e.g. 'heading 270 degrees' or 'face north-east'",
         'speed_mps': "say it with a unit, e.g. '5 m/s', '20 km/h' or '10 knots'",
         'lat': "give decimal coordinates, e.g. 'fly to 47.3990, 8.5470'",
         'lon': "give decimal coordinates, e.g. 'fly to 47.3990, 8.5470'",
         'pitch_deg': "e.g. 'tilt the gimbal to -45 degrees' or 'point the camera straight down'",
         'height_m': "e.g. 'take off to 20 m'", 'radius_m': "e.g. 'orbit at 30 m radius'",
         'duration_s': "e.g. 'hover for 30 s'"}


_RUN_OF_NUMBERS = re.compile(r'(?<![\d.,])\d+(?:\.\d+)?\s+\d')


def _spelled(text: str) -> str:
    """``text`` with its numbers in words as digits ("take off to twenty metres" -> 20 metres).

    Unless that makes two numbers stand side by side where the text had none: "heading two
    seventy" (270, or 2 then 70?) and radio style "two seven zero" are left as written, so a
    required value stays unread and the tool is refused, never sent with a guess.
    """
    converted = digits(text)
    if len(_RUN_OF_NUMBERS.findall(converted)) > len(_RUN_OF_NUMBERS.findall(text)):
        return text
    return converted


def _action_clauses(text: str) -> list[str]:
    """The request's action clauses, with coordinates and decimals kept whole.

    The clause splitter cuts at commas and full stops; a coordinate pair or a decimal
    number is replaced by a placeholder word while splitting and put back afterwards.
    """
    kept: list[str] = []

    def keep(match: re.Match[str]) -> str:
        kept.append(match.group(0))
        return f' zqkept{len(kept) - 1}zq '

    masked = COORDINATES.sub(keep, text)
    masked = re.sub(r'\d+[.,]\d+', keep, masked)
    clauses = [c.text for c in split_clauses(masked) if c.role == 'action'] or [masked]
    restore = re.compile(r'\s?zqkept(\d+)zq\s?')
    return [restore.sub(lambda m: f' {kept[int(m.group(1))]} ', c).strip() for c in clauses]


# A change, not a target ("climb by 10 m", "go 20 m higher", "descend 10 m", "turn left 45
# degrees", "speed up by 2 m/s"): the text says how much to change, and a target read from it
# would be wrong (at 50 m, "descend 10 m" is not "go to 10 m"). The executor does not add it to
# a reading, so it is refused with the way to say the target (docs/MAVLINK.md).
_LEN = r'(?:m|metres?|meters?|mtrs|ft|feet|foot)\b'
_BY = r'(?:by|another|an\s+extra|a\s+further|extra|further)\s+'
RELATIVE_ALTITUDE = re.compile(
    rf'\b{_BY}{NUMBER}\s*{_LEN}|'
    rf'{NUMBER}\s*{_LEN}\s*(?:higher|lower|up|down|more|less|further)\b|'
    rf'\b(?:go|move|fly|come|bring\s+it)\s+(?:up|down)\s+{NUMBER}\s*{_LEN}|'
    rf'\b(?:climb|ascend|descend|rise|drop|sink|gain|lose)\w*\s+(?:up\s+|down\s+)?{NUMBER}\s*{_LEN}|'
    rf'\b(?:lower|raise)\b(?:(?!\bto\b)[^,;])*?{NUMBER}\s*{_LEN}', re.I)
_DEG = r'(?:°|deg\b|degs\b|degrees?\b)'
_SIDE = r'(?:left|right|port|starboard|clockwise|counter-?clockwise|anti-?clockwise|cw|ccw)'
RELATIVE_HEADING = re.compile(
    rf'\b(?:turn|rotate|yaw|spin|swing|veer|pivot)\w*\s+(?:(?:to\s+the\s+)?{_SIDE}\s+)?'
    rf'(?:by\s+)?{NUMBER}\s*(?:{_DEG})?(?!\s*(?:°|deg))|'
    rf'\bby\s+{NUMBER}\s*{_DEG}|{NUMBER}\s*{_DEG}\s*(?:to\s+the\s+)?{_SIDE}\b', re.I)
_SPD = r'(?:m/s|mps|km/h|kph|kmh|knots?|kts?|kn|mph)(?![\w/])'
RELATIVE_SPEED = re.compile(
    rf'\b{_BY}{NUMBER}\s*{_SPD}|{NUMBER}\s*{_SPD}\s*(?:faster|slower|quicker|more|less)\b',
    re.I)


def _sea_level(clause: str) -> str:
    """Why an altitude above sea level is refused ('' when the clause names none)."""
    m = SEA_LEVEL.search(clause)
    if not m:
        return ''
    return (f'{m.group(0)!r}: altitudes are sent above the launch point, and one above sea level '
            'is not converted (the launch point\'s elevation is not known here); give it above '
            "the launch point (e.g. 'climb to 60 m')")


def _relative(clause: str, pattern: re.Pattern[str], what: str, target: str) -> str:
    """Why a value of ``clause`` is refused when it is written as a change ('' when not)."""
    m = pattern.search(clause)
    if not m:
        return ''
    return (f'{m.group(0).strip()!r} is a change of {what}, not a target: the executor does not '
            f'add it to a reading; give the target {what} ({target})')


def _read(tool: str, clause: str) -> tuple[dict[str, float], str]:
    """Values of ``tool`` in one clause and, when a value is written but unusable, why."""
    if tool == 'takeoff':  # a take-off height is a change from the ground: the target itself
        return _length(clause, 'height_m')
    if tool == 'set_altitude':
        change = (_sea_level(clause)
                  or _relative(clause, RELATIVE_ALTITUDE, 'altitude', "e.g. 'climb to 60 m'"))
        return ({}, change) if change else _length(clause, 'altitude_m')
    if tool == 'set_speed':
        change = _relative(clause, RELATIVE_SPEED, 'speed', "e.g. 'speed up to 7 m/s'")
        return ({}, change) if change else _speed(clause)
    if tool == 'set_heading':
        change = _relative(_without_to(clause), RELATIVE_HEADING, 'heading',
                           "e.g. 'turn to heading 270' or 'face west'")
        return ({}, change) if change else _heading(clause)
    if tool == 'gimbal_control':
        return _pitch(clause)
    if tool == 'hold_position':
        return _duration(clause)
    if tool in ('goto_waypoint', 'orbit_point'):
        found, problem = _coordinates(clause)
        match = COORDINATES.search(clause)
        rest = clause[:match.start()] + ' ' + clause[match.end():] if match else clause
        speed, _ = _speed(rest)
        if tool == 'orbit_point':
            radius, bad = _radius(rest)
            duration, late = _duration(rest)
            return {**found, **radius, **duration, **speed}, problem or bad or late
        if RELATIVE_ALTITUDE.search(rest):  # a change of altitude is no target altitude
            return {**found, **speed}, problem
        if _sea_level(rest):  # nor is one above sea level: the move is refused, not flown
            raise ArgumentError(f'{tool} cannot fly {_sea_level(rest)}',
                                hint="e.g. 'fly to 47.3985, 8.5466 at 60 m'")
        height, _ = _length(_without_speeds(rest), 'altitude_m')
        return {**found, **height, **speed}, problem
    return {}, ''


def _without_to(clause: str) -> str:
    """``clause`` without its "to N degrees" / "to heading N" targets (read by _heading)."""
    return re.sub(rf'\bto\s+(?:(?:a\s+)?heading\s+(?:of\s+)?)?{NUMBER}\s*(?:{_DEG})?', ' ',
                  clause, flags=re.I)


_number = number_value  # '1,000 ft' is a thousand feet (common/conditions.py)


def _length(clause: str, key: str) -> tuple[dict[str, float], str]:
    bare = ''
    for match in MEASURE.finditer(clause):
        unit = (match.group(2) or '').lower()
        spec = UNITS.get(unit)
        if spec is None:
            if not unit and not bare:
                bare = f'{match.group(1)!r} has no unit'
            continue
        if spec[0] == 'length':
            value = _number(match.group(1)) * spec[2]
            if value < 0:
                return {}, f'{match.group(0)!r} is below the launch point'
            return {key: round(value, 3)}, ''
    return {}, bare


def _without_speeds(clause: str) -> str:
    """``clause`` with its speeds blanked ("at 5 m/s" is no altitude)."""
    def blank(match: re.Match[str]) -> str:
        spec = UNITS.get((match.group(2) or '').lower())
        return ' ' if spec is not None and spec[0] == 'speed' else match.group(0)
    return MEASURE.sub(blank, clause)


def _duration(clause: str) -> tuple[dict[str, float], str]:
    """The first duration; the parts of a compound one add up ("2 min 30 s", "1 h and 5 min")."""
    match = DURATION.search(clause)
    if not match:
        return {}, ''
    value, end, written = 0.0, match.start(), ''
    while match is not None and (not written or re.fullmatch(r'\s*(?:,|and)?\s*',
                                                              clause[end:match.start()])):
        unit = match.group(2).lower()
        scale = TIME_UNITS.get(unit, 1.0 if unit.startswith('s') else 60.0)
        part = _number(match.group(1)) * scale
        if part <= 0:
            return {}, f'{match.group(0)!r} is not a duration'
        value, end, written = value + part, match.end(), written + match.group(0)
        match = DURATION.search(clause, end)
    return {'duration_s': round(value, 3)}, ''


def _radius(clause: str) -> tuple[dict[str, float], str]:
    """The length written next to the word 'radius' (the nearest one), if any."""
    word = RADIUS_WORD.search(clause)
    if not word:
        return {}, ''
    best: tuple[int, float] | None = None
    for match in MEASURE.finditer(clause):
        spec = UNITS.get((match.group(2) or '').lower())
        if spec is None or spec[0] != 'length':
            continue
        gap = min(abs(match.start() - word.end()), abs(word.start() - match.end()))
        if best is None or gap < best[0]:
            best = (gap, _number(match.group(1)) * spec[2])
    if best is None:
        return {}, 'the radius has no length with a unit'
    if best[1] <= 0:
        return {}, 'the radius is not a length'
    return {'radius_m': round(best[1], 3)}, ''


def _speed(clause: str) -> tuple[dict[str, float], str]:
    bare = ''
    for match in MEASURE.finditer(clause):
        spec = UNITS.get((match.group(2) or '').lower())
        if spec is None:
            bare = bare or f'{match.group(1)!r} has no unit'
            continue
        if spec[0] == 'speed':
            value = _number(match.group(1)) * spec[2]
            if value <= 0:
                return {}, f'{match.group(0)!r} is not a forward speed'
            return {'speed_mps': round(value, 3)}, ''
    return {}, bare


def _heading(clause: str) -> tuple[dict[str, float], str]:
    match = DEGREES.search(clause) or HEADING_BARE.search(clause)
    if match:
        value = _number(match.group(1))
        if not -360.0 <= value < 360.0:
            return {}, f'{match.group(0)!r} is not a heading'
        return {'heading_deg': value % 360.0}, ''
    word = COMPASS_RE.search(clause)
    if word:
        return {'heading_deg': COMPASS[word.group(1).lower()]}, ''
    return {}, ''


def _pitch(clause: str) -> tuple[dict[str, float], str]:
    match = DEGREES.search(clause)
    if match:
        value = _number(match.group(1))
        if value > 0 and DOWN.search(clause):
            value = -value  # "tilt 45 degrees down"
        if not -90.0 <= value <= 30.0:
            return {}, f'{match.group(0)!r} is outside the gimbal range [-90, 30] degrees'
        return {'pitch_deg': value}, ''
    for pattern, value in PITCH_WORDS:
        if pattern.search(clause):
            return {'pitch_deg': value}, ''
    return {}, ''


def _coordinates(clause: str) -> tuple[dict[str, float], str]:
    match = COORDINATES.search(clause)
    if not match:
        return {}, ''
    lat, lon = _number(match.group(1)), _number(match.group(3))
    if (match.group(2) or '').upper() == 'S':
        lat = -abs(lat)
    if (match.group(4) or '').upper() == 'W':
        lon = -abs(lon)
    if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0):
        return {}, f'{match.group(0).strip()!r} is not a latitude/longitude pair'
    return {'lat': lat, 'lon': lon}, ''
