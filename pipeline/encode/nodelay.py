"""TCP_NODELAY on the connections of Python's multiprocessing, which Beam's shared objects use.

multiprocessing.connection sends a message over 16 KiB as two writes (its header, then the
payload) and then waits for the answer: with Nagle's algorithm on, the payload waits for the
peer's delayed ACK of the header, ~40 ms each way. A packed batch ([32, 256] int32, 32 KiB) and
its vectors both cross that line: measured here through Beam's MultiProcessShared proxy, 88 ms
a call with Nagle on, 0.1 ms with it off (python -m tests.benchmarks.host_ceiling --ipc).

The one place docbeam reaches into the standard library's internals (SocketClient and
SocketListener.accept): tests/encode/test_model_process.py fails loudly if they move.
"""

import fcntl
import multiprocessing.connection
import os
import socket
from typing import Any

mpc: Any = multiprocessing.connection  # SocketClient and SocketListener are internal: not in typeshed
_INSTALLED: list[bool] = []


def nodelay(conn: multiprocessing.connection.Connection) -> multiprocessing.connection.Connection:
    """Turn Nagle off on a TCP connection (a no-op on a Unix socket or a pipe)."""
    fd = conn.fileno()
    # A socket object made on the fd applies socket.getdefaulttimeout() to it, and O_NONBLOCK
    # belongs to the open file, which the dup shares: the connection's flags are put back.
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    s = socket.socket(fileno=os.dup(fd))  # options belong to the socket: the dup sets them
    try:
        if s.family in (socket.AF_INET, socket.AF_INET6):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    finally:
        s.close()
        fcntl.fcntl(fd, fcntl.F_SETFL, flags)
    return conn


def install() -> None:
    """Every multiprocessing TCP connection this process makes or accepts from now on, Nagle off."""
    if _INSTALLED:
        return
    client, accept = mpc.SocketClient, mpc.SocketListener.accept

    def socket_client(address):
        return nodelay(client(address))

    def listener_accept(self):
        return nodelay(accept(self))

    mpc.SocketClient = socket_client
    mpc.SocketListener.accept = listener_accept
    _INSTALLED.append(True)
