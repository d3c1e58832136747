"""The world: the embedded game (map, data pack, engine, combat, observations) behind the ``World`` interface
(``api.py``), and the vocabulary every part above uses: ``effects.py`` (what an action did, structured),
``observation.py`` (what an agent sees) and ``tools.py`` (the 13 tools, one definition each, from which
every schema is derived).

May import: the standard library, third-party libraries, ``core.yamlio`` and the plugin host's ``hookspecs``.
"""
