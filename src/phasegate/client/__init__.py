"""The Python client of ``phasegate serve``, and the service's wire schema.

:mod:`.schema` holds the request and response bodies both sides use; the client itself needs
the ``client`` extra (httpx).
"""
