"""Causal Collaboration Effectiveness: episode data and the causal graph (``graph.py``), the paper's backward
sweep (``paper.py``), engine-grounded edges (``grounded.py``), judges and their cache (``judges.py``,
``prompts.py``), scoring and storage (``score.py``), judge comparison (``compare.py``), drawing (``svg.py``)
and synthetic episodes for benchmarks (``synth.py``).

May import: ``core.world``, ``core.tasks``, ``core.play``, the plugin host. Judges know nothing of the
world's internals: they read episode records.
"""
