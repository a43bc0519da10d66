"""``python -m tool_router.cli``: the same as the ``tool-router`` command."""
import sys

from tool_router.cli.main import main

sys.exit(main())
