# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""One iSER session, run by test_rdma_cm_iser.py inside a network namespace of its own
(unshare -n: tgt's iSER portal is port 3260 on every address, and its port= option does
not parse, so the namespace keeps it apart from anything else on the machine).  tgtd
(Debian's tgt) on one emulated NIC with a file-backed LUN, libiscsi's tools (Debian's
libiscsi-bin) on another, both under the preloaded library; prints each tool's output
after a "== tool" line.  Then libiscsi's conformance suite iscsi-test-cu, once per
SUITE given (FAMILY.SUITE[.TEST]), with --dataloss on a second LUN of its own (LUN 2,
LUN_FILE.cu), each after a "== iscsi-test-cu SUITE" line.
Usage: iser_session.py LIB LUN_FILE CONTROL_PORT [SUITE...]"""
import os
import signal
import subprocess
import sys
import time

lib, lun, ctl, suites = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
A, B = "127.0.31.2", "127.0.31.3"
TARGET = "iqn.2026-12.uverbs:t1"
INIT = "iqn.2026-12.uverbs:init"
INIT2 = "iqn.2026-12.uverbs:init2"   # iscsi-test-cu's second initiator (-I)
URL = "iser://%s/%s/1" % (A, TARGET)
CU_LUN, CU_URL = lun + ".cu", "iser://%s/%s/2" % (A, TARGET)
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def env(ip, log=False):
    e = dict(os.environ, LD_PRELOAD=lib, UVERBS_DEVICES="emu:ip=%s" % ip)
    e.pop("UVERBS_LOG", None)
    if log:
        e["UVERBS_LOG"] = "info"
    return e


if suites:
    with open(CU_LUN, "wb") as f:
        f.truncate(16 << 20)
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
    setup = [["--op", "new", "--mode", "target", "--tid", "1", "-T", TARGET],
             ["--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", "1", "-b", lun],
             ["--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL"],
             ["--op", "bind", "--mode", "target", "--tid", "1", "-Q", INIT]]
    if suites:
        setup += [["--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", "2", "-b", CU_LUN],
                  ["--op", "bind", "--mode", "target", "--tid", "1", "-Q", INIT2]]
    for args in setup:
        subprocess.run(["tgtadm", "-C", ctl, "--lld", "iser"] + args, check=True, timeout=20)
    for tool in (["iscsi-inq", "-i", INIT, URL], ["iscsi-readcapacity16", "-i", INIT, URL],
                 ["iscsi-perf", "-i", INIT, "-t", "2", URL]):
        r = subprocess.run(tool, env=env(B), capture_output=True, text=True, timeout=40)
        print("== %s rc=%d\n%s%s" % (tool[0], r.returncode, r.stdout, r.stderr), flush=True)
    # 64 KiB written (the target pulls it with RDMA READs) and read back (RDMA WRITEs)
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "iscsi_rw.py"),
                        INIT, URL, "100", "128", "31"], env=env(B), capture_output=True, text=True, timeout=40)
    print("== iscsi_rw rc=%d\n%s%s" % (r.returncode, r.stdout, r.stderr), flush=True)
    # Debian 12's libiscsi 1.19.0 has iSER bugs fixed upstream later (docs/tools.md): its
    # struct iser_conn comes from malloc unzeroed (lib/iser.c iscsi_init_iser_transport;
    # upstream b4ba920, 1.20.0), so a connection on reused heap faults in iser_reg_mr
    # (glibc's MALLOC_PERTURB_=255 hands out zeroed blocks: perturb byte ^ 0xff), and a
    # READ's data buffer of at most 256 bytes, malloc'd at its own size, goes back into
    # the 256-byte small-allocation cache and is overrun when handed out again
    # (iscsi_iser_free_pdu; upstream 2934d64, 1.20.1): LIBISCSI_CACHE_ALLOCATIONS=0
    # turns that cache off.
    cu_env = dict(env(B), MALLOC_PERTURB_="255", LIBISCSI_CACHE_ALLOCATIONS="0")
    for suite in suites:
        r = subprocess.run(["iscsi-test-cu", "--dataloss", "-i", INIT, "-I", INIT2, "--test=" + suite, CU_URL],
                           env=cu_env, capture_output=True, text=True, timeout=60)
        print("== iscsi-test-cu %s rc=%d\n%s%s" % (suite, r.returncode, r.stdout, r.stderr), flush=True)
finally:
    # tgtd -f takes SIGTERM and stays: SIGKILL
    os.killpg(tgtd.pid, signal.SIGKILL)
    tgtd.wait()
    log.close()
# the namespace's UDP counters: a datagram dropped for want of room (RcvbufErrors) is
# retransmitted only after the CM's ACK timeout, about a second, as long as libiscsi's
# sync poll waits
with open("/proc/net/snmp") as f:
    print("== udp counters\n" + "".join(x for x in f if x.startswith("Udp:")), flush=True)
print("== tgtd log\n" + open(lun + ".tgtd.log").read())
