"""The first program of a confined check whose run lists hosts: the sandbox's one way out.

A confined command runs in a network namespace of its own, with no route anywhere, and may
not make a Unix socket (the sandbox's seccomp filter). This program, run inside the sandbox
by the gate's own interpreter (``python -I -S proxy_bridge.py FD PORT COMMAND...``, the
standard library only), listens on ``127.0.0.1:PORT`` before the command starts (so its
first connection finds it), then forks: the child hands each connection it accepts, as a
file descriptor, over ``FD`` (one end of a socket pair the gate made before the sandbox
started) to :class:`~phasegate.workspace.host_proxy.HostProxy`, which lets it through to a
listed host or refuses it; the parent becomes the command (``exec``), so the command's exit
status is the sandbox's. The child dies with the sandbox.

Nothing here trusts the command: whatever it sends through this program, the proxy outside
decides where it may go.
"""

from __future__ import annotations

import os
import socket
import sys


def main(argv: list[str]) -> None:
    """``argv``: this program, the socket's descriptor, the port, then the command."""
    channel = socket.socket(fileno=int(argv[1]))
    port = int(argv[2])
    command = argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    if os.fork() == 0:  # the carrier: its output is not the command's
        try:
            quiet = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(quiet, fd)
            carry(listener, channel)
        finally:
            os._exit(0)
    listener.close()
    channel.close()
    os.execvp(command[0], command)


def carry(listener: socket.socket, channel: socket.socket) -> None:
    """Hand every connection ``listener`` accepts over ``channel``, until either closes."""
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        try:
            socket.send_fds(channel, [b"c"], [connection.fileno()])
        except OSError:
            return
        finally:
            connection.close()


if __name__ == "__main__":
    main(sys.argv)
