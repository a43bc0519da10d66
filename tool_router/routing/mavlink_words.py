"""MAVLink command names read as the words of what they do (pure).

Operators who script an autopilot type its commands by their MAVLink names ("MAV_CMD_NAV_TAKEOFF
10", "MAV_CMD_DO_GRIPPER release"): the autopilot's public vocabulary, not an identifier of this
catalog. The router read such a name as an autopilot parameter id (``routing/parameters.py``) or
a bare identifier and answered nothing. The safety screen now reads each name of
:data:`COMMANDS` as its words (``Screened.read_as``, in the answer and the trace) before it
classifies the segment, so a catalog identifier next to it is still caught and an unknown
``MAV_CMD_...`` name stays what it was. The words are the plain English of the command's
meaning in common.xml; a command whose first parameter picks the action (arm or disarm, pause or
continue) is read by that parameter when it is written as 0 or 1. Commands outside the catalog
(setting home, servo, relay, message intervals) read as their words too, which the router
answers as out of scope like any other such request. docs/SAFETY.md, "MAVLink command names".
"""
from __future__ import annotations

import re

# name after "MAV_CMD_" -> words; a pair: (words for a first parameter of 0, words for 1),
# anything else written after the name reads as the pair's words joined by "or"
COMMANDS: dict[str, str | tuple[str, str]] = {
    'NAV_WAYPOINT': 'fly to the waypoint',
    'NAV_LOITER_UNLIM': 'loiter here',
    'NAV_LOITER_TURNS': 'circle the point for turns',
    'NAV_LOITER_TIME': 'loiter here for a time',
    'NAV_LOITER_TO_ALT': 'loiter here and change altitude',
    'NAV_RETURN_TO_LAUNCH': 'return to launch',
    'NAV_LAND': 'land',
    'NAV_TAKEOFF': 'take off',
    'NAV_VTOL_TAKEOFF': 'take off',
    'NAV_VTOL_LAND': 'land',
    'NAV_PAYLOAD_PLACE': 'lower and release the payload',
    'NAV_DELAY': 'wait',
    'NAV_GUIDED_ENABLE': 'switch to guided mode',
    'CONDITION_DELAY': 'wait',
    'CONDITION_YAW': 'yaw to heading',
    'CONDITION_CHANGE_ALT': 'change altitude',
    'CONDITION_DISTANCE': 'wait for distance',
    'DO_CHANGE_SPEED': 'change speed',
    'DO_CHANGE_ALTITUDE': 'change altitude',
    'DO_REPOSITION': 'fly to position',
    'DO_ORBIT': 'orbit',
    'DO_FOLLOW': 'follow the target',
    'DO_SET_ROI': 'point the camera at the region of interest',
    'DO_SET_ROI_LOCATION': 'point the camera at the location',
    'DO_MOUNT_CONTROL': 'point the gimbal',
    'DO_GIMBAL_MANAGER_PITCHYAW': 'point the gimbal pitch and yaw',
    'DO_DIGICAM_CONTROL': 'take a photo',
    'DO_SET_CAM_TRIGG_DIST': 'take photos every distance',
    'IMAGE_START_CAPTURE': 'take photos',
    'IMAGE_STOP_CAPTURE': 'stop taking photos',
    'VIDEO_START_CAPTURE': 'start recording video',
    'VIDEO_STOP_CAPTURE': 'stop recording video',
    'DO_GRIPPER': 'gripper',  # its action follows ("release", "grab")
    'DO_WINCH': 'operate the winch',
    'DO_FLIGHTTERMINATION': 'terminate the flight',
    'COMPONENT_ARM_DISARM': ('disarm the motors', 'arm the motors'),
    'MISSION_START': 'start the mission',
    'DO_PAUSE_CONTINUE': ('pause and hold position', 'continue the mission'),
    'DO_SET_MODE': 'set the flight mode',
    'DO_LAND_START': 'start the landing sequence',
    'DO_SET_HOME': 'set the home position',
    'DO_SET_SERVO': 'set a servo',
    'DO_SET_RELAY': 'set a relay',
    'DO_MOTOR_TEST': 'test the motors',
    'DO_FENCE_ENABLE': 'enable the geofence',
    'DO_PARACHUTE': 'deploy the parachute',
    'DO_JUMP': 'jump to a mission item',
    'SET_MESSAGE_INTERVAL': 'set a telemetry message interval',
    'REQUEST_MESSAGE': 'request a telemetry message',
    'PREFLIGHT_REBOOT_SHUTDOWN': 'reboot the autopilot',
}
# the name, then its first parameter when it is 0 or 1 ("... 1", "..., 0", "... param1=1")
_NAME = re.compile(r'(?<![\w-])MAV_CMD_([A-Z0-9_]+)(?![\w-])'
                   r'(?:\s*[,(:]?\s*(?:(?:param1|p1)\s*[=:]\s*)?([01])(?![\w.]))?',
                   re.IGNORECASE)


def _words(m: re.Match[str]) -> str:
    said = COMMANDS.get(m.group(1).upper())
    if said is None:
        return m.group(0)
    if isinstance(said, tuple):
        return said[int(m.group(2))] if m.group(2) else f'{said[1]} or {said[0]}'
    return said if m.group(2) is None else f'{said} {m.group(2)}'


def read_commands(text: str) -> str:
    """``text`` with every known MAVLink command name read as its words (else unchanged)."""
    if 'mav_cmd_' not in text.lower():
        return text
    return _NAME.sub(_words, text)
