# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""rdma-core's pyverbs rdma_cm tests (test_rdmacm, test_mlx5_rdmacm) over the preloaded library.

The same copy of rdma-core's tests/ as test_rdma_core_suite.py (Debian's python3-pyverbs
ships it as documentation), but only its rdma_cm modules, in a setting where they can run
instead of skipping "Device ... doesn't have net interface":

  - a network namespace of the test's own (`unshare --net`): a veth pair, one end carrying
    10.77.0.1/24, so that `ip -j addr show <netdev>` (netlink, the real kernel) gives the
    emulated NIC's address and a MAC; the host's network is not touched;
  - the emulated NIC on that address, served by `uvd -R` (one device shared by several
    processes: the tests fork a passive and an active side onto one device and one IP);
  - the library names that veth under /sys/class/infiniband/uverbs0/device/net/
    (uverbs/kernel_paths_linux.c), which the tests list with a child `ls`.

Every test must pass, except those whose skip is listed in ALLOWED_SKIPS with why.  Under
CI=true a missing prerequisite (not root, no unshare, no veth) is a failure, elsewhere a
skip that says why.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_rdma_core_suite as suite  # noqa: E402  (the copy of rdma-core's tests/)

LIB = os.environ.get("UVERBS_LIB", "")
UVD = os.environ.get("UVERBS_UVD", "")
CI = os.environ.get("CI") == "true"
TIMEOUT = 240
ADDR = "10.77.0.1"

# Skips that are right here (a backquoted prefix of the reason, as in docs/tools.md):
ALLOWED_SKIPS = {
    # test_mlx5_rdmacm drives mlx5 direct verbs (DC QPs, reserved QPNs) through Debian's
    # libmlx5, which answers "not an MLX5 device" for ours
    "Can not run the test over non MLX5 device": "mlx5dv",
    # Not "Multicast is not supported on this device" (tests/utils.py
    # requires_mcast_support, max_mcast_grp == 0): a daemon with -R offers its clients
    # multicast groups (tools/uvd/policy.c uvd_mcast_offered), so the three multicast
    # tests must run and pass (MUST_PASS).
}
MUST_PASS = ["test_rdmacm_sync_traffic", "test_rdmacm_async_traffic", "test_rdmacm_async_reject_traffic",
             "test_rdmacm_async_traffic_external_qp", "test_rdmacm_async_udp_traffic",
             "test_rdmacm_async_read", "test_rdmacm_async_write",
             # both sides join one group through the daemon's device, the active side
             # sends to it, the passive side's QP receives (and leaves, in the third)
             "test_rdmacm_async_multicast_traffic", "test_rdmacm_async_ex_multicast_traffic",
             "test_rdmacm_async_ex_leave_multicast_traffic"]

# rdma-core's run_tests.py, for two modules, with each test's outcome written as JSON
RUNNER = r"""
import json, os, sys, unittest
from importlib.machinery import SourceFileLoader
sys.argv = sys.argv[:1]
from args_parser import parser
SourceFileLoader('tests', os.path.join(os.path.dirname(os.path.abspath(__file__)), '__init__.py')).load_module()
parser.parse_args()
tests = unittest.defaultTestLoader.loadTestsFromNames(['tests.test_rdmacm', 'tests.test_mlx5_rdmacm'])
def flat(s):
    for t in s:
        yield from (flat(t) if isinstance(t, unittest.TestSuite) else [t])
ids = [t.id() for t in flat(tests)]
r = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(tests)
res = {i.split('.')[-1]: 'ok' for i in ids}
for t, tb in r.failures + r.errors:
    res[t.id().split('.')[-1]] = 'failed: ' + tb.strip().splitlines()[-1]
for t, why in r.skipped:
    res[t.id().split('.')[-1]] = 'skipped: ' + why
with open(os.environ['RESULTS'], 'w') as f:
    json.dump(res, f)
"""

