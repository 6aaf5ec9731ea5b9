#!/usr/bin/python3
"""A unix-socket server that is not Docker, for the probe tests.

usage: lib-probe-fake-http.py SOCKET MODE
  hello    HTTP 200 with the JSON {"hello": 1} for every path
  garbage  HTTP 200 with a body that is not JSON
  nothttp  bytes that are not an HTTP response at all
  close    reads the request, closes without a reply
Creates SOCKET.ready once listening; serves until killed; counts connections in SOCKET.count (one line each).
"""
import os
import socket
import sys

BODIES = {
    "hello": b'{"hello": 1}',
    "garbage": b'\x00\xff<html>definitely not json',
}


def answer(conn, mode):
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk
    if mode == "close":
        # After the request: an empty reply, not a refused connection.
        return
    if mode == "nothttp":
        conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
        return
    body = BODIES[mode]
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    conn.sendall(head + body)


def main():
    path, mode = sys.argv[1], sys.argv[2]
    if mode not in ("hello", "garbage", "nothttp", "close"):
        sys.exit("unknown mode " + mode)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    # Ready only once listening: the socket file exists from bind() on.
    open(path + ".ready", "w").close()
    while True:
        conn, _ = s.accept()
        with open(path + ".count", "a") as f:
            f.write("conn\n")
        try:
            answer(conn, mode)
        except OSError:
            pass
        finally:
            conn.close()


main()
