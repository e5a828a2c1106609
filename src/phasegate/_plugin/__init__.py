"""phasegate as a Claude Code plugin: the commands and hooks of a gated task in the user's own
session (``docs/plugin.md``).

An edge, like ``_cli``: it uses the library and the library never imports it. The launcher
``plugin/bin/phasegate-plugin`` runs ``python -m phasegate._plugin``; the hook entry points
(:mod:`.lean`) import only the standard library and :mod:`.state` unless the session has gated
work, and only the Stop hook and the commands (:mod:`.gated`) load the gate.
"""
