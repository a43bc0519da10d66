"""One source of defaults: the shipped YAML files equal the configuration models' defaults."""
from __future__ import annotations

from tool_router.executor.config import ExecutorConfig, load_executor_config
from tool_router.routing.config import RouterConfig, load_router_config


def flat(values: dict, prefix: str = '') -> dict:
    out = {}
    for key, value in values.items():
        if isinstance(value, dict) and key != 'bindings':
            out.update(flat(value, f'{prefix}{key}.'))
        else:
            out[f'{prefix}{key}'] = value
    return out


def differences(model, shipped) -> dict:
    a, b = flat(model.model_dump(mode='json')), flat(shipped.model_dump(mode='json'))
    return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def test_the_shipped_router_yaml_equals_the_router_models_defaults():
    assert differences(RouterConfig(), load_router_config()) == {}


def test_the_shipped_executor_yaml_only_adds_the_simulator_bindings():
    diff = differences(ExecutorConfig(), load_executor_config())
    assert list(diff) == ['bindings']
    model, shipped = diff['bindings']
    assert model == {} and len(shipped) == 42  # every catalog tool bound to the simulator


def test_a_diverging_default_is_named():
    changed = load_router_config().model_copy(deep=True)
    changed.hybrid.gate_margin = 0.5
    assert differences(RouterConfig(), changed) == {'hybrid.gate_margin': (0.9338, 0.5)}
