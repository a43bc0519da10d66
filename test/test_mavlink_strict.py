"""The strict simulator refuses what ArduCopter and PX4 refuse, and the executor says why.

Two kinds of test over real UDP on 127.0.0.1:

* raw commands (``MavlinkLink.command``, no executor logic) show the simulator behaves like
  the stack it imitates -- the behaviours issue 25 found a lenient simulator hid (a take-off
  in STABILIZE, PX4's AMSL altitudes, the auto-disarm, arming after an RTL);
* the executor's own refusals: what it will not send, and the reason it gives.
"""
from __future__ import annotations

import math
import threading

import pytest

pytest.importorskip('pymavlink')

from mavlink_rig import make_rig, wait_for  # noqa: E402

M = pytest.importorskip('pymavlink.mavutil').mavlink
pytestmark = pytest.mark.slow
NAN = math.nan
ARM, TAKEOFF = M.MAV_CMD_COMPONENT_ARM_DISARM, M.MAV_CMD_NAV_TAKEOFF
SET_MODE, REPOSITION = M.MAV_CMD_DO_SET_MODE, M.MAV_CMD_DO_REPOSITION
REL_INT, GLOBAL_INT = M.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT, M.MAV_FRAME_GLOBAL_INT
LAT, LON = int(47.3980e7), int(8.5460e7)


@pytest.fixture
def ardupilot(catalog):
    rig = make_rig(catalog, 'ardupilot', sim_kwargs={'disarm_delay_s': 3.0})
    yield rig
    rig.close()


@pytest.fixture
def px4(catalog):
    rig = make_rig(catalog, 'px4', sim_kwargs={'disarm_delay_s': 3.0})
    yield rig
    rig.close()


def cmd(rig, command, params, **kwargs):
    result, note = rig.link.command(command, params, 2.0, **kwargs)
    assert result is not None, note
    return result


def ac_mode(name):
    return [1.0, float({'STABILIZE': 0, 'GUIDED': 4, 'LOITER': 5, 'RTL': 6, 'LAND': 9}[name])]


def fly(rig, height=10.0):
    record, t = rig.run(['arm_motors', 'takeoff'], f'arm and take off to {height:g} m')
    assert [x.outcome for x in record.tools] == ['dispatched'] * 2, \
        [(x.tool, x.message) for x in record.tools]


# -- ArduCopter, raw -------------------------------------------------------------------------
def test_arducopter_boots_in_stabilize_where_arming_works_but_takeoff_fails(ardupilot):
    assert ardupilot.link.mode() == 'STABILIZE'
    assert cmd(ardupilot, ARM, [1.0]) == M.MAV_RESULT_ACCEPTED
    assert cmd(ardupilot, TAKEOFF, [0, 0, 0, NAN, NAN, NAN, 20.0]) == M.MAV_RESULT_FAILED
    assert ardupilot.sim.snapshot()['alt'] == 0.0
    # left armed on the ground it disarms itself after DISARM_DELAY (3 s in this rig)
    assert wait_for(lambda: not ardupilot.sim.snapshot()['armed'], timeout_s=20.0)
    assert any('DISARM_DELAY' in text for text in ardupilot.sim.snapshot()['texts'])


def test_arducopter_reposition_outside_guided_needs_the_change_mode_bit(ardupilot):
    fly(ardupilot)
    assert cmd(ardupilot, SET_MODE, ac_mode('LOITER')) == M.MAV_RESULT_ACCEPTED
    assert wait_for(lambda: ardupilot.link.mode() == 'LOITER')
    params = [-1.0, 0.0, 0.0, NAN, 0, 0, 15.0]
    assert cmd(ardupilot, REPOSITION, params, frame=REL_INT, x=LAT, y=LON) == M.MAV_RESULT_DENIED
    params[1] = 1.0  # MAV_DO_REPOSITION_FLAGS_CHANGE_MODE
    assert cmd(ardupilot, REPOSITION, params, frame=REL_INT, x=LAT, y=LON) == \
        M.MAV_RESULT_ACCEPTED
    assert wait_for(lambda: ardupilot.link.mode() == 'GUIDED')
    # a take-off sent as COMMAND_INT must use the relative frame
    assert cmd(ardupilot, TAKEOFF, [0, 0, 0, NAN, 0, 0, 30.0], frame=REL_INT) == \
        M.MAV_RESULT_DENIED


