"""What each autopilot stack needs from a ground station (pure): modes, altitudes, arming rules.

The MAVLink common messages mean different things to ArduCopter and to PX4. A
:class:`Profile` holds one stack's rules, written from its source (docs/MAVLINK.md lists each
rule with the file it comes from); :mod:`tool_router.executor.mavlink` asks it

* what a HEARTBEAT's ``custom_mode`` is called and how to ask for a mode (``MAV_CMD_DO_SET_MODE``);
* which mode a command must be flown in, and which mode the vehicle shows after it;
* in which modes arming is refused (so that the second flight after an RTL switches first);
* how to turn "N m above home" into ``NAV_TAKEOFF`` param 7 and ``DO_REPOSITION`` z.

No pymavlink here: numbers are the MAVLink common-dialect values and the stacks' own enums.
"""
from __future__ import annotations

from dataclasses import dataclass, field

MAV_AUTOPILOT_ARDUPILOTMEGA = 3
MAV_AUTOPILOT_PX4 = 12
MAV_MODE_FLAG_CUSTOM_MODE_ENABLED = 1
MAV_FRAME_GLOBAL_INT = 5
MAV_FRAME_GLOBAL_RELATIVE_ALT_INT = 6
MAV_DO_REPOSITION_FLAGS_CHANGE_MODE = 1

# MAV_TYPE values ArduCopter flies (multirotors and helicopters)
COPTER_TYPES = frozenset({2, 3, 4, 13, 14, 15, 29, 35})


