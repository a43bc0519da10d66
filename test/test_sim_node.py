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
    sim = start('tool_router.ros.sim_vehicle', '-p', 'prefix:=/simtest',
                ready='simulated vehicle ready')
    peer = RosPeer()
    try:
        states = peer.watch(String, '/simtest/state',
                            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        names = dict(peer.node.get_service_names_and_types())

        def all_offered() -> bool:
            names.update(dict(peer.node.get_service_names_and_types()))
            return all(f'/simtest/{t}' in names for t in catalog.names)
        assert wait_until(all_offered, 30)
        assert names['/simtest/spotlight'] == ['std_srvs/srv/SetBool']
        assert names['/simtest/takeoff'] == ['std_srvs/srv/Trigger']

        # every client first (RosPeer.connect): the calls below then meet matched reply writers
        for tool in ('takeoff', 'land', 'arm_motors', 'disarm_motors', 'payload_release',
                     'battery_status'):
            peer.connect(Trigger, f'/simtest/{tool}')
        peer.connect(SetBool, '/simtest/spotlight')

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
        assert wait_until(lambda: states and json.loads(states[-1].data)['spotlight'], 30)
        state = json.loads(states[-1].data)
        assert (state['phase'], state['payload_attached']) == ('airborne', False)
    finally:
        peer.close()
        assert sim.stop() == 0
