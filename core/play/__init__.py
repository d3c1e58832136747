"""Play: one episode. The loop and the turn gate (``episode.py``), the team protocol frameworks implement
(``protocol.py``), what an episode writes (``records.py``, ``trajectory.py``), prompts and their templates
(``prompts.py``), model specs (``models.py``) and the scripted policies oracle, random and idle
(``policies.py``).

May import: ``core.world``, ``core.tasks``, the plugin host.
"""
