"""The command line (``tool-router``): :mod:`.main` dispatches to the verbs' modules.

The one layer allowed to import every other one; nothing imports it.
"""
