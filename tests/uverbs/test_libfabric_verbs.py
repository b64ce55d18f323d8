# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""libfabric's verbs provider (Debian's libfabric1 / libfabric-bin) over libuverbs.so.

libfabric's verbs provider links libibverbs and librdmacm; with LD_PRELOAD=<libuverbs.so>
its ibv_* calls reach our emulated ConnectX.  `fi_info -p verbs` lists our device as an
RC domain (FI_EP_MSG) and a UD domain (FI_EP_DGRAM, "<dev>-dgram").  Every endpoint
needs an event queue, and the provider builds each one on an rdma_cm event channel
(prov/verbs/src/verbs_eq.c: rdma_create_event_channel, which opens
/dev/infiniband/rdma_cm): the library answers that device itself (uverbs/rdma_cm_linux.c),
so `fi_pingpong -e dgram` runs its exchange (it stopped at fi_eq_open with ENOENT before
the in-library CM).  Missing tools are failures, never skips.
"""
import os
import re
import shutil
import signal
import subprocess
import time

LIB = os.environ.get("UVERBS_LIB", "")
NET = int(os.environ.get("UVERBS_TEST_NET", 41))
_b = {"n": 10 + os.getpid() % 80}


def _ip(host):
    return "127.%d.%d.%d" % (NET, _b["n"], host)


def _env(ip):
    assert LIB and os.path.isfile(LIB), "UVERBS_LIB (libuverbs.so) not found: %r" % LIB
    env = dict(os.environ)
    env["LD_PRELOAD"] = LIB
    env["UVERBS_DEVICES"] = "emu:ip=%s" % ip
    env.pop("UVERBS_LOG", None)
    env.pop("FI_PROVIDER", None)
    return env


def _tool(name):
    path = shutil.which(name)
    assert path, "%s is not installed (Debian package libfabric-bin)" % name
    return path


def test_fi_info_lists_uverbs_msg_and_dgram_domains():
    out = subprocess.run([_tool("fi_info"), "-p", "verbs"], env=_env(_ip(10)),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    entries = [blk for blk in out.stdout.split("provider: ") if blk.strip()]
    doms = {}
    for blk in entries:
        kv = dict(l.strip().split(": ", 1) for l in blk.splitlines()[1:] if ": " in l)
        doms.setdefault(kv.get("domain"), set()).add(kv.get("type"))
    assert "FI_EP_MSG" in doms.get("uverbs0", set()), doms
    assert "FI_EP_DGRAM" in doms.get("uverbs0-dgram", set()), doms
    print("\nfi_info -p verbs: %d entries, domains %s" % (len(entries), sorted(doms)))


def test_fi_pingpong_dgram_exchanges_over_the_in_library_rdma_cm():
    exe = _tool("fi_pingpong")
    port = 20400 + os.getpid() % 500
    args = ["-p", "verbs", "-e", "dgram", "-I", "10", "-S", "64"]
    t0 = time.time()
    srv = subprocess.Popen([exe, "-B", str(port)] + args, env=_env(_ip(20)),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    cli = None
    try:
        time.sleep(1)
        cli = subprocess.Popen([exe, "-P", str(port)] + args + ["127.0.0.1"],
                               env=_env(_ip(21)), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
        cout, _ = cli.communicate(timeout=30)
        sout, _ = srv.communicate(timeout=30)
    finally:
        for p in (cli, srv):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    took = time.time() - t0
    assert srv.returncode == 0 and cli.returncode == 0, (sout, cout)
    # the result row: 64-byte messages, 10 sent, all 10 acknowledged
    for out in (sout, cout):
        assert re.search(r"^64\s+10\s+=10\s", out, re.M), out
    assert took < 30, "took %.1f s" % took
    print("\nfi_pingpong -e dgram: %.1f s, client: %s" % (took, cout.strip().splitlines()[-1]))