class ProfileError(Exception):
    """A request the profile cannot turn into a command (nothing is sent); says why."""

    def __init__(self, reason: str, failure_mode: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.failure_mode = failure_mode


@dataclass(frozen=True)
class Altitude:
    """A target height: above home (what the request says) and above mean sea level."""

    relative_m: float
    amsl_m: float | None  # None when home's altitude is unknown

    def describe(self) -> str:
        """'20 m above home (508.0 m AMSL)'."""
        amsl = '' if self.amsl_m is None else f' ({self.amsl_m:.1f} m AMSL)'
        return f'{self.relative_m:g} m above home{amsl}'


@dataclass(frozen=True)
class Profile:
    """One autopilot stack's rules, as seen from the ground station."""

    name: str  # 'ardupilot' | 'px4'
    label: str  # for messages: 'ArduCopter', 'PX4'
    autopilot_id: int  # HEARTBEAT.autopilot
    flight_mode: str  # the mode motion commands are flown in ('' = the vehicle chooses)
    hold_mode: str  # the mode that holds position on the ground, where arming is allowed
    no_arm_modes: frozenset[str]  # arming refused in these modes
    # command -> mode the HEARTBEAT shows once the command is accepted
    mode_after: dict[str, str] = field(default_factory=dict)
    absolute_altitudes: bool = False  # NAV_TAKEOFF param7 / DO_REPOSITION z are AMSL
    min_takeoff_m: float = 0.0  # lower take-off requests are refused, not clamped
    # MISSION_CURRENT.seq of the mission's first item: ArduPilot keeps home as item 0 (seq 1 is
    # the first waypoint a ground station shows), PX4 counts the items from 0
    first_item_seq: int = 0

    # -- modes -----------------------------------------------------------------
    def mode_name(self, custom_mode: int) -> str:
        """The HEARTBEAT's ``custom_mode`` by name ('GUIDED', 'AUTO_LOITER', 'MODE_77')."""
        raise NotImplementedError

    def set_mode_params(self, mode: str) -> list[float]:
        """MAV_CMD_DO_SET_MODE params 1-3 that ask for ``mode``."""
        raise NotImplementedError

    def modes(self) -> list[str]:
        """Every mode name this profile knows."""
        raise NotImplementedError

    def can_arm_in(self, mode: str) -> bool:
        """Whether a ground station's arm command is accepted in ``mode``."""
        return mode not in self.no_arm_modes

    def mode_for(self, action: str, mode: str) -> str:
        """The mode to switch to before ``action`` ('' = none), given the current ``mode``.

        ArduCopter flies every motion command of ours in GUIDED (arming included: it is
        armable and is where the take-off that follows is accepted). PX4 switches modes
        itself for take-off, reposition, land and RTL; only arming needs a mode that
        allows it (after an RTL or a landing the vehicle may still show one that does not).
        """
        if self.flight_mode:
            if mode == self.flight_mode:
                return ''
            if action in ('arm', 'takeoff', 'goto', 'set_altitude'):
                return self.flight_mode
            if action in ('hold', 'set_heading') and mode != 'AUTO':  # AUTO pauses/yaws too
                return self.flight_mode
            return ''
        if action == 'arm' and not self.can_arm_in(mode):
            return self.hold_mode
        return ''

    # -- altitudes ---------------------------------------------------------------
    def altitude(self, relative_m: float, home_amsl_m: float | None) -> Altitude:
        """A target N m above home; refused when this stack needs AMSL and home is unknown."""
        if self.absolute_altitudes and home_amsl_m is None:
            raise ProfileError(f'{self.label} reads altitudes as AMSL and the home altitude is '
                               'unknown (no HOME_POSITION and no GLOBAL_POSITION_INT yet)',
                               'no_home')
        return Altitude(relative_m, None if home_amsl_m is None else home_amsl_m + relative_m)

    def takeoff_param7(self, target: Altitude) -> float:
        """NAV_TAKEOFF param 7 for ``target``."""
        if self.absolute_altitudes:
            assert target.amsl_m is not None
            return target.amsl_m
        return target.relative_m

    def reposition_frame_z(self, target: Altitude) -> tuple[int, float]:
        """(frame, z) of a DO_REPOSITION COMMAND_INT that flies at ``target``."""
        if self.absolute_altitudes:
            assert target.amsl_m is not None
            return MAV_FRAME_GLOBAL_INT, target.amsl_m
        return MAV_FRAME_GLOBAL_RELATIVE_ALT_INT, target.relative_m

    def check_takeoff(self, relative_m: float) -> None:
        """Refuse a take-off below the stack's minimum (it would climb to the minimum)."""
        if relative_m < self.min_takeoff_m:
            raise ProfileError(f'{relative_m:g} m is below {self.label}\'s minimum take-off '
                               f'altitude {self.min_takeoff_m:g} m (MIS_TAKEOFF_ALT); the '
                               f'vehicle would climb to {self.min_takeoff_m:g} m instead',
                               'outside_limits')


# -- ArduCopter -------------------------------------------------------------------
# ArduCopter/mode.h, enum class Mode::Number
ARDUCOPTER_MODES: dict[int, str] = {
    0: 'STABILIZE', 1: 'ACRO', 2: 'ALT_HOLD', 3: 'AUTO', 4: 'GUIDED', 5: 'LOITER', 6: 'RTL',
    7: 'CIRCLE', 9: 'LAND', 11: 'DRIFT', 13: 'SPORT', 14: 'FLIP', 15: 'AUTOTUNE', 16: 'POSHOLD',
    17: 'BRAKE', 18: 'THROW', 19: 'AVOID_ADSB', 20: 'GUIDED_NOGPS', 21: 'SMART_RTL',
    22: 'FLOWHOLD', 23: 'FOLLOW', 24: 'ZIGZAG', 25: 'SYSTEMID', 26: 'AUTOROTATE', 27: 'AUTO_RTL',
    28: 'TURTLE',
}
ARDUCOPTER_NUMBERS = {name: number for number, name in ARDUCOPTER_MODES.items()}
# mode.h: allows_arming() is false (AUTO: only with AUTO_OPTIONS bit 0, off by default)
ARDUCOPTER_NO_ARM = frozenset({'AUTO', 'RTL', 'CIRCLE', 'LAND', 'FLIP', 'AUTOTUNE', 'BRAKE',
                               'AVOID_ADSB', 'SMART_RTL', 'FOLLOW', 'SYSTEMID', 'AUTOROTATE',
                               'AUTO_RTL'})
# mode.h: has_user_takeoff(must_navigate=true) -- NAV_TAKEOFF param3 = 0 means must navigate
ARDUCOPTER_TAKEOFF_MODES = frozenset({'GUIDED', 'LOITER', 'POSHOLD', 'ZIGZAG'})


@dataclass(frozen=True)
class ArduCopter(Profile):
    """ArduCopter: modes by number, everything of ours flown in GUIDED, altitudes above home."""

    def mode_name(self, custom_mode: int) -> str:
        """ArduCopter's mode name for ``custom_mode``."""
        return ARDUCOPTER_MODES.get(custom_mode, f'MODE_{custom_mode}')

    def set_mode_params(self, mode: str) -> list[float]:
        """param1 = MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, param2 = the mode number."""
        return [float(MAV_MODE_FLAG_CUSTOM_MODE_ENABLED), float(ARDUCOPTER_NUMBERS[mode])]

    def modes(self) -> list[str]:
        """ArduCopter's mode names."""
        return list(ARDUCOPTER_NUMBERS)


# -- PX4 --------------------------------------------------------------------------------
# src/modules/commander/px4_custom_mode.h
PX4_MAIN_MODES: dict[int, str] = {1: 'MANUAL', 2: 'ALTCTL', 3: 'POSCTL', 4: 'AUTO', 5: 'ACRO',
                                  6: 'OFFBOARD', 7: 'STABILIZED', 8: 'RATTITUDE', 9: 'SIMPLE',
                                  10: 'TERMINATION'}
PX4_AUTO_SUB_MODES: dict[int, str] = {1: 'READY', 2: 'TAKEOFF', 3: 'LOITER', 4: 'MISSION',
                                      5: 'RTL', 6: 'LAND', 7: 'RTGS', 8: 'FOLLOW_TARGET',
                                      9: 'PRECLAND', 10: 'VTOL_TAKEOFF'}
# The names PX4's ground stations show for them
PX4_UI_NAMES = {'AUTO_LOITER': 'Hold', 'AUTO_TAKEOFF': 'Takeoff', 'AUTO_RTL': 'Return',
                'AUTO_LAND': 'Land', 'AUTO_MISSION': 'Mission', 'POSCTL': 'Position',
                'ALTCTL': 'Altitude', 'AUTO_PRECLAND': 'Precision land'}
# ModeUtil/mode_requirements.cpp: mode_req_prevent_arming
PX4_NO_ARM = frozenset({'AUTO_RTL', 'AUTO_LAND', 'AUTO_FOLLOW_TARGET', 'AUTO_PRECLAND',
                        'TERMINATION'})


def px4_custom_mode(main: int, sub: int = 0) -> int:
    """PX4's packing of a mode into HEARTBEAT.custom_mode: main in bits 16-23, sub in 24-31."""
    return (main << 16) | (sub << 24)


def px4_unpack(custom_mode: int) -> tuple[int, int]:
    """(main, sub) of a PX4 custom_mode."""
    return (custom_mode >> 16) & 0xFF, (custom_mode >> 24) & 0xFF


def _px4_names() -> dict[str, tuple[int, int]]:
    names = {name: (main, 0) for main, name in PX4_MAIN_MODES.items() if name != 'AUTO'}
    names.update({f'AUTO_{sub_name}': (4, sub) for sub, sub_name in PX4_AUTO_SUB_MODES.items()})
    return names


PX4_MODES = _px4_names()


@dataclass(frozen=True)
class PX4(Profile):
    """PX4: main/sub modes, the vehicle switches modes for our commands, altitudes AMSL."""

    def mode_name(self, custom_mode: int) -> str:
        """PX4's mode name: 'AUTO_LOITER', 'POSCTL', ... ('MODE_main_sub' if unknown)."""
        main, sub = px4_unpack(custom_mode)
        if main == 4:
            return f'AUTO_{PX4_AUTO_SUB_MODES[sub]}' if sub in PX4_AUTO_SUB_MODES else \
                f'MODE_4_{sub}'
        return PX4_MAIN_MODES.get(main, f'MODE_{main}_{sub}')

    def set_mode_params(self, mode: str) -> list[float]:
        """param1 = MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, param2 = main mode, param3 = sub mode."""
        main, sub = PX4_MODES[mode]
        return [float(MAV_MODE_FLAG_CUSTOM_MODE_ENABLED), float(main), float(sub)]

    def modes(self) -> list[str]:
        """PX4's mode names."""
        return list(PX4_MODES)


def ardupilot_profile() -> Profile:
    """ArduCopter's rules."""
    return ArduCopter(
        name='ardupilot', label='ArduCopter', autopilot_id=MAV_AUTOPILOT_ARDUPILOTMEGA,
        flight_mode='GUIDED', hold_mode='GUIDED', no_arm_modes=ARDUCOPTER_NO_ARM,
        mode_after={'land': 'LAND', 'precision_land': 'LAND', 'rtl': 'RTL',
                    'mission_start': 'AUTO'},
        first_item_seq=1)


def px4_profile(min_takeoff_m: float = 2.5) -> Profile:
    """PX4's rules; ``min_takeoff_m`` is the vehicle's MIS_TAKEOFF_ALT (default 2.5 m)."""
    return PX4(
        name='px4', label='PX4', autopilot_id=MAV_AUTOPILOT_PX4, flight_mode='',
        hold_mode='AUTO_LOITER', no_arm_modes=PX4_NO_ARM,
        mode_after={'takeoff': 'AUTO_TAKEOFF', 'goto': 'AUTO_LOITER',
                    'set_altitude': 'AUTO_LOITER', 'hold': 'AUTO_LOITER', 'land': 'AUTO_LAND',
                    'precision_land': 'AUTO_LAND',
                    'rtl': 'AUTO_RTL', 'mission_start': 'AUTO_MISSION'},
        absolute_altitudes=True, min_takeoff_m=min_takeoff_m)


def profile_named(name: str, min_takeoff_m: float = 2.5) -> Profile:
    """The profile called ``name`` ('ardupilot' or 'px4')."""
    if name == 'ardupilot':
        return ardupilot_profile()
    if name == 'px4':
        return px4_profile(min_takeoff_m)
    raise ValueError(f'no autopilot profile {name!r} (ardupilot, px4)')


def detect(autopilot: int, vehicle_type: int) -> str | None:
    """The profile for a HEARTBEAT's ``autopilot`` and ``type`` fields; None = not one of ours.

    ArduPilot's mode numbers depend on the vehicle (Copter, Plane, Rover number them
    differently): only ArduCopter's multirotor and helicopter types are recognised.
    """
    if autopilot == MAV_AUTOPILOT_PX4:
        return 'px4'
    if autopilot == MAV_AUTOPILOT_ARDUPILOTMEGA and vehicle_type in COPTER_TYPES:
        return 'ardupilot'
    return None
