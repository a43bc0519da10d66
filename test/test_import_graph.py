"""The import graph of tool_router: no cycle, and every arrow between allowed layers."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / 'scripts' / 'import_graph.py'


def load():
    spec = importlib.util.spec_from_file_location('import_graph', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_cycle_and_no_forbidden_arrow():
    graph = load()
    edges = graph.graph()
    assert 'tool_router.routing.router' in edges['tool_router.ros.router_node']  # arrows are seen
    assert graph.cycles(edges) == []
    assert graph.upward(edges) == []


def test_the_checker_sees_a_cycle_and_each_kind_of_forbidden_arrow():
    graph = load()
    edges = {'a': {'b'}, 'b': {'a'},
             'tool_router.common.x': {'tool_router.routing.router'},       # common -> a wing
             'tool_router.routing.y': {'tool_router.executor.pipeline'},   # wing -> wing
             'tool_router.executor.z': {'tool_router.ros.session'},        # core -> ROS glue
             'tool_router.evaluation.w': {'tool_router'},                  # core -> interfaces
             'tool_router.ros.v': {'tool_router.cli.core', 'tool_router'},  # glue -> CLI
             'tool_router.cli.core': {'tool_router.routing.y'}}  # the CLI may import anything
    assert graph.cycles(edges) == [['a', 'b']]
    assert graph.upward(edges) == [
        ('tool_router.common.x', 'tool_router.routing.router'),
        ('tool_router.evaluation.w', 'tool_router'),
        ('tool_router.executor.z', 'tool_router.ros.session'),
        ('tool_router.ros.v', 'tool_router.cli.core'),
        ('tool_router.routing.y', 'tool_router.executor.pipeline'),
    ]
