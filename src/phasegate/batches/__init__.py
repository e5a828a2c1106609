"""Batch runs: many tasks and pipelines, in several modes and repeats, as units.

A batch file (:mod:`.model`, loaded by :mod:`.loading`) expands into units (:mod:`.units`):
one per item, mode and repeat, each with a stable id. :class:`.runner.BatchRunner` hands units
to an :class:`.executor.Executor` (in this process, or Ray), writes each finished unit's result
atomically (:mod:`.results`), and skips what is already done when run again.
"""