def test_arducopter_refuses_arming_in_rtl_and_disarming_in_the_air(ardupilot):
    fly(ardupilot)
    assert cmd(ardupilot, ARM, [0.0]) == M.MAV_RESULT_FAILED  # disarm while flying
    assert cmd(ardupilot, M.MAV_CMD_DO_PAUSE_CONTINUE, [0.0]) == M.MAV_RESULT_ACCEPTED  # GUIDED
    assert cmd(ardupilot, M.MAV_CMD_NAV_RETURN_TO_LAUNCH, []) == M.MAV_RESULT_ACCEPTED
    assert wait_for(lambda: not ardupilot.sim.snapshot()['armed'], timeout_s=30.0)  # on landing
    assert ardupilot.sim.snapshot()['mode'] == 'RTL'  # it stays in RTL
    assert cmd(ardupilot, ARM, [1.0]) == M.MAV_RESULT_FAILED
    assert any('not armable' in text for text in ardupilot.sim.snapshot()['texts'])
    assert cmd(ardupilot, M.MAV_CMD_DO_PAUSE_CONTINUE, [0.0]) == M.MAV_RESULT_FAILED  # not GUIDED
    assert cmd(ardupilot, SET_MODE, [0.0, 4.0]) == M.MAV_RESULT_DENIED  # no custom-mode flag
    assert cmd(ardupilot, SET_MODE, [1.0, 77.0]) == M.MAV_RESULT_FAILED  # no such mode
    assert cmd(ardupilot, M.MAV_CMD_DO_CHANGE_ALTITUDE, [30.0, 3.0]) == M.MAV_RESULT_UNSUPPORTED


# -- PX4, raw -----------------------------------------------------------------------------------
def test_px4_reads_takeoff_altitude_as_amsl_and_raises_it_to_the_minimum(px4):
    sim = px4.sim
    assert px4.link.mode() == 'AUTO_LOITER'
    assert cmd(px4, ARM, [1.0]) == M.MAV_RESULT_ACCEPTED
    # "take off to 20 m" sent as if it were above home: PX4 reads 20 m AMSL, 468 m below home
    assert cmd(px4, TAKEOFF, [0, 0, 0, NAN, NAN, NAN, 20.0]) == M.MAV_RESULT_ACCEPTED
    assert wait_for(lambda: sim.snapshot()['alt'] > 2.0 and sim.snapshot()['takeoff_alt'] is None,
                    timeout_s=20.0)  # the take-off is over
    assert abs(sim.snapshot()['alt'] - 2.5) < 0.1  # MIS_TAKEOFF_ALT, not 20 m
    assert wait_for(lambda: px4.link.mode() == 'AUTO_LOITER')  # and PX4 holds there
    assert 'Using minimum takeoff altitude: 2.50 m' in sim.snapshot()['texts']


def test_px4_reposition_z_is_amsl_whatever_the_frame(px4):
    fly(px4, 20.0)
    # z = 25 in the relative frame: PX4 flies towards 25 m AMSL, i.e. into the ground
    params = [-1.0, 1.0, 0.0, NAN, 0, 0, 25.0]
    assert cmd(px4, REPOSITION, params, frame=REL_INT, x=LAT, y=LON) == M.MAV_RESULT_ACCEPTED
    assert px4.sim.snapshot()['target_alt'] == pytest.approx(25.0 - 488.0)
    assert wait_for(lambda: px4.sim.snapshot()['alt'] < 15.0, timeout_s=20.0)  # descending
    params[6] = 488.0 + 25.0  # what the executor sends: AMSL, frame GLOBAL_INT
    assert cmd(px4, REPOSITION, params, frame=GLOBAL_INT, x=LAT, y=LON) == M.MAV_RESULT_ACCEPTED
    assert px4.sim.snapshot()['target_alt'] == pytest.approx(25.0)
    params[1] = 0.0  # without the change-mode bit PX4 does not reposition
    assert cmd(px4, REPOSITION, params, frame=GLOBAL_INT, x=LAT, y=LON) == \
        M.MAV_RESULT_UNSUPPORTED


