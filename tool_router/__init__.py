"""tool_router: route natural-language UAV requests to an allowlisted tool catalog.

The generated ROS interfaces (``tool_router.msg``, ``tool_router.srv``) are
installed by CMake into the same package directory as this code. When the
package is imported from a source checkout (tests run from the repository
root), ``extend_path`` adds the installed copy so that the generated
sub-packages resolve as well.
"""
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
__version__ = '0.1.0'
