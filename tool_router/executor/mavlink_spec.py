"""What each ``mavlink:`` binding sends or reads, and the MAVLink link's settings (pure).

No pymavlink here: message ids and enum values are the MAVLink common-dialect
numbers, so the executor's configuration can be validated without the
library. :mod:`tool_router.executor.mavlink` performs the sends and reads.

A binding ``mavlink:NAME`` names one entry of :data:`ACTIONS` (a command, sent
as COMMAND_LONG or COMMAND_INT and acknowledged by COMMAND_ACK) or of
:data:`SENSORS` (a reading assembled from the telemetry stream, no traffic).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# MAV_CMD values (common.xml)
MAV_CMD_NAV_RETURN_TO_LAUNCH = 20
MAV_CMD_NAV_LAND = 21
MAV_CMD_NAV_TAKEOFF = 22
MAV_CMD_CONDITION_YAW = 115
MAV_CMD_DO_SET_MODE = 176
MAV_CMD_DO_CHANGE_SPEED = 178
MAV_CMD_DO_CHANGE_ALTITUDE = 186
MAV_CMD_DO_FLIGHTTERMINATION = 185
MAV_CMD_DO_REPOSITION = 192
MAV_CMD_DO_PAUSE_CONTINUE = 193
MAV_CMD_DO_GRIPPER = 211
MAV_CMD_COMPONENT_ARM_DISARM = 400
MAV_CMD_MISSION_START = 300
MAV_CMD_SET_MESSAGE_INTERVAL = 511
MAV_CMD_REQUEST_MESSAGE = 512
MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN = 246
MAV_CMD_DO_GIMBAL_MANAGER_PITCHYAW = 1000
MAV_CMD_IMAGE_START_CAPTURE = 2000
MAV_CMD_VIDEO_START_CAPTURE = 2500
MAV_CMD_VIDEO_STOP_CAPTURE = 2501

# MAV_RESULT -> (name, traced failure mode; '' = success)
MAV_RESULTS: dict[int, tuple[str, str]] = {
    0: ('accepted', ''),
    1: ('temporarily_rejected', 'mav_temporarily_rejected'),
    2: ('denied', 'mav_denied'),
    3: ('unsupported', 'mav_unsupported'),
    4: ('failed', 'mav_failed'),
    5: ('in_progress', ''),
    6: ('cancelled', 'mav_cancelled'),
}
MAV_RESULT_IN_PROGRESS = 5


@dataclass(frozen=True)
class Action:
    """One command a tool becomes."""

    command: int
    motion: bool  # refused while the heartbeat is lost; checked against the limits
    frame_int: bool = False  # sent as COMMAND_INT (coordinates) instead of COMMAND_LONG
    doc: str = ''


ACTIONS: dict[str, Action] = {
    'arm': Action(MAV_CMD_COMPONENT_ARM_DISARM, True, doc='param1=1'),
    'disarm': Action(MAV_CMD_COMPONENT_ARM_DISARM, False, doc='param1=0 (no force)'),
    'takeoff': Action(MAV_CMD_NAV_TAKEOFF, True, doc='param7=height (m, above launch)'),
    'land': Action(MAV_CMD_NAV_LAND, True),
    'precision_land': Action(MAV_CMD_NAV_LAND, True, doc='param2=2 (precision land required)'),
    'rtl': Action(MAV_CMD_NAV_RETURN_TO_LAUNCH, True),
    'hold': Action(MAV_CMD_DO_PAUSE_CONTINUE, True,
                   doc='ArduCopter: param1=0 (pause: hold position); PX4: DO_SET_MODE Hold'),
    'goto': Action(MAV_CMD_DO_REPOSITION, True, frame_int=True,
                   doc='COMMAND_INT, x/y=lat/lon*1e7, z=altitude (current when not given): '
                       'ArduCopter GLOBAL_RELATIVE_ALT_INT above home, PX4 GLOBAL_INT AMSL'),
    'mission_start': Action(MAV_CMD_MISSION_START, True),
    'set_altitude': Action(MAV_CMD_DO_REPOSITION, True, frame_int=True,
                           doc='DO_REPOSITION at the current position, z=the new altitude '
                               '(ArduCopter does not take DO_CHANGE_ALTITUDE as a command)'),
    'set_speed': Action(MAV_CMD_DO_CHANGE_SPEED, True, doc='param1=1 (ground), param2=m/s'),
    'set_heading': Action(MAV_CMD_CONDITION_YAW, True,
                          doc='param1=heading, param2=30 deg/s, param4=0 (absolute)'),
    'terminate': Action(MAV_CMD_DO_FLIGHTTERMINATION, False,
                        doc='param1=1; sent even without heartbeat, never queued'),
    'photo': Action(MAV_CMD_IMAGE_START_CAPTURE, False, doc='param3=1 (one image)'),
    'video': Action(MAV_CMD_VIDEO_START_CAPTURE, False,
                    doc='VIDEO_STOP_CAPTURE when the request says off/stop'),
    'gimbal': Action(MAV_CMD_DO_GIMBAL_MANAGER_PITCHYAW, False,
                     doc='param1=pitch (deg), param2=NaN (yaw unchanged)'),
    'release': Action(MAV_CMD_DO_GRIPPER, False, doc='param1=1 (gripper 1), param2=0 (release)'),
}
ACTION_ARGUMENTS = {'takeoff': 'takeoff', 'set_altitude': 'set_altitude', 'goto': 'goto_waypoint',
                    'set_heading': 'set_heading', 'set_speed': 'set_speed',
                    'gimbal': 'gimbal_control'}

# sensor binding name -> what it reads (docs); fields are those condition watches compare
SENSORS: dict[str, str] = {
    'battery': 'BATTERY_STATUS (else SYS_STATUS): battery_pct, voltage_v',
    'position': 'GLOBAL_POSITION_INT + HOME_POSITION: lat, lon, amsl_m, home_distance_m',
    'altitude': 'GLOBAL_POSITION_INT.relative_alt: altitude_m',
    'attitude': 'ATTITUDE: roll_deg, pitch_deg, yaw_deg',
    'heading': 'VFR_HUD.heading: heading_deg',
    'velocity': 'VFR_HUD: speed_mps, vertical_mps',
    'gps': 'GPS_RAW_INT: fix_type, satellites, hdop',
    'link': 'HEARTBEAT age, sequence gaps, RADIO_STATUS: link_lost, heartbeat_age_s, '
            'packet_loss_pct, rssi_dbm (SiK scale, when RADIO_STATUS arrives)',
    'state': 'HEARTBEAT (+ EXTENDED_SYS_STATE, MISSION_CURRENT): armed, mode, on_ground, '
             'phase, altitude_m, battery_pct, mission, waypoint',
    'health': 'SYS_STATUS sensor health bits: errors, cpu_load_pct',
    'geofence': 'position against the executor geofence: inside, margin_m',
}
MAV_FRAME_GLOBAL_RELATIVE_ALT = 3
MAV_FRAME_GLOBAL_RELATIVE_ALT_INT = 6


def binding_names() -> list[str]:
    """Every valid ``mavlink:NAME``."""
    return sorted(ACTIONS) + sorted(SENSORS)


class Geofence(BaseModel):
    """A circle around a centre point; 0 radius = no horizontal fence."""

    model_config = ConfigDict(extra='forbid')

    lat: float = Field(47.3977, ge=-90, le=90, description='Fence centre latitude.')
    lon: float = Field(8.5456, ge=-180, le=180, description='Fence centre longitude.')
    radius_m: float = Field(500.0, ge=0, description='Allowed distance from the centre; 0 = off.')


class MavlinkConfig(BaseModel):
    """The executor's MAVLink link (used when a binding is ``mavlink:...``)."""

    model_config = ConfigDict(extra='forbid')

    connection: str = Field('udpin:127.0.0.1:14550', description='pymavlink connection string: '
                            'udpin:HOST:PORT, udpout:HOST:PORT, tcp:HOST:PORT, or a serial '
                            'device (/dev/ttyACM0).')
    baud: int = Field(57600, ge=1200, description='Serial baud rate (serial devices only).')
    source_system: int = Field(255, ge=1, le=255, description='Our system id (a GCS: 255).')
    source_component: int = Field(190, ge=0, le=255,
                                  description='Our component id (190 = MISSIONPLANNER).')
    target_system: int = Field(1, ge=1, le=255, description='The vehicle system id.')
    target_component: int = Field(1, ge=0, le=255, description='The autopilot component id.')
    camera_component: int = Field(100, ge=0, le=255, description='Component for photo/video '
                                                                 '(100 = MAV_COMP_ID_CAMERA).')
    ack_timeout_s: float = Field(2.0, gt=0, le=60, description='Longest wait for COMMAND_ACK '
                                                               '(capped by call_timeout_s).')
    heartbeat_timeout_s: float = Field(3.0, gt=0, le=60, description='No HEARTBEAT for this '
                                       'long = link lost: motion commands are refused.')
    stale_after_s: float = Field(3.0, gt=0, le=60, description='A telemetry message older '
                                 'than this is not a reading.')
    default_takeoff_m: float = Field(10.0, gt=0, le=500, description='Take-off height when the '
                                     'request gives none.')
    max_altitude_m: float = Field(120.0, gt=0, le=10000, description='Highest target altitude '
                                  'above launch accepted (takeoff, set_altitude, goto).')
    min_altitude_m: float = Field(2.0, ge=0, le=10000, description='Lowest target altitude for '
                                  'set_altitude/goto (landing is the land tool).')
    max_speed_mps: float = Field(15.0, gt=0, le=100, description='Highest set_speed accepted.')
    geofence: Geofence = Field(default_factory=Geofence)
    autopilot: Literal['auto', 'ardupilot', 'px4'] = Field(
        'auto', description="Whose rules the commands follow: 'ardupilot' (ArduCopter), 'px4', "
                            "or 'auto' (from the autopilot's HEARTBEAT); a HEARTBEAT from the "
                            'other stack refuses motion commands (autopilot_mismatch).')
    px4_min_takeoff_m: float = Field(2.5, ge=0, le=100, description="PX4's minimum take-off "
                                     'altitude (MIS_TAKEOFF_ALT) until the vehicle reports its '
                                     'own; lower take-off requests are refused.')
    mode_timeout_s: float = Field(3.0, gt=0, le=60, description='After a mode switch, longest '
                                  'wait for the HEARTBEAT to show the new mode.')
    wait_arrival: bool = Field(True, description='takeoff / goto / set_altitude answer once '
                               'the vehicle is there (within arrival_tolerance_m), not at the '
                               'COMMAND_ACK; never longer than call_timeout_s.')
    arrival_tolerance_m: float = Field(1.0, gt=0, le=50, description='How close counts as '
                                       'arrived (horizontal and vertical).')
    stream_retry_s: float = Field(2.0, gt=0, le=60, description='Telemetry streams are '
                                  're-requested at most this often while telemetry is missing '
                                  'or after the autopilot rebooted.')
    signing_key_file: str = Field('', description="MAVLink 2 signing key (32 bytes, hex, 0600; "
                                  "tool-router mavlink-key create FILE); '' = no signing.")
    require_signed: bool = Field(False, description='Refuse every incoming message without a '
                                 'valid signature (counted, traced as security events); needs '
                                 'signing_key_file.')
    signing_link_id: int = Field(1, ge=0, le=255, description='Our MAVLink signing link id.')
    security_report_s: float = Field(10.0, gt=0, le=3600, description='Refused messages from '
                                     'one sender are traced once, then once per this many '
                                     'seconds with their count.')

    @model_validator(mode='after')
    def _limits(self) -> 'MavlinkConfig':
        if self.min_altitude_m > self.max_altitude_m:
            raise ValueError('min_altitude_m is above max_altitude_m')
        if self.require_signed and not self.signing_key_file:
            raise ValueError('require_signed needs signing_key_file')
        if ':' not in self.connection and not self.connection.startswith('/dev/'):
            raise ValueError(f'connection {self.connection!r}: expected udpin:HOST:PORT, '
                             'udpout:HOST:PORT, tcp:HOST:PORT or /dev/DEVICE')
        return self