# Run inside the namespace: lo and a veth pair up, the address on one end, uvd on it.
NETNS_SCRIPT = r"""
set -e
ip link set lo up
ip link add uvrdmacm0 type veth peer name uvrdmacm1
ip addr add {addr}/24 dev uvrdmacm0
ip link set uvrdmacm1 up
ip link set uvrdmacm0 up
# IP multicast leaves by the veth (the multicast tests' groups are 230.x, base.py)
ip route add 224.0.0.0/4 dev uvrdmacm0
"$UVD" -R -d emu:ip={addr} -s "$SOCK" &
UVD_PID=$!
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
[ -S "$SOCK" ] || {{ echo "uvd did not come up"; exit 3; }}
echo "netdev listed by the library: $(LD_PRELOAD=$LIB UVERBS_DEVICES=uvd:$SOCK ls /sys/class/infiniband/uverbs0/device/net/ 2>&1)"
rc=0
LD_PRELOAD=$LIB UVERBS_DEVICES=uvd:$SOCK /usr/bin/python3 "$SUITE/uv_run_rdmacm.py" 2>&1 || rc=$?
kill $UVD_PID
wait $UVD_PID || true
exit $rc
""".format(addr=ADDR)


def _refusal():
    """None when a network namespace with a veth pair can be made here, else why not."""
    if os.geteuid() != 0:
        return "runs as uid %d: a network namespace with a veth pair needs root" % os.geteuid()
    for tool in ("unshare", "ip", "ls"):
        if not shutil.which(tool):
            return "%s is not installed (util-linux, iproute2: tools/install-deps)" % tool
    p = subprocess.run(["unshare", "--net", "ip", "link", "add", "t0", "type", "veth", "peer", "name", "t1"],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        return "unshare --net with a veth pair is refused here: %s" % (p.stderr.strip() or p.returncode)
    return None


def test_pyverbs_rdmacm():
    assert LIB and os.path.isfile(LIB), "UVERBS_LIB (the regular build's libuverbs.so) is missing: %r" % LIB
    assert UVD and os.access(UVD, os.X_OK), "UVERBS_UVD (the regular build's uvd) is missing: %r" % UVD
    why = _refusal()
    if why:
        if CI:
            pytest.fail("CI runs as root on Debian, where this must work: " + why)
        pytest.skip(why)
    with tempfile.TemporaryDirectory(prefix="uv-pyverbs-rdmacm-") as tmp:
        suite_dir = suite._copy_suite(tmp)
        with open(os.path.join(suite_dir, "uv_run_rdmacm.py"), "w") as f:
            f.write(RUNNER)
        results_file = os.path.join(tmp, "results.json")
        env = dict(os.environ)
        env.pop("UVERBS_LOG", None)
        env.update(PYTHONDONTWRITEBYTECODE="1", UVD=UVD, LIB=LIB, SUITE=suite_dir,
                   SOCK=os.path.join(tmp, "uvd.sock"), RESULTS=results_file)
        t0 = time.time()
        p = subprocess.Popen(["unshare", "--net", "sh", "-c", NETNS_SCRIPT], cwd=tmp, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=TIMEOUT)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
        print(out)
        assert os.path.isfile(results_file), "the tests did not finish (rc %s):\n%s" % (p.returncode, out[-6000:])
        with open(results_file) as f:
            results = json.load(f)
    print("pyverbs rdma_cm tests in %.1f s: %s" % (time.time() - t0, json.dumps(results, indent=1)))
    assert "netdev listed by the library: uvrdmacm0" in out, out
    for name in MUST_PASS:
        assert results.get(name) == "ok", "%s: %s\n%s" % (name, results.get(name), out[-6000:])
    for name, res in results.items():
        if res.startswith("skipped: "):
            reason = res[len("skipped: "):]
            assert any(reason.startswith(a) for a in ALLOWED_SKIPS), "%s skipped: %s" % (name, reason)
        else:
            assert res == "ok", "%s: %s\n%s" % (name, res, out[-6000:])


# Several processes' CMs on one address (docs/architecture.md, section 18): a second
# listener on a port another process listens on is refused, a REQ for a port nobody
# listens on is REJected at once (reason 8, invalid service ID), and a connection
# between two processes of the device works (rping, Debian's rdmacm-utils).
SHARED_SCRIPT = r"""
ip link set lo up
"$UVD" -R -d emu:ip=127.0.0.1 -s "$SOCK" 2>uvd.log &
UVD_PID=$!
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
export LD_PRELOAD=$LIB UVERBS_DEVICES=uvd:$SOCK
UVERBS_LOG=info timeout 30 rping -s -a 127.0.0.1 -p 7000 -v -C 3 > server.log 2>&1 &
S=$!
i=0
while ! grep -qs "listening on" server.log && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
timeout 10 rping -s -a 127.0.0.1 -p 7000 -C 3; echo "second server rc=$?"
t0=$(date +%s%N)
timeout 10 rping -c -a 127.0.0.1 -p 7001 -C 3; echo "unlistened port rc=$? in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
UVERBS_LOG=info timeout 20 rping -c -a 127.0.0.1 -p 7000 -v -C 3 2>client.err; C=$?; echo "client rc=$C"
wait $S; S=$?; echo "server rc=$S"
grep -c "server ping data" server.log
if [ $C -ne 0 ] || [ $S -ne 0 ]; then   # what each side saw, for a failure's report
    echo "--- server.log"; tail -40 server.log; echo "--- client stderr"; tail -40 client.err
    echo "--- uvd"; tail -20 uvd.log
fi
# a listener whose process forked: the child lets go of the port's name, so once the
# parent stops listening another process may listen there
cat > listen.py <<'PY'
import os, sys, time
from pyverbs.cmid import CMID, AddrInfo
import pyverbs.cm_enums as ce
l = CMID(creator=AddrInfo(src='127.0.0.1', src_service='7100', port_space=ce.RDMA_PS_TCP, flags=ce.RAI_PASSIVE))
l.listen()
if sys.argv[1] == 'fork':
    if os.fork() == 0:
        time.sleep(3)
        os._exit(0)
    l.close()
    os.system(sys.executable + ' listen.py again')
else:
    print('listened after the forking listener closed')
PY
timeout 20 /usr/bin/python3 listen.py fork 2>&1 | tail -2
kill $UVD_PID
"""


def test_listeners_and_rej_across_processes_of_one_device():
    assert LIB and os.path.isfile(LIB), "UVERBS_LIB is missing: %r" % LIB
    assert UVD and os.access(UVD, os.X_OK), "UVERBS_UVD is missing: %r" % UVD
    assert shutil.which("rping"), "rping missing: install rdmacm-utils (tools/install-deps)"
    why = _refusal()
    if why:
        if CI:
            pytest.fail("CI runs as root on Debian, where this must work: " + why)
        pytest.skip(why)
    with tempfile.TemporaryDirectory(prefix="uv-shared-cm-") as tmp:
        env = dict(os.environ, UVD=UVD, LIB=LIB, SOCK=os.path.join(tmp, "uvd.sock"))
        env.pop("UVERBS_LOG", None)
        p = subprocess.run(["unshare", "--net", "sh", "-c", SHARED_SCRIPT], cwd=tmp, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    out = p.stdout
    print(out)
    assert "rdma_listen: Address already in use" in out and "second server rc=255" in out, out
    assert "RDMA_CM_EVENT_REJECTED, error 8" in out, out
    ms = re.search(r"unlistened port rc=255 in (\d+) ms", out)
    assert ms and int(ms.group(1)) < 5000, out
    assert "client rc=0" in out and "server rc=0" in out, out
    assert len(re.findall(r"^ping data: rdma-ping-\d", out, re.M)) == 3, out
    assert re.search(r"^3$", out, re.M), out   # the server's three pings
    assert "listened after the forking listener closed" in out, out