def test_px4_takeoff_while_disarmed_is_accepted_and_climbs_at_arming(px4):
    """Why the executor refuses a take-off while disarmed: PX4 would take off at the arm."""
    assert cmd(px4, TAKEOFF, [0, 0, 0, NAN, NAN, NAN, 488.0 + 10.0]) == M.MAV_RESULT_ACCEPTED
    assert wait_for(lambda: px4.link.mode() == 'AUTO_TAKEOFF')
    assert px4.sim.snapshot()['alt'] == 0.0
    assert cmd(px4, ARM, [1.0]) == M.MAV_RESULT_ACCEPTED
    assert wait_for(lambda: px4.sim.snapshot()['alt'] > 9.0, timeout_s=20.0)


def test_px4_refuses_arming_in_return_and_disarms_after_landing(px4):
    sim = px4.sim
    fly(px4)
    assert cmd(px4, ARM, [0.0]) == M.MAV_RESULT_TEMPORARILY_REJECTED  # not landed
    assert cmd(px4, M.MAV_CMD_DO_PAUSE_CONTINUE, [0.0]) == M.MAV_RESULT_UNSUPPORTED
    assert cmd(px4, M.MAV_CMD_CONDITION_YAW, [90.0, 30.0, 0.0, 0.0]) == M.MAV_RESULT_UNSUPPORTED
    assert cmd(px4, M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, [1.0]) == M.MAV_RESULT_DENIED  # armed
    assert cmd(px4, M.MAV_CMD_NAV_RETURN_TO_LAUNCH, []) == M.MAV_RESULT_ACCEPTED
    assert wait_for(lambda: sim.snapshot()['phase'] == 'ground', timeout_s=60.0)
    assert sim.snapshot()['mode'] == 'AUTO_RTL' and sim.snapshot()['armed']
    # COM_DISARM_LAND after touchdown, then back to the last mode that allows arming
    assert wait_for(lambda: not sim.snapshot()['armed'], timeout_s=20.0)
    assert sim.snapshot()['mode'] == 'AUTO_LOITER'
    # disarmed, any mode may be selected; Return then refuses the arm
    assert cmd(px4, M.MAV_CMD_NAV_RETURN_TO_LAUNCH, []) == M.MAV_RESULT_ACCEPTED
    assert cmd(px4, ARM, [1.0]) == M.MAV_RESULT_TEMPORARILY_REJECTED
    assert any('Arming denied' in text for text in sim.snapshot()['texts'])
    assert cmd(px4, SET_MODE, [1.0, 4.0, 3.0]) == M.MAV_RESULT_ACCEPTED  # Hold
    assert cmd(px4, ARM, [1.0]) == M.MAV_RESULT_ACCEPTED
    assert wait_for(lambda: not sim.snapshot()['armed'], timeout_s=20.0)  # COM_DISARM_PRFLT
    assert any('preflight' in text for text in sim.snapshot()['texts'])


# -- the executor's refusals ----------------------------------------------------------------
def test_px4_takeoff_below_the_minimum_is_refused_not_reported_done(px4):
    px4.run(['arm_motors'], 'arm')
    _, t = px4.run(['takeoff'], 'take off to 2 m')
    assert t['takeoff'].failure_mode == 'outside_limits'
    assert 'minimum take-off altitude 2.5 m' in t['takeoff'].message
    assert 'MAV_CMD_NAV_TAKEOFF' not in px4.flight_commands()


