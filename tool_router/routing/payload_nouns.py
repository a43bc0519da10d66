"""The words operators name the switchable payloads with: lights, sounds, recordings (pure).

One table for the rules that read a payload by its noun: "kill the floodlight" switches the light
off (routing/payload_kills.py), "is the light on? if not, turn it on" turns the light on
(routing/pronoun_orders.py). Each entry is a regular-expression alternation (no groups), and
:data:`TOOL` names the catalog tool that switches it.
"""
from __future__ import annotations

LIGHT = (r'(?:flood|spot|search|strobe|nav|landing)?\s*-?\s*lights?|lamps?|leds?|beams?|'
         r'strobes?')
SOUND = (r'music|songs?|sirens?|(?:loud)?\s*speakers?|audio|sound|broadcast|announcements?|'
         r'message|alarm|horn|tannoy|pa')
VIDEO = r'video|recording|recorder|filming|(?:live\s*)?stream(?:ing)?|feed|livestream'
TOOL = {'light': 'spotlight', 'sound': 'speaker_broadcast', 'video': 'video_recorder'}
