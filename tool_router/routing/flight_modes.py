"""Autopilot flight-mode switches, rewritten as the catalog command they amount to.

Operators of ArduPilot and PX4 vehicles order a behaviour by naming the autopilot mode
that performs it: "set the flight mode to POSHOLD", "switch to loiter", "mode RTL",
"AUTO mode". ANNOTATION.md maps those words to tools: LOITER / HOLD / POSHOLD (and
BRAKE, which stops and holds) -> ``hold_position``; RTL (and SMART_RTL, PX4's Return)
-> ``return_to_home``; LAND -> ``land``; AUTO (PX4's Mission) -> ``execute_mission``;
every other mode (GUIDED, ACRO, STABILIZE, ALT_HOLD, ...) serves no catalog function.

The mode names are a closed vocabulary, but their wording is not the catalog's: "set
the flight mode to POSHOLD" reads, to a sentence encoder, much like "set the flight
mode to GUIDED", which is out of scope. :func:`rewrite_modes` replaces a switch to one
of the mapped modes by the plain command ("hold position", "return to home", "land",
"start the mission") before the request is embedded; a switch to any other mode is left
as it was written, for the scope decision to reject. Questions about the current mode
("is it still in loiter mode?") are not switches and are left alone (they are
``vehicle_state`` requests).

Pure text in, text out; applied by lcr with its other vocabulary repairs (typos and
operator shorthand, :mod:`tool_router.routing.spelling`).
"""

from __future__ import annotations

import re

from tool_router.common.clauses import ARROW

# mode name (lower case, spaces or underscores between words) -> the plain command
COMMAND = {
    'loiter': 'hold position',
    'poshold': 'hold position',
    'pos hold': 'hold position',
    'position hold': 'hold position',
    'posctl': 'hold position',
    'hold': 'hold position',
    'brake': 'hold position',
    'rtl': 'return to home',
    'smart rtl': 'return to home',
    'smartrtl': 'return to home',
    'return': 'return to home',
    'land': 'land',
    'auto': 'start the mission',
    'mission': 'start the mission',
}
# Names that are also everyday words: a switch to them counts only next to the word "mode"
# or written in capitals ("switch to HOLD"), never after a bare "go to" ("go to land").
_AMBIGUOUS = {'hold', 'return', 'land', 'mission', 'auto', 'brake'}

# The modes that perform a catalog function, by name (the one list: switches, questions)
MAPPED = (r'smart[ _]?rtl|pos(?:ition)?[ _]?hold|posctl|loiter|brake|rtl|hold|return|land|auto|'
          r'mission')
_NAME = (
    r'(?<![\w-])(?<!alt )(?<!altitude )'  # not ALT_HOLD / altitude hold (out of scope)
    rf'(?P<name>{MAPPED})'
    # not a parameter of the mode ("set RTL altitude to 50 m", "RTL_SPEED"): out of scope
    r'(?![ _-]?(?:alt(?:itude)?|speed|height|climb|radius|timeout|delay|distance|'
    r'param(?:eter)?s?)\b)'
)
_SWITCH = (
    r'(?P<verb>\b(?:switch|change|set|put|flip|go|get|drop|enter|engage|select|activate|use|'
    r'command|toggle)\b(?:\s+(?:it|her|the\s+(?:drone|vehicle|aircraft|copter|quad|uav)))?'
    r'(?:\s+back)?(?:\s+over)?\s+)'
)
_FLIGHT_MODE = r'(?:the\s+)?(?:flight\s+)?mode'
_PATTERNS = [
    # "set the flight mode to POSHOLD", "mode RTL", "mode: loiter", "change mode to LAND"
    re.compile(
        rf'(?:{_SWITCH})?{_FLIGHT_MODE}\s*(?:to|into|=|:)?\s*{_NAME}\b(?:\s+mode\b)?',
        re.IGNORECASE,
    ),
    # "switch to loiter mode", "put it in HOLD mode", "LOITER mode", "go into return mode"
    re.compile(
        rf'(?:{_SWITCH}(?:(?:in|into|to)\s+)?)?{_NAME}\s+(?:flight\s+)?mode\b', re.IGNORECASE
    ),
    # "switch to loiter", "switch to POSHOLD", "go AUTO"
    re.compile(rf'{_SWITCH}(?:(?:in|into|to)\s+)?{_NAME}\b', re.IGNORECASE),
    # "switch from auto to loiter", "change from GUIDED to RTL": the mode it goes to
    re.compile(rf'{_SWITCH}from\s+[\w ]{{1,20}}?\s+(?:to|into)\s+{_NAME}\b(?:\s+mode\b)?',
               re.IGNORECASE),
]
# a question about the present mode, not a switch
_STATE_BEFORE = re.compile(
    r"\b(?:is|are|was|were|still|whether|already|which|what|stays?|remain|it's|its)\b[^,;.!?]*$",
    re.IGNORECASE,
)


def _key(name: str) -> str:
    return re.sub(r'[ _]+', ' ', name.lower())


def rewrite_modes(text: str) -> str:
    """``text`` with every switch to a catalog-served flight mode replaced by its command."""
    out, pos = [], 0
    for start, end, command in _switches(text):
        out.append(text[pos:start])
        out.append(command)
        pos = end
    out.append(text[pos:])
    return ''.join(out)


# the arrow of a typed condition ("ESCs overheating -> LOITER"): what stands before it is a state
# (the splitter's arrow: "-->" and "⇒" too)
_ARROW = re.compile(rf'\s*(?:{ARROW})')


