"""GitHub Actions: a phasegate report as step outputs, a job summary and annotations.

An edge, like ``_cli``: it reads the reports the library writes and never runs an agent; the
library never imports it. The report file itself is untrusted, so
:mod:`~phasegate._github.report_file` reads it bounded and refuses it safely. Everything a
report holds is untrusted text (model output, file names, tool output), so every byte that
reaches the runner goes through :mod:`~phasegate._github.workflow_commands` (stdout),
:mod:`~phasegate._github.outputs` (``GITHUB_OUTPUT``) or :mod:`~phasegate._github.markdown`
(the job summary).
"""
