"""The simulated vehicle node over DDS: services for every tool, refusals, state topic."""
from __future__ import annotations

import json

import pytest
from procs import wait_until
from test_executor_nodes import RosPeer, start

pytestmark = pytest.mark.slow  # starts ROS or server processes


def test_sim_node_services_and_refusals(catalog):
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from std_msgs.msg import String
    from std_srvs.srv import SetBool, Trigger
    # the services for calls by hand: offered only without signed calls (bench testing)
    sim = start('tool_router.ros.sim_vehicle', '-p', 'prefix:=/simtest',
                '-p', 'require_signed_calls:=false', ready='simulated vehicle ready')
    peer = RosPeer()
    try:
        states = peer.watch(String, '/simtest/state',
                            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        from geometry_msgs.msg import PoseStamped, TwistStamped
        poses = peer.watch(PoseStamped, '/simtest/pose')
        velocities = peer.watch(TwistStamped, '/simtest/velocity')
        from sensor_msgs.msg import BatteryState, NavSatFix
        batteries = peer.watch(BatteryState, '/simtest/battery')
        fixes = peer.watch(NavSatFix, '/simtest/fix')
        names = dict(peer.node.get_service_names_and_types())

        def all_offered() -> bool:
            names.update(dict(peer.node.get_service_names_and_types()))
            return all(f'/simtest/{t}' in names for t in catalog.names)
        assert wait_until(all_offered, 30)
        assert names['/simtest/spotlight'] == ['std_srvs/srv/SetBool']
        assert names['/simtest/takeoff'] == ['std_srvs/srv/Trigger']
        assert names['/simtest/tool_call'] == ['tool_router/srv/ToolCall']

        # every client first (RosPeer.connect): the calls below then meet matched reply writers
        for tool in ('takeoff', 'land', 'arm_motors', 'disarm_motors', 'payload_release',
                     'battery_status'):
            peer.connect(Trigger, f'/simtest/{tool}')
        peer.connect(SetBool, '/simtest/spotlight')
        peer.connect(Trigger, '/simtest/set_altitude')
        from tool_router.srv import ToolCall
        peer.connect(ToolCall, '/simtest/tool_call')

        def trigger(tool):
            return peer.call(Trigger, f'/simtest/{tool}', Trigger.Request())
        refused = trigger('takeoff')
        assert not refused.success and 'disarmed' in refused.message
        assert not trigger('land').success
        assert trigger('arm_motors').success and trigger('takeoff').success
        refused = trigger('disarm_motors')
        assert not refused.success and 'in the air' in refused.message
        assert peer.call(SetBool, '/simtest/spotlight', SetBool.Request(data=True)).success
        assert trigger('payload_release').success
        refused = trigger('payload_release')
        assert not refused.success and 'no payload' in refused.message
        assert 'battery' in trigger('battery_status').message
        # a Trigger carries no values: a tool that needs one is refused there, never guessed
        refused = trigger('set_altitude')
        assert not refused.success and 'target altitude' in refused.message

        def call(tool, **values):
            request = ToolCall.Request(tool=tool, given=sorted(values), **values)
            return peer.call(ToolCall, '/simtest/tool_call', request)
        climbed = call('set_altitude', altitude_m=42.0)
        assert climbed.success and climbed.message == 'climbed from 10.0 m to 42.0 m'
        high = call('set_altitude', altitude_m=400.0)
        assert (high.success, high.failure_mode) == (False, 'outside_limits')
        odd = peer.call(ToolCall, '/simtest/tool_call',
                        ToolCall.Request(tool='set_altitude', given=['altitude_ft']))
        assert (odd.success, odd.failure_mode) == (False, 'bad_argument')
        assert call('no_such_tool').failure_mode == 'unknown_tool'
        assert wait_until(lambda: states and json.loads(states[-1].data)['spotlight'], 30)
        state = json.loads(states[-1].data)
        assert (state['phase'], state['payload_attached']) == ('airborne', False)
        assert state['altitude_m'] == 42.0
        # the standard messages: stamped pose in the home ENU frame
        assert wait_until(lambda: poses and poses[-1].pose.position.z == 42.0, 30)
        assert poses[-1].header.frame_id == 'map' and poses[-1].header.stamp.sec > 0
        assert json.loads(states[-1].data)['stamp'] > 0
        assert velocities and velocities[-1].header.frame_id == 'map'
        # the standard sensor messages say what the battery and gps readings say
        battery = json.loads(trigger('battery_status').message.splitlines()[-1][len('reading: '):])
        assert wait_until(lambda: batteries and abs(batteries[-1].percentage * 100.0
                                                    - battery['battery_pct']) < 1.0, 30)
        assert abs(batteries[-1].voltage - battery['voltage_v']) < 0.1
        assert batteries[-1].header.stamp.sec > 0 and batteries[-1].present
        assert wait_until(lambda: fixes and abs(fixes[-1].altitude - (408.0 + 42.0)) < 0.01, 30)
        assert fixes[-1].status.status >= 0 and fixes[-1].header.frame_id == 'gps'
    finally:
        peer.close()
        assert sim.stop() == 0