def _switches(text: str) -> list[tuple[int, int, str]]:
    """(start, end, command) of the non-overlapping mode switches of ``text``, in order."""
    found: list[tuple[int, int, str]] = []
    for k, pattern in enumerate(_PATTERNS):
        for m in pattern.finditer(text):
            name = m.group('name')
            key = _key(name)
            if key not in COMMAND:
                continue
            has_verb = bool(m.group('verb'))
            if k == 2 and key in _AMBIGUOUS and not name.isupper():
                continue  # "go to land", "set return ..." are ordinary words
            if k == 2 and key in _AMBIGUOUS and m.group('verb').lower().startswith(('go', 'get')) \
                    and 'to' in m.group(0).lower().split():
                continue  # "go to LAND" could be a place name; leave it to the model
            if not has_verb and _STATE_BEFORE.search(text[:m.start()]):
                continue  # "is it still in loiter mode?"
            if text[m.end():].lstrip().startswith('?') and not has_verb:
                continue
            if not has_verb and _ARROW.match(text, m.end()):
                continue  # "mode RTL -> stop recording": the mode is the condition's state
            if any(s < m.end() and m.start() < e for s, e, _ in found):
                continue
            found.append((m.start(), m.end(), COMMAND[key]))
    return sorted(found)


# Autopilot modes that serve no catalog function (ANNOTATION.md: "every other mode ... serves
# no catalog function" -> out of scope). Names that are also everyday words ("stabilize the
# camera", "drift downstream", "manual focus") count only in capitals or beside the word "mode".
UNMAPPED = ('guided|guided[ _]nogps|acro|stabili[sz]e|stabili[sz]ed|alt[ _]?hold|altitude[ _]hold|'
            'sport|drift|manual|offboard|altctl|rattitude|autotune|auto[ _]tune|throw|flowhold|'
            'flow[ _]hold|sysid|avoid[ _]adsb|turtle')
_UNMAPPED_WORDS = frozenset({'guided', 'stabilize', 'stabilise', 'stabilized', 'stabilised',
                             'sport', 'drift', 'manual', 'throw', 'turtle'})
_UNMAPPED_NAME = rf'(?<![\w-])(?P<name>{UNMAPPED})(?![\w-])'
_UNMAPPED_PATTERNS = [
    # "set the flight mode to GUIDED", "mode guided pls", "ACRO mode", "go into acro mode"
    re.compile(rf'{_FLIGHT_MODE}\s*(?:to|into|=|:)?\s*{_UNMAPPED_NAME}', re.IGNORECASE),
    re.compile(rf'{_UNMAPPED_NAME}\s+(?:flight\s+)?mode\b', re.IGNORECASE),
    # "switch to offboard", "go SPORT", "STABILIZE it", "ALT_HOLD please"
    re.compile(rf'(?:{_SWITCH}(?:(?:in|into|to)\s+)?)?{_UNMAPPED_NAME}', re.IGNORECASE),
]


def unmapped_mode_switch(clause: str) -> str:
    """The mode name when ``clause`` switches to a mode no catalog tool serves; else ''.

    "switch to GUIDED mode", "mode guided pls", "STABILIZE it", "ALT_HOLD please", "go SPORT";
    not "stabilize the camera" or "drift downstream" (everyday words, no "mode", not in
    capitals), nor a switch to a served mode ("switch from GUIDED to RTL") or a question
    about the mode ("are we in GUIDED?": the caller leaves questions alone).
    """
    if _switches(clause):
        return ''  # a switch to a served mode (its command is the order)
    for k, pattern in enumerate(_UNMAPPED_PATTERNS):
        for m in pattern.finditer(clause):
            name = m.group('name')
            # capitals say "a mode's name" only where the other words are not shouted too
            # ("THROW THE RING NOW", "DRIFT LEFT A BIT")
            rest = clause[:m.start('name')] + clause[m.end('name'):]
            shouted = any(ch.isupper() for ch in rest) and not any(ch.islower() for ch in rest)
            named = name.isupper() and not shouted
            if k == 2 and _key(name) in _UNMAPPED_WORDS and not named:
                continue
            if k == 2 and not m.group('verb') and not named and '_' not in name:
                continue  # a bare lower-case name ("manual", "acro") without "mode" or a verb
            return name
    return ''



# "are we in loiter", "is the drone still in RTL mode", "am I in return mode right now?": a
# question about the present mode, which vehicle_state reads (ANNOTATION.md). An everyday word
# ("hold", "return", "land", "mission", "auto", "position") names a mode only before "mode" or
# in capitals; "are we in position" is not one.
_IN_MODE = re.compile(
    r"\b(?:are|is|am)\s+(?:we|it|you|i|she|the\s+(?:drone|aircraft|vehicle|quad|copter|uav))\s+"
    r"(?:still\s+|now\s+|currently\s+|already\s+)?in\s+(?:the\s+)?"
    rf"(?P<name>{MAPPED}|{UNMAPPED})(?P<mode>\s+(?:flight\s+)?mode)?(?![\w-])", re.IGNORECASE)


def mode_question(clause: str) -> str:
    """The mode name when ``clause`` asks whether the vehicle is in that mode; else ''."""
    m = _IN_MODE.search(clause)
    if m is None:
        return ''
    name = m.group('name')
    if _key(name) in _AMBIGUOUS and not m.group('mode') and not name.isupper():
        return ''
    return name
