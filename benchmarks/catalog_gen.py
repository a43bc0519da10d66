"""A synthetic benchmark catalog of N tools: the 42 shipped tools plus generated ones.

    PYTHONPATH=. python benchmarks/catalog_gen.py -n 5000 -o /tmp/catalog_5000.yaml

Generated tools are plausible companion-computer capabilities (a subsystem x an
operation, e.g. ``winch_3_calibrate``) with a summary, a description, keywords,
four example requests and, for sensors, one condition phrase. Deterministic for
a given seed. They exist to measure index build time, memory and routing
latency at scale, not routing quality.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

import yaml

SUBSYSTEMS = [
    'winch', 'gimbal', 'lidar', 'sprayer', 'spotlight', 'speaker', 'parachute', 'radio',
    'thermal_camera', 'multispectral_camera', 'gas_sensor', 'rangefinder', 'landing_gear',
    'cargo_hook', 'beacon', 'antenna', 'heater', 'fan', 'pump', 'valve', 'tether', 'sonar',
    'magnetometer', 'barometer', 'anemometer', 'hygrometer', 'dosimeter', 'microphone',
    'strobe', 'drop_box', 'seed_spreader', 'net_launcher', 'water_sampler', 'robot_arm',
]
SENSOR_OPS = [
    ('status', 'report the status of', 'is the {s} ok'),
    ('reading', 'read the current value of', 'what does the {s} read right now'),
    ('temperature', 'report the temperature of', 'how hot is the {s}'),
    ('health', 'run a health check on', 'check the health of the {s}'),
    ('log', 'fetch the recent log of', 'show me the {s} log'),
]
ACTUATOR_OPS = [
    ('enable', 'switch on', 'turn on the {s}'),
    ('disable', 'switch off', 'turn off the {s}'),
    ('calibrate', 'calibrate', 'calibrate the {s}'),
    ('reset', 'reset', 'reset the {s}'),
    ('deploy', 'deploy', 'deploy the {s}'),
    ('retract', 'retract', 'retract the {s}'),
    ('test', 'run a self test of', 'test the {s}'),
]


def synthetic_tool(i: int, rng: random.Random) -> dict[str, Any]:
    sub = SUBSYSTEMS[i % len(SUBSYSTEMS)]
    unit = i // len(SUBSYSTEMS)
    sensor = rng.random() < 0.4
    op, verb, example = rng.choice(SENSOR_OPS if sensor else ACTUATOR_OPS)
    label = f'{sub.replace("_", " ")} {unit}'
    tool: dict[str, Any] = {
        'name': f'{sub}_{unit}_{op}_{i}',
        'kind': 'sensor' if sensor else 'actuator',
        'risk': 'none' if sensor else rng.choice(['motion', 'payload']),
        'summary': f'{verb.capitalize()} {label}.',
        'description': f'{verb.capitalize()} {label} on the payload bay, unit {unit}. '
        f'Operators ask it to {verb} {label}.',
        'keywords': [f'{label}', f'{sub.replace("_", " ")} unit {unit}'],
        'examples': [
            example.format(s=label),
            f'{verb} {label} please',
            f'can you {verb} {label}',
            f'{label}: {op}',
        ],
    }
    if sensor:
        tool['conditions'] = [f'when the {label} {op} changes']
    return tool


def generate(n: int, base: Path, seed: int = 0) -> dict[str, Any]:
    """A catalog dict with the shipped tools first, then generated ones, ``n`` in all."""
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    shipped = yaml.load(base.read_text(encoding='utf-8'), Loader=loader)
    tools = list(shipped['tools'])[:n]
    rng = random.Random(seed)
    i = 0
    while len(tools) < n:
        tools.append(synthetic_tool(i, rng))
        i += 1
    return {'version': shipped.get('version', 1), 'tools': tools}


def write(n: int, out: Path, base: Path, seed: int = 0) -> Path:
    dumper = getattr(yaml, 'CSafeDumper', yaml.SafeDumper)  # libyaml: seconds, not minutes
    text = yaml.dump(generate(n, base, seed), Dumper=dumper, sort_keys=False)
    out.write_text(text, encoding='utf-8')
    return out


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-n', type=int, default=5000)
    ap.add_argument('-o', '--out', type=Path, required=True)
    ap.add_argument('--seed', type=int, default=0)
    args = ap.parse_args()
    write(args.n, args.out, root / 'config' / 'catalog.yaml', args.seed)
    print(args.out)


if __name__ == '__main__':
    main()
