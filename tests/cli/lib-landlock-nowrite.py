#!/usr/bin/python3
"""Runs a command under a Landlock ruleset that allows no filesystem writes.

usage: lib-landlock-nowrite.py CMD [ARGS...]

The ruleset handles every filesystem right the running kernel knows (read,
write, execute, make/remove, refer, truncate, ioctl on devices) and grants
only read and execute beneath "/", plus writing to the file /dev/null (the
sink: writes there change nothing, and ASan and the bounded runner open it
read-write). Anything the command tries to create, change, rename, truncate
or remove anywhere else fails with EACCES. Constants follow base/landlock.h
(kernel UAPI). Exits 125 if Landlock is unavailable.
"""
import ctypes
import os
import sys

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13      # ABI 2
FS_TRUNCATE = 1 << 14   # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl.restype = ctypes.c_int


class RulesetAttr(ctypes.Structure):
    # Only handled_access_fs: the 8-byte form every ABI accepts.
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def die(msg, code=1):
    print("lib-landlock-nowrite: " + msg, file=sys.stderr)
    sys.exit(code)


def check(ret, what):
    if ret < 0:
        e = ctypes.get_errno()
        die("%s: %s" % (what, os.strerror(e)))
    return ret


def main():
    if len(sys.argv) < 2:
        die("usage: lib-landlock-nowrite.py CMD [ARGS...]", 2)
    abi = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(CREATE_RULESET_VERSION))
    if abi < 0:
        die("landlock unavailable: %s" % os.strerror(ctypes.get_errno()), 125)
    read_exec = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
    handled = read_exec | FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | \
        FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM
    if abi >= 2:
        handled |= FS_REFER
    if abi >= 3:
        handled |= FS_TRUNCATE
    if abi >= 5:
        handled |= FS_IOCTL_DEV
    attr = RulesetAttr(handled)
    rfd = check(libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr),
                             ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)),
                "landlock_create_ruleset")
    rules = [("/", read_exec), ("/dev/null", FS_READ_FILE | FS_WRITE_FILE)]
    for path, rights in rules:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        pb = PathBeneathAttr(rights, fd)
        check(libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(rfd), ctypes.c_int(RULE_PATH_BENEATH),
                           ctypes.byref(pb), ctypes.c_uint32(0)), "landlock_add_rule " + path)
        os.close(fd)
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    check(libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(rfd), ctypes.c_uint32(0)),
          "landlock_restrict_self")
    os.close(rfd)
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    except OSError as e:
        die("exec %s: %s" % (sys.argv[1], e.strerror), 127)


main()
