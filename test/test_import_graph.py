"""The import graph of tool_router: no cycle, no arrow from the core to the CLI or ROS glue."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / 'scripts' / 'import_graph.py'


def load():
    spec = importlib.util.spec_from_file_location('import_graph', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_cycle_and_no_upward_arrow():
    graph = load()
    edges = graph.graph()
    assert 'tool_router.router' in edges['tool_router.nodes.router_node']  # arrows are seen
    assert graph.cycles(edges) == []
    assert graph.upward(edges) == []


def test_the_checker_sees_a_cycle_and_an_upward_arrow():
    graph = load()
    edges = {'a': {'b'}, 'b': {'a'}, 'tool_router.x': {'tool_router.cli_core'},
             'tool_router.cli_core': set()}
    assert graph.cycles(edges) == [['a', 'b']]
    assert graph.upward(edges) == [('tool_router.x', 'tool_router.cli_core')]
