"""nodes.common.spin: a callback error after Ctrl-C shut the context down is a clean stop;
one while running is a crash. Each case runs in its own process (rclpy's default context)."""
import subprocess
import sys

import pytest
from procs import ROOT

SCRIPT = '''
import rclpy
from rclpy.node import Node
from tool_router.ros.common import spin

class Failing(Node):
    def __init__(self):
        super().__init__('spin_probe')
        self.create_timer(0.05, self.tick)

    def tick(self):
        if {shutdown}:
            rclpy.shutdown()  # as rclpy's SIGINT handler does, while this callback runs
        raise RuntimeError('publisher context is invalid')

raise SystemExit(spin(Failing, threads=2))
'''


@pytest.mark.parametrize('shutdown, code', [(True, 0), (False, 1)])
def test_a_callback_error_is_a_crash_only_while_running(shutdown, code):
    proc = subprocess.run([sys.executable, '-c', SCRIPT.format(shutdown=shutdown)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == code, proc.stderr[-2000:]
    assert 'publisher context is invalid' in proc.stderr
    if shutdown:
        assert 'stopped during a callback (RuntimeError' in proc.stderr