def test_px4_without_home_altitude_takeoff_and_goto_are_refused(catalog):
    rig = make_rig(catalog, 'px4', sim_kwargs={'gps_delay_s': 1e9}, wait_streams=False)
    try:
        assert wait_for(lambda: rig.link.latest('SYS_STATUS') is not None)
        _, t = rig.run(['takeoff'], 'take off to 20 m')
        assert t['takeoff'].failure_mode == 'no_home', t['takeoff'].message
        assert 'home altitude is unknown' in t['takeoff'].message
        _, t = rig.run(['goto_waypoint'], 'fly to 47.3980, 8.5460 at 25 m')
        assert t['goto_waypoint'].failure_mode == 'no_home'
        _, t = rig.run(['arm_motors'], 'arm')  # and PX4 itself will not arm without a position
        assert t['arm_motors'].failure_mode == 'mav_temporarily_rejected'
        assert rig.flight_commands() == ['MAV_CMD_COMPONENT_ARM_DISARM']
    finally:
        rig.close()


def test_motion_needs_the_right_state_and_says_so(ardupilot):
    _, t = ardupilot.run(['goto_waypoint'], 'fly to 47.3980, 8.5460 at 25 m')
    assert t['goto_waypoint'].failure_mode == 'not_ready'
    assert 'take off first' in t['goto_waypoint'].message
    fly(ardupilot)
    _, t = ardupilot.run(['takeoff'], 'take off to 30 m')
    assert t['takeoff'].failure_mode == 'not_ready'
    assert 'already in the air' in t['takeoff'].message
    _, t = ardupilot.run(['set_altitude'], 'climb to 30 m')
    assert t['set_altitude'].outcome == 'dispatched', t['set_altitude'].message
    assert 'to 30 m above home (518.0 m AMSL) (here), mode GUIDED: accepted; reached' in \
        t['set_altitude'].message


def test_a_refused_mode_switch_stops_the_command(ardupilot):
    ardupilot.sim.force_results[SET_MODE] = M.MAV_RESULT_FAILED
    _, t = ardupilot.run(['arm_motors'], 'arm')
    assert t['arm_motors'].failure_mode == 'mode_change_failed'
    assert 'mode switch to GUIDED: failed by the vehicle' in t['arm_motors'].message
    # acknowledged, but the HEARTBEAT never shows GUIDED: still not armed
    ardupilot.sim.force_results[SET_MODE] = M.MAV_RESULT_ACCEPTED
    _, t = ardupilot.run(['arm_motors'], 'arm')
    assert t['arm_motors'].failure_mode == 'mode_change_failed'
    assert 'HEARTBEAT still shows STABILIZE' in t['arm_motors'].message
    assert 'MAV_CMD_COMPONENT_ARM_DISARM' not in ardupilot.flight_commands()


def test_a_reposition_interrupted_on_the_way_or_not_finished_in_time(catalog):
    rig = make_rig(catalog, 'ardupilot', call_timeout_s=4.0,
                   sim_kwargs={'cruise_mps': 3.0})
    try:
        fly(rig)
        _, t = rig.run(['goto_waypoint'], 'fly to 47.3985, 8.5465 at 10 m')  # ~105 m away
        assert t['goto_waypoint'].failure_mode == 'not_arrived', t['goto_waypoint'].message
        assert 'not there when the call budget ran out' in t['goto_waypoint'].message
        switch = threading.Timer(1.0, lambda: rig.link.command(SET_MODE, ac_mode('LOITER'), 2.0))
        switch.start()
        _, t = rig.run(['goto_waypoint'], 'fly to 47.3977, 8.5456 at 10 m')
        switch.join()
        assert t['goto_waypoint'].failure_mode == 'interrupted', t['goto_waypoint'].message
        assert 'switched to LOITER' in t['goto_waypoint'].message
    finally:
        rig.close()


def test_configured_autopilot_that_disagrees_with_the_heartbeat_blocks_motion(catalog):
    rig = make_rig(catalog, 'ardupilot', autopilot='px4')
    try:
        _, t = rig.run(['arm_motors'], 'arm')
        assert t['arm_motors'].failure_mode == 'autopilot_mismatch'
        assert 'configured for px4 but the HEARTBEAT says ardupilot' in t['arm_motors'].message
        _, t = rig.run(['battery_status'], 'battery?')  # readings do not depend on the rules
        assert t['battery_status'].outcome == 'dispatched'
        assert rig.flight_commands() == []
    finally:
        rig.close()
