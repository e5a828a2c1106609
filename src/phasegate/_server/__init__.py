"""``phasegate serve``: tasks and pipelines over HTTP, their events as Server-Sent Events.

An edge like the command line: it uses the library and the library never imports it. The
wire schema lives in :mod:`phasegate.client.schema`, shared with the Python client.
"""
