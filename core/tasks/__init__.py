"""Tasks: the task YAML schema and loader with its validation against the world (``task.py``), verification
by named checks found through the plugin host (``verify.py``), and the protocol variants (``variants.py``).

May import: ``core.world``, the plugin host, ``core.yamlio``.
"""
