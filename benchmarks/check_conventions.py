"""Requests that match a newer ANNOTATION.md convention but lack the tool it names.

    python benchmarks/check_conventions.py benchmarks/data/v2/requests.jsonl

Conventions checked: body-frame relative moves -> goto_waypoint, vertical moves ->
set_altitude, turning in place -> set_heading, named search patterns -> execute_mission,
flight-mode words (LOITER/POSHOLD -> hold_position, RTL -> return_to_home, mode LAND -> land;
GUIDED, ACRO, STABILIZE, ALT_HOLD, SPORT serve no catalog function). Each hit is a question to
read by hand, not an error: a negated or cancelled clause names no tool ("don't RTL"), and a
takeoff height belongs to takeoff. Mode words without a catalog function are listed with
their level (out_of_scope unless something else is asked).
"""

from __future__ import annotations

import json
import re
import sys

UNIT = r'\d+(?:\.\d+)?\s?(?:m|cm|metres?|meters?|ft|feet)\b'
SIDE = r'(?:forwards?|back|backwards|left|right|north|south|east|west|ahead|sideways)'
RULES: list[tuple[str, re.Pattern[str], str | None]] = [
    ('relative move', re.compile(
        r'\b(?:fly|move|go|shift|nudge|slide|drift|back|head|scoot|strafe)\b[^,.;]{0,25}\b'
        + UNIT + r'[^,.;]{0,10}\b' + SIDE + r'\b|\b(?:forward|left|right|backwards?)\s+' + UNIT,
        re.I), 'goto_waypoint'),
    ('vertical move', re.compile(
        r'\b(?:go|move|fly|climb|rise|descend|drop|come)\s+(?:up|down)?\s*(?:by\s+)?' + UNIT
        + r'(?!\s*' + SIDE + ')', re.I), 'set_altitude'),
    ('turn in place', re.compile(
        r'\b(?:rotate|pivot|yaw|turn)\b[^,.;]{0,20}\b(?:\d+\s?(?:°|deg|degrees)|clockwise|'
        r'counter-?clockwise|left|right)\b|\bface\s+(?:north|south|east|west)', re.I),
     'set_heading'),
    ('named pattern', re.compile(
        r'\b(?:zig-?zag|grid|spiral|lawn-?mower|security sweep|expanding square|sector search|'
        r'parallel[- ]track|creeping line|patrol)\b', re.I), 'execute_mission'),
    ('mode hold', re.compile(r'\b(?:LOITER|POSHOLD|POS HOLD)\b|\bmode\s+hold\b|\bhold mode\b',
                             re.I), 'hold_position'),
    ('mode RTL', re.compile(r'\bRTL\b'), 'return_to_home'),
    ('mode LAND', re.compile(r'\b(?:mode\s+LAND|LAND mode)\b', re.I), 'land'),
    ('other mode', re.compile(r'\b(?:GUIDED|ACRO|STABILI[SZ]E|ALT_?HOLD|SPORT)\b(?:\s+mode)?',
                              re.I), None),
]


def check(path: str) -> list[str]:
    """One line per request of ``path`` that a rule flags."""
    out = []
    name = path.rsplit('/', 1)[-1]
    with open(path, encoding='utf-8') as fh:
        for n, line in enumerate(fh, 1):
            ex = json.loads(line)
            for rule, pattern, tool in RULES:
                m = pattern.search(ex['request'])
                if not m or (tool and tool in ex['tools']):
                    continue
                want = f' -> {tool}?' if tool else f' ({ex["level"]})'
                out.append(f"{name}:{n} {ex['id']} [{rule}: '{m.group(0)}'{want}] "
                           f"{ex['tools']} | {ex['request'][:160]}")
    return out


def main() -> int:
    hits = [h for path in sys.argv[1:] for h in check(path)]
    print('\n'.join(hits) if hits else 'no request flagged')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
