# SPDX-License-Identifier: MIT
"""What the Python package's tests share (not installed): every failed
check is printed and counted, and finish() fails the test when any did."""
import sys

import vnpu

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def raises(status, fn, what, message=None):
    """fn() raises vnpu.Error of @status, whose text has @message (by
    default: some detail after the status)."""
    try:
        fn()
    except vnpu.Error as e:
        check(e.status == status, f"{what}: {e.status}, expected {status} ({e})")
        if message is None:
            check(len(str(e)) > len(status) + 2, f"{what}: no message in {e}")
        else:
            check(message in str(e), f"{what}: message {e}")
        return
    check(False, f"{what}: no error")


def finish(summary):
    if failures:
        sys.exit(f"{len(failures)} failure(s)")
    print(summary)
