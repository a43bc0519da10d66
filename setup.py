"""pip install of the pure-Python core (catalog, policies, evaluation, CLI) without ROS.

The ROS package (interfaces, nodes, share/ files) is built by CMake
(CMakeLists.txt), either with `colcon build` or by scripts/setup.sh; see
docs/BUILD.md. This file serves users who want the router as a library.
"""
from glob import glob
from pathlib import Path

from setuptools import find_packages, setup

package_name = 'tool_router'
# The runtime requirements (requirements.txt, also what package.xml declares for rosdep).
requirements = [line.split('#')[0].strip() for line in
                Path(__file__).with_name('requirements.txt').read_text().splitlines()]

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(include=[package_name, f'{package_name}.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{package_name}']),
        (f'share/{package_name}', ['package.xml']),
        (f'share/{package_name}/config', [f for f in glob('config/*') if Path(f).is_file()]),
        (f'share/{package_name}/config/sros2', glob('config/sros2/*.xml')),
        (f'share/{package_name}/launch', glob('launch/*.py')),
        (f'share/{package_name}/msg', glob('msg/*.msg')),
        (f'share/{package_name}/srv', glob('srv/*.srv')),
        # The reporting (test) splits, for the fitting guard (evaluation/fitting/guard.py).
        *[(f'share/{package_name}/{d}', [f for f in glob(f'{d}/test*.jsonl')])
          for d in sorted({p.rsplit('/', 1)[0] for p in glob('benchmarks/data/**/test*.jsonl',
                                                              recursive=True)})],
    ],
    install_requires=[r for r in requirements if r],
    extras_require={'dev': [line.split('#')[0].strip() for line in
                            Path(__file__).with_name('requirements-dev.txt').read_text()
                            .splitlines() if line.split('#')[0].strip()]},
    zip_safe=True,
    maintainer='tool_router maintainers',
    maintainer_email='tool-router@example.com',
    description='Route natural-language UAV requests to an allowlisted tool catalog.',
    license='Apache-2.0',
    license_files=['LICENSE'],
    entry_points={'console_scripts': ['tool-router = tool_router.cli.main:main']},
)
