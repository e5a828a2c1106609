"""Recordings: one folder per run with its report, transcript, gate checks and diffs
(``docs/recordings.md``), read back and rendered as the run's page."""
