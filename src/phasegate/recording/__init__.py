"""Recordings: one folder per run that says what happened in it (``docs/recordings.md``).

A run that is recorded keeps, as it goes, every gate check with the exact text the agent got
back (:class:`~phasegate.recording.recorder.Recorder`) and the text of the work directory's
files (:class:`~phasegate.workspace.contents.FileContents`); when it ends, however it ends,
the runner hands over the report, the transcript and its parts, and the recorder writes the
folder: the manifest, the report, the transcript, the checks and a bounded unified diff per
part (:mod:`~phasegate.recording.diffs`), made whole in a sibling folder and renamed into
place (:mod:`~phasegate.recording.folder`).

Read back, a folder is checked against the contract (:mod:`~phasegate.recording.reading`) and
rendered as the run's page (:mod:`~phasegate.recording.page`).
"""
