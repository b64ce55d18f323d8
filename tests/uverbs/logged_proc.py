# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""A program under test whose output two threads collect as it comes, so that a test can
wait for a line the program (or the library's UVERBS_LOG=info log) prints -- a CM that
listens, a group joined -- instead of guessing how long a loaded machine takes to get
there.  Started in a session of its own, so that it and its children can be killed
together."""
import os
import re
import signal
import subprocess
import threading
import time


class LoggedProc:
    def __init__(self, args, env):
        self.p = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True)
        self.out, self.err = [], []
        self.threads = [threading.Thread(target=self._read, args=(f, buf), daemon=True)
                        for f, buf in ((self.p.stdout, self.out), (self.p.stderr, self.err))]
        for t in self.threads:
            t.start()

    @staticmethod
    def _read(f, buf):
        for line in f:
            buf.append(line)

    def text(self):
        return "".join(self.out) + "".join(self.err)

    def wait_err_line(self, pattern, what, count=1, timeout=30):
        """Until `count` lines of stderr match `pattern` (a regular expression); fails when
        the program exits first or after `timeout` seconds."""
        pat = re.compile(pattern)
        deadline = time.time() + timeout
        while len([l for l in list(self.err) if pat.search(l)]) < count:
            assert self.p.poll() is None, "exited before %s:\n%s" % (what, self.text())
            assert time.time() < deadline, "not %s after %d s:\n%s" % (what, timeout, self.text())
            time.sleep(0.05)

    def wait_exit(self, timeout):
        """Its exit status, or None if it still runs after `timeout` seconds."""
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        for t in self.threads:
            t.join(timeout=5 if self.p.poll() is not None else 0)
        return self.p.poll()

    def kill(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()
        for t in self.threads:
            t.join(timeout=5)


def start_capture(tshark, capture_filter, pcap, timeout=20):
    """tshark capturing on lo into `pcap`, returned once it says it captures (root
    needed); the caller stops it with SIGINT and waits."""
    cap = subprocess.Popen([tshark, "-i", "lo", "-f", capture_filter, "-w", pcap],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + timeout
    seen = b""
    while b"Capturing on" not in seen:
        assert cap.poll() is None, "tshark could not capture on lo (root needed): %r" % seen
        assert time.time() < deadline, "tshark did not start"
        seen += os.read(cap.stderr.fileno(), 4096)
    time.sleep(0.3)
    return cap
