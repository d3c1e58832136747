"""Runs: many episodes and what a reviewer reads of them. The grid of tasks x frameworks x models x variants
(``run_spec.py``, ``runner.py``; one episode's job in ``jobs.py``, across machines in ``distributed.py``),
resumable and locked (``lock.py``, ``integrity.py``, ``provenance.py``); reports and exports (``report.py``,
``html_report.py``, ``stats.py``, ``export.py``); the task proofs (``prove.py``, ``knowledge.py``,
``prove_variants.py``) and the augmented suite (``augment.py``); benchmarks (``bench*.py``).

May import: ``core.world``, ``core.tasks``, ``core.play``, ``core.cce``, the plugin host.
"""
