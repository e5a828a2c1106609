"""Matching relative POSIX paths against globs: :func:`glob_matches`, shared with the
inference rules of task inputs, lives in :mod:`phasegate._files.globs`."""

from phasegate._files.globs import glob_matches

__all__ = ["glob_matches"]
