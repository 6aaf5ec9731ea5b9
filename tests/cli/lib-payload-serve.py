#!/usr/bin/env python3
"""Drives `agsbx-payload serve` on the host and checks its framing and how
it starts programs (conformance/payload/serve.c; docs/payload.md). Each
scenario prints what it saw; any mismatch exits 1 with a one-line reason.

    lib-payload-serve.py PAYLOAD WORKDIR
"""
import os
import select
import struct
import subprocess
import sys
import time

PAYLOAD, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


class Server:
    def __init__(self, env=None):
        self.p = subprocess.Popen([PAYLOAD, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env if env is not None else {"A": "1", "PATH": "/usr/bin:/bin"},
                                  cwd="/")
        self.buf = b""
        self.out, self.err, self.end = {}, {}, {}
        t, i, b = self.frame(10)
        if (t, i, b) != ("H", 0, b"agsbx-serve 1"):
            fail("greeting: %r" % ((t, i, b),))

    def read(self, n, timeout):
        until = time.time() + timeout
        fd = self.p.stdout.fileno()
        while len(self.buf) < n:
            left = until - time.time()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
            c = os.read(fd, 1 << 20)
            if not c:
                raise EOFError
            self.buf += c
        b, self.buf = self.buf[:n], self.buf[n:]
        return b

    def frame(self, timeout=10):
        h = self.read(9, timeout)
        t = chr(h[0])
        i, n = struct.unpack(">II", h[1:])
        return t, i, self.read(n, timeout)

    def send(self, rid, argv, env=(), cwd="/"):
        strs = [cwd] + list(argv) + list(env)
        body = struct.pack(">II", len(argv), len(env)) + b"".join(s.encode() + b"\0" for s in strs)
        self.p.stdin.write(b"R" + struct.pack(">II", rid, len(body)) + body)
        self.p.stdin.flush()

    def until_end(self, rid, timeout=10):
        """Frames until rid's end ('Z' or 'F'); returns (type, body)."""
        while rid not in self.end:
            t, i, b = self.frame(timeout)
            if t in "OE":
                d = self.out if t == "O" else self.err
                d[i] = d.get(i, b"") + b
            elif t in "ZF":
                self.end[i] = (t, b)
            else:
                fail("unexpected frame %r for %d" % (t, i))
        return self.end[rid]

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(10)
        return rc, self.p.stderr.read()


def z(body):
    kind, value, held = struct.unpack(">III", body)
    return kind, value, held


def op_json(sv, rid):
    import json
    return json.loads(sv.out.get(rid, b"{}").decode())


def expect(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


sv = Server()
# Exit codes and signals as the kernel reports them.
sv.send(1, [PAYLOAD, "exit", "42"])
sv.send(2, [PAYLOAD, "kill-self", "15"])
expect(sv.until_end(1) == ("Z", struct.pack(">III", 0, 42, 0)), "exit 42 is reported as exit code 42")
expect(sv.until_end(2) == ("Z", struct.pack(">III", 1, 15, 0)), "a SIGTERM death is reported as signal 15")

# The environment: the server's, overlaid by the request's.
sv.send(3, [PAYLOAD, "env", "A"], ["B=2"])
sv.send(4, [PAYLOAD, "env", "A"], ["A=7"])
sv.until_end(3)
sv.until_end(4)
j3, j4 = op_json(sv, 3), op_json(sv, 4)
expect(j3.get("value") == "1" and j3.get("count") == 3, "the server's A=1 and PATH reach the program beside B=2: %s" % j3)
expect(j4.get("value") == "7" and j4.get("count") == 2, "the request's A=7 replaces the server's A=1: %s" % j4)

# The directory, and no descriptor of the server's beyond 0, 1, 2.
with open(os.path.join(WORK, "here"), "w") as f:
    f.write("in-workdir\n")
sv.send(5, [PAYLOAD, "read", "here"], cwd=WORK)
sv.send(6, [PAYLOAD, "fds", "/nonexistent-canary"])
sv.until_end(5)
sv.until_end(6)
expect(op_json(sv, 5).get("ok") is True, "a relative path is read in the requested directory: %s" % op_json(sv, 5))
j6 = op_json(sv, 6)
expect(j6.get("count") == 0, "the program holds no descriptor beyond 0, 1, 2: %s" % j6.get("descriptors"))

# What cannot start is an F with its errno, and nothing else.
sv.send(7, ["/nonexistent/program"])
sv.send(8, [PAYLOAD, "true"], cwd="/nonexistent-dir")
expect(sv.until_end(7) == ("F", struct.pack(">I", 2)), "a missing program is F ENOENT")
expect(sv.until_end(8) == ("F", struct.pack(">I", 2)), "a missing directory is F ENOENT")
expect(7 not in sv.out and 8 not in sv.out, "nothing is printed for them")

# Output is forwarded whole, each stream on its own.
sv.send(9, [PAYLOAD, "flood", "3000000"])
sv.until_end(9)
o9, e9 = sv.out.get(9, b""), sv.err.get(9, b"")
expect(len(e9) == 3000000 and o9.count(b"x") >= 3000000 and len(o9) < 3000200,
       "a 3,000,000-byte flood arrives whole on both streams (%d, %d bytes)" % (len(o9), len(e9)))

# stdin reads EOF at once; a new session each.
sv.send(10, ["/bin/sh", "-c", "read x; echo rc=$?; cut -d' ' -f6 /proc/$$/stat; echo $$"])
sv.until_end(10)
lines = sv.out.get(10, b"").decode().split()
expect(lines[0] == "rc=1", "stdin is at EOF: %s" % lines)
expect(lines[1] == lines[2], "the program leads a session of its own: sid %s pid %s" % (lines[1], lines[2]))

# Executions run side by side: the quick one ends first.
t0 = time.time()
sv.send(11, ["/bin/sh", "-c", "sleep 1; echo slow"])
sv.send(12, [PAYLOAD, "true"])
t, i, b = None, None, None
while True:
    t, i, b = sv.frame()
    if t in "OE":
        (sv.out if t == "O" else sv.err)[i] = (sv.out if t == "O" else sv.err).get(i, b"") + b
    if t == "Z":
        sv.end[i] = (t, b)
        break
expect(i == 12 and time.time() - t0 < 0.9, "a quick execution ends while a slow one runs")
expect(sv.until_end(11)[0] == "Z" and sv.out[11] == b"slow\n", "the slow one ends after")

# A program whose output something else still holds: ended, held, unread.
t0 = time.time()
sv.send(13, ["/bin/sh", "-c", "(sleep 2; echo late) & echo early; exit 3"])
end13 = sv.until_end(13)
took = time.time() - t0
expect(end13 == ("Z", struct.pack(">III", 0, 3, 1)) and 0.4 < took < 1.9,
       "exit 3 with a descendant holding its output: held after the grace (%.2f s)" % took)
expect(sv.out[13] == b"early\n", "what came before the exit is forwarded, nothing after")

# stdin's EOF ends the server once its programs have ended.
sv.send(14, ["/bin/sh", "-c", "sleep 0.3; echo last"])
rc, err = sv.close()
while 14 not in sv.end:
    try:
        sv.until_end(14, 5)
    except EOFError:
        break
expect(rc == 0 and sv.end.get(14, ("?",))[0] == "Z" and sv.out.get(14) == b"last\n",
       "EOF on stdin: the running program finishes, then the server exits 0")

# A malformed request ends the server with 2 and one line on stderr.
sv = Server()
sv.p.stdin.write(b"X" + struct.pack(">II", 1, 0))
sv.p.stdin.flush()
rc, err = sv.close()
expect(rc == 2 and err.decode().count("\n") == 1 and b"malformed" in err, "a malformed request: exit 2, %r" % err)
sv = Server()
sv.send(1, [])  # argc 0
rc, err = sv.close()
expect(rc == 2, "a request without a program: exit 2")
print("all scenarios passed")
