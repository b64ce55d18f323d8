# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""One iSER session, run by test_rdma_cm_iser.py inside a network namespace of its own
(unshare -n: tgt's iSER portal is port 3260 on every address, and its port= option does
not parse, so the namespace keeps it apart from anything else on the machine).  tgtd
(Debian's tgt) on one emulated NIC with a file-backed LUN, libiscsi's tools (Debian's
libiscsi-bin) on another, both under the preloaded library; prints each tool's output
after a "== tool" line.  Usage: iser_session.py LIB LUN_FILE CONTROL_PORT"""
import os
import signal
import subprocess
import sys
import time

lib, lun, ctl = sys.argv[1], sys.argv[2], sys.argv[3]
A, B = "127.0.31.2", "127.0.31.3"
TARGET = "iqn.2026-12.uverbs:t1"
INIT = "iqn.2026-12.uverbs:init"
URL = "iser://%s/%s/1" % (A, TARGET)
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def env(ip, log=False):
    e = dict(os.environ, LD_PRELOAD=lib, UVERBS_DEVICES="emu:ip=%s" % ip)
    e.pop("UVERBS_LOG", None)
    if log:
        e["UVERBS_LOG"] = "info"
    return e


log = open(lun + ".tgtd.log", "w")
tgtd = subprocess.Popen(["tgtd", "-f", "-C", ctl, "--iscsi", "portal=%s:3260" % A], env=env(A, True),
                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
try:
    # ready when its iSER portals listen (the library's UVERBS_LOG=info line)
    deadline = time.time() + 30
    while "listening on [::] port 3260" not in open(lun + ".tgtd.log").read():
        assert tgtd.poll() is None and time.time() < deadline, "tgtd did not listen:\n" + open(lun + ".tgtd.log").read()
        time.sleep(0.1)
    # tgt's iSER login (usr/iscsi/iser_text.c iser_login_start) wants the initiator's
    # address AND its name bound to the target (the TCP one either: iscsid.c)
    for args in (["--op", "new", "--mode", "target", "--tid", "1", "-T", TARGET],
                 ["--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", "1", "-b", lun],
                 ["--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL"],
                 ["--op", "bind", "--mode", "target", "--tid", "1", "-Q", INIT]):
        subprocess.run(["tgtadm", "-C", ctl, "--lld", "iser"] + args, check=True, timeout=20)
    for tool in (["iscsi-inq", "-i", INIT, URL], ["iscsi-readcapacity16", "-i", INIT, URL],
                 ["iscsi-perf", "-i", INIT, "-t", "2", URL]):
        r = subprocess.run(tool, env=env(B), capture_output=True, text=True, timeout=40)
        print("== %s rc=%d\n%s%s" % (tool[0], r.returncode, r.stdout, r.stderr), flush=True)
    # 64 KiB written (the target pulls it with RDMA READs) and read back (RDMA WRITEs)
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "iscsi_rw.py"),
                        INIT, URL, "100", "128", "31"], env=env(B), capture_output=True, text=True, timeout=40)
    print("== iscsi_rw rc=%d\n%s%s" % (r.returncode, r.stdout, r.stderr), flush=True)
finally:
    # tgtd -f takes SIGTERM and stays: SIGKILL
    os.killpg(tgtd.pid, signal.SIGKILL)
    tgtd.wait()
    log.close()
print("== tgtd log\n" + open(lun + ".tgtd.log").read())
