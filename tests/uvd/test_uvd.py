# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""uvd, the device daemon (tools/uvd), and its clients.

Two processes share one emulated NIC through one daemon, and through two daemons,
with Debian's ibv_rc_pingpong checking the data (-c), each client running the data
plane in its own engine (the default) or the daemon running it (-R); a hostile client speaking the
protocol itself (hw/shim/uvd_proto.h) is refused every object it does not own, every
opcode reserved to the daemon, every bad length, and is cut off on garbage while
others go on; clients and daemons are killed during traffic, several times, and
nobody hangs: peers get errors, a restarted daemon serves again.

The daemon is $UVD_BIN and the library $UVERBS_LIB (set by CMake).  Addresses:
127.<net>.<b>.x, one b per test, net from $UVERBS_TEST_NET (67, or 81 for the later
groups: umr, uarpage); TCP ports 26700 + x.
"""
import array
import mmap
import os
import signal
import socket
import struct
import subprocess
import tempfile
import time

import pytest

UVD = os.environ.get("UVD_BIN", "")
LIB = os.environ.get("UVERBS_LIB", "")
NET = int(os.environ.get("UVERBS_TEST_NET", "67"))
SLOT = int(os.environ.get("UVD_TEST_SLOT", "0"))   # one per ctest entry: 38 b's, 1000 ports
_seq = {"b": 10 + SLOT * 38 + os.getpid() % 28, "port": 26000 + SLOT * 1000 + (os.getpid() % 50) * 10}

EPERM, ENOENT, EINVAL, EFAULT = 1, 2, 22, 14


def _next():
    _seq["b"] += 1
    _seq["port"] += 1
    return "127.%d.%d." % (NET, _seq["b"]), _seq["port"]


class Daemon:
    def __init__(self, ip, sock, args=()):
        assert UVD and os.path.isfile(UVD), "UVD_BIN not set or missing: build tools/uvd"
        self.sock, self.ip = sock, ip
        self.log = tempfile.NamedTemporaryFile(prefix="uvd-", suffix=".log", delete=False)
        self.p = subprocess.Popen([UVD, "-d", "emu:ip=%s" % ip, "-s", sock, "-v"] + list(args),
                                  stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            if "serving" in self.text():
                return
            assert self.p.poll() is None, "uvd exited: " + self.text()
            time.sleep(0.05)
        raise AssertionError("uvd did not come up: " + self.text())

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def kill(self, sig=signal.SIGKILL):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            self.p.wait(timeout=10)


@pytest.fixture
def daemon():
    made = []

    def make(ip, sock=None, args=()):
        if sock is None:
            sock = tempfile.mktemp(prefix="uvd-", suffix=".sock", dir="/tmp")
        d = Daemon(ip, sock, args)
        made.append(d)
        return d
    yield make
    for d in made:
        d.kill()
        try:
            os.unlink(d.sock)
        except OSError:
            pass


def _env(uri):
    assert LIB and os.path.isfile(LIB), "UVERBS_LIB not set or missing"
    env = dict(os.environ)
    env["LD_PRELOAD"] = LIB
    env["UVERBS_DEVICES"] = uri
    return env


def _pingpong(uri_s, uri_c, port, extra=(), prog="ibv_rc_pingpong"):
    args = [prog, "-d", "uverbs0", "-g", "1", "-p", str(port), "-c"] + list(extra)
    s = subprocess.Popen(args, env=_env(uri_s), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(0.8)
    c = subprocess.run(args + ["127.0.0.1"], env=_env(uri_c), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    so, _ = s.communicate(timeout=120)
    return s.returncode, so, c.returncode, c.stdout


# ---------------------------------------------------------------- Debian's pingpong

def test_rc_pingpong_two_clients_one_daemon(daemon):
    base, port = _next()
    d = daemon(base + "1")
    rs, so, rc, co = _pingpong("uvd:" + d.sock, "uvd:" + d.sock, port, ["-n", "200"])
    assert rs == 0 and rc == 0, so + co + d.text()
    assert "200 iters in" in so and "200 iters in" in co
    assert d.text().count("client ") >= 2


def test_srq_pingpong_two_clients_one_daemon(daemon):
    """A client's SRQ is an RMP (the function runs ISSI 1, hw/mlx5/srq.c): the daemon
    passes CREATE/DESTROY_RMP of the client's own objects (tools/uvd/policy.c)."""
    base, port = _next()
    d = daemon(base + "1")
    rs, so, rc, co = _pingpong("uvd:" + d.sock, "uvd:" + d.sock, port, ["-n", "100"], prog="ibv_srq_pingpong")
    assert rs == 0 and rc == 0, so + co + d.text()
    assert "100 iters in" in so and "100 iters in" in co


def _gid(out):
    """The local GID ibv_rc_pingpong printed."""
    line = [l for l in out.splitlines() if "local address" in l][0]
    return line.split("GID ")[1].strip()


def test_rc_pingpong_two_daemons(daemon):
    """Each client runs the NIC's data plane in its own engine, on an address its daemon
    bound next to the device's (.128 up); the kernel's bind keeps two daemons of one /24
    from handing out the same one."""
    base, port = _next()
    d1, d2 = daemon(base + "1"), daemon(base + "2")
    rs, so, rc, co = _pingpong("uvd:" + d1.sock, "uvd:" + d2.sock, port, ["-n", "200"])
    assert rs == 0 and rc == 0, so + co
    gs, gc = _gid(so), _gid(co)
    assert gs != gc and gs.startswith("::ffff:" + base) and gc.startswith("::ffff:" + base), (gs, gc)
    assert int(gs.rsplit(".", 1)[1]) >= 128 and int(gc.rsplit(".", 1)[1]) >= 128, (gs, gc)
    assert "engine at %s" % gs[len("::ffff:"):] in d1.text(), d1.text()
    assert "engine at %s" % gc[len("::ffff:"):] in d2.text(), d2.text()


def test_rc_pingpong_two_daemons_that_run_the_data_plane(daemon):
    """uvd -R: the daemon performs its clients' doorbells (their rings) and moves their
    packets, as a daemon of real hardware does; the clients answer on its address."""
    base, port = _next()
    d1, d2 = daemon(base + "1", args=["-R"]), daemon(base + "2", args=["-R"])
    rs, so, rc, co = _pingpong("uvd:" + d1.sock, "uvd:" + d2.sock, port, ["-n", "200"])
    assert rs == 0 and rc == 0, so + co
    assert _gid(so) == "::ffff:%s1" % base and _gid(co) == "::ffff:%s2" % base, (so, co)


def test_rc_pingpong_events_two_clients_one_daemon(daemon):
    """Completion events (-e: ibv_req_notify_cq, ibv_get_cq_event) of clients whose
    engines raise them, routed to the process's own event queue."""
    base, port = _next()
    d = daemon(base + "1")
    rs, so, rc, co = _pingpong("uvd:" + d.sock, "uvd:" + d.sock, port, ["-n", "200", "-e"])
    assert rs == 0 and rc == 0, so + co + d.text()
    assert "200 iters in" in so and "200 iters in" in co


# ---------------------------------------------------------------- a hostile client

class Raw:
    """A client speaking the protocol by hand (hw/shim/uvd_proto.h)."""
    HDR = struct.Struct("=IHHiI")
    VERSION = 3           # UVD_VERSION; 2 (UVD_VERSION_RING_ONLY) knows only the ring

    def __init__(self, path, version=VERSION):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(path)
        self.s.settimeout(10)
        self.seq = 0
        rc, body, fds = self.rpc(1, struct.pack("=II", version, 0))
        self.hello_rc = rc
        if rc == -93:     # EPROTONOSUPPORT: the caller looks at hello_rc
            return
        assert rc == 0 and len(fds) == 1, rc
        self.evs = socket.socket(fileno=fds[0])
        self.comp_eqn = struct.unpack_from("=I", body, 16)[0]
        self.kext_fn = struct.unpack_from("=I", body, 28)[0]
        self.ring = None

    # the doorbell ring (uvd_proto.h struct uvd_ring): prod at 0, cons at 64, awake at
    # 68, records of 16 + 512 bytes from 128: off, size, op, bytes
    RING_SLOTS, REC = 256, 16 + 512

    def map_ring(self):
        rc, body, fds = self.rpc(10, b"")
        assert rc == 0 and len(fds) == 1, rc
        ln, slots = struct.unpack_from("=QI", body)
        assert slots == self.RING_SLOTS
        self.ring = mmap.mmap(fds[0], ln)
        self.ring_fd = fds[0]
        return self.ring

    def store(self, off, data, op=1, size=None):
        """Publish one record in the ring and kick, as the shim's BAR hook does."""
        r = self.ring or self.map_ring()
        prod = struct.unpack_from("=I", r, 0)[0]
        rec = 128 + (prod % self.RING_SLOTS) * self.REC
        struct.pack_into("=QII", r, rec, off, len(data) if size is None else size, op)
        r[rec + 16:rec + 16 + len(data)] = data
        struct.pack_into("=I", r, 0, (prod + 1) & 0xffffffff)
        self.kick()

    def kick(self):
        self.evs.send(struct.pack("=IHHiI", 16, 18, 0, 0, 0))

    def counters(self):
        """The emulated device's PCIe counters (uvd_counters_rep)."""
        rc, body, _ = self.rpc(11, b"")
        assert rc == 0, rc
        names = ("mmio_reads", "mmio_writes", "uar_doorbells", "send_doorbells", "cq_doorbells", "bf_writes",
                 "dma_reads", "dma_writes")
        return dict(zip(names, struct.unpack_from("=8Q", body)))

    def send_raw(self, data):
        self.s.send(data)

    def rpc(self, op, payload):
        self.seq += 1
        self.s.send(self.HDR.pack(16 + len(payload), op, 0, 0, self.seq) + payload)
        msg, anc, _, _ = self.s.recvmsg(1 << 18, socket.CMSG_SPACE(4))
        assert msg, "connection closed"
        ln, rop, _, rc, seq = self.HDR.unpack_from(msg)
        assert ln == len(msg) and rop == op and seq == self.seq
        fds = []
        for lvl, typ, data in anc:
            if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds += list(array.array("i", data))
        return rc, msg[16:], fds

    def cmd(self, inp, outlen=16):
        rc, body, _ = self.rpc(2, struct.pack("=II", len(inp), outlen) + inp)
        msg = body[16:16 + 192].split(b"\0")[0].decode()
        return rc, body[16 + 192:], msg

    def alive(self):
        """QUERY_HCA_CAP (general, current) answers."""
        rc, out, msg = self.cmd(struct.pack(">HHHH", 0x100, 0, 0, 1) + bytes(8), 0x1010)
        return rc == 0 and len(out) == 0x1010


def _op(opcode, num=0, size=16, op_mod=0):
    """A command whose object number sits at bit 0x48 (bytes 9..11), as in
    dealloc_pd_in, destroy_qp_in, destroy_cq_in, dealloc_uar_in."""
    b = bytearray(size)
    struct.pack_into(">H", b, 0, opcode)
    struct.pack_into(">H", b, 6, op_mod)
    b[9:12] = num.to_bytes(3, "big")
    return bytes(b)


def _alloc_pd(c):
    rc, out, msg = c.cmd(_op(0x800))
    assert rc == 0, msg
    return int.from_bytes(out[9:12], "big")


def test_hostile_client_cannot_free_another_clients_pd(daemon):
    base, _ = _next()
    d = daemon(base + "1")
    a, b = Raw(d.sock), Raw(d.sock)
    pd = _alloc_pd(a)
    rc, _, msg = b.cmd(_op(0x801, pd))
    assert rc == -EPERM and "not this client's" in msg, (rc, msg)
    rc, _, msg = a.cmd(_op(0x801, pd))
    assert rc == 0, msg


def test_hostile_client_cannot_name_another_clients_objects(daemon):
    base, _ = _next()
    d = daemon(base + "1")
    a, b = Raw(d.sock), Raw(d.sock)
    pd = _alloc_pd(a)
    # CREATE_MKEY on a's PD: mkc at byte 16, mkc.pd at bit 0x68 (bytes 13..15 of mkc)
    mk = bytearray(272 + 16)
    struct.pack_into(">H", mk, 0, 0x200)
    mk[16 + 13:16 + 16] = pd.to_bytes(3, "big")
    rc, _, msg = b.cmd(bytes(mk))
    assert rc == -EPERM and "PD" in msg, (rc, msg)
    # QPs, CQs, MKeys and UARs that b never made, whoever made them
    for opcode in (0x501, 0x507, 0x401, 0x202, 0x803, 0x50b):
        rc, _, msg = b.cmd(_op(opcode, 0x100))
        assert rc == -EPERM, (hex(opcode), rc, msg)


def _mkey_in(pd, umr_en):
    """CREATE_MKEY (create_mkey_in, 272 bytes; mkc at byte 16): an MTT MKey of no
    bytes on pd, 4 KiB pages, mkc.umr_en (bit 0x10) as asked."""
    mk = bytearray(272)
    struct.pack_into(">H", mk, 0, 0x200)
    mkc = 16
    mk[mkc + 2] = (0x80 if umr_en else 0) | 0x04 | 0x01   # umr_en, lr, access_mode_1_0 = MTT
    mk[mkc + 4:mkc + 7] = b"\xff\xff\xff"                 # mkc.qpn, bit 0x20: no QP
    mk[mkc + 13:mkc + 16] = pd.to_bytes(3, "big")       # mkc.pd, bit 0x68
    mk[mkc + 59] = 12                                   # mkc.log_page_size, bit 0x1da
    return bytes(mk)


def test_umr_client_mkey_with_umr_en_is_refused(daemon):
    """UMR changes the MKey a WQE names, which the daemon never sees: a client's MKey
    must not take UMR (mkc.umr_en), or another client could change its rights or PD."""
    base, _ = _next()
    d = daemon(base + "1")
    a = Raw(d.sock)
    pd = _alloc_pd(a)
    rc, _, msg = a.cmd(_mkey_in(pd, False))
    assert rc == 0, (rc, msg)
    rc, _, msg = a.cmd(_mkey_in(pd, True))
    assert rc == -EPERM and "mkc.umr_en" in msg, (rc, msg)
    assert "refused: mkc.umr_en" in d.text(), d.text()
    assert a.alive()


def test_umr_client_qp_with_fast_registration_is_refused(daemon):
    """qpc.fre (bit 0x394 of the qpc at byte 24 of create_qp_in) lets a QP post UMR."""
    base, _ = _next()
    d = daemon(base + "1")
    a = Raw(d.sock)
    qp = bytearray(272)
    struct.pack_into(">H", qp, 0, 0x500)
    qp[24 + 0x394 // 8] |= 0x80 >> (0x394 % 8)
    rc, _, msg = a.cmd(bytes(qp))
    assert rc == -EPERM and "qpc.fre" in msg, (rc, msg)
    assert "refused: qpc.fre" in d.text(), d.text()
    assert a.alive()


def _alloc_uar(c):
    rc, out, msg = c.cmd(_op(0x802))
    assert rc == 0, msg
    return int.from_bytes(out[9:12], "big")


def test_uarpage_two_clients_never_share_a_16k_host_page(daemon):
    """Told that clients map 16 KiB host pages (-P), the daemon of a device with 4 KiB
    UAR pages gives each client whole groups of four: two clients asking in turn never
    get UAR pages of one host page, so a kext could grant each its own."""
    base, _ = _next()
    d = daemon(base + "1", args=["-P", "16384"])
    a, b = Raw(d.sock), Raw(d.sock)
    got = {a: [], b: []}
    for _ in range(6):
        for c in (a, b):
            got[c].append(_alloc_uar(c))
    pa, pb = {u // 4 for u in got[a]}, {u // 4 for u in got[b]}
    assert not pa & pb, (got[a], got[b])
    assert len(set(got[a])) == 6 and len(set(got[b])) == 6, (got[a], got[b])
    # freed pages come back to the same client, never to the other
    rc, _, msg = a.cmd(_op(0x803, got[a][0]))
    assert rc == 0, msg
    u = _alloc_uar(b)
    assert u // 4 not in pa, (u, got[a])
    assert a.alive() and b.alive()


def test_uarpage_two_processes_with_16k_host_pages(daemon):
    base, port = _next()
    d = daemon(base + "1", args=["-P", "16384"])
    rs, so, rc, co = _pingpong("uvd:" + d.sock, "uvd:" + d.sock, port, ["-n", "100"])
    assert rs == 0 and rc == 0, so + co + d.text()
    assert "100 iters in" in so and "100 iters in" in co


def test_uarpage_daemon_of_an_emulated_device_grants_no_page(daemon):
    """HELLO's kext_fn and ALLOC_UAR's granted_uar (uvd_proto.h) stay 0 unless the
    device is the kext: the client then keeps every store on its doorbell ring."""
    base, _ = _next()
    d = daemon(base + "1")
    b = Raw(d.sock)
    assert b.kext_fn == 0
    rc, body, _ = b.rpc(2, struct.pack("=II", 16, 16) + _op(0x802))
    assert rc == 0
    assert struct.unpack_from("=I", body, 12)[0] == 0, "granted_uar"


def test_uarpage_host_page_smaller_than_the_page_is_refused(daemon):
    base, _ = _next()
    p = subprocess.run([UVD, "-d", "emu:ip=%s1" % base, "-s", "/tmp/uvd-never.sock", "-P", "2048"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert p.returncode == 2 and "-P 2048" in p.stdout, p.stdout


def test_hostile_client_cannot_send_the_daemons_commands(daemon):
    base, _ = _next()
    d = daemon(base + "1")
    b = Raw(d.sock)
    # MANAGE_PAGES, TEARDOWN_HCA, CREATE_EQ, SET_HCA_CAP, MODIFY_NIC_VPORT_CONTEXT, ACCESS_REG write
    for opcode, op_mod in ((0x108, 1), (0x103, 0), (0x301, 0), (0x109, 0), (0x755, 0), (0x805, 0)):
        rc, _, msg = b.cmd(_op(opcode, 0, 64, op_mod))
        assert rc == -EPERM, (hex(opcode), rc, msg)
    assert b.alive()


@pytest.mark.parametrize("ring", [False, True], ids=["engines", "ring"])
def test_hostile_client_bad_lengths_are_refused(daemon, ring):
    base, _ = _next()
    d = daemon(base + "1", args=["-R"] if ring else [])
    b = Raw(d.sock)
    # inlen that disagrees with the message
    rc, _, _ = b.rpc(2, struct.pack("=II", 64, 16) + bytes(16))
    assert rc == -EINVAL
    # output longer than any message
    rc, _, _ = b.rpc(2, struct.pack("=II", 16, 1 << 30) + _op(0x800))
    assert rc == -EINVAL
    # a register outside the initialization segment (a UAR page, another client's)
    rc, _, _ = b.rpc(3, struct.pack("=QII", 0x10000, 8, 0))
    assert rc == -EPERM
    # queue memory of 0 bytes, of 1 TiB
    for n in (0, 1 << 40):
        rc, _, _ = b.rpc(4, struct.pack("=QQ", n, 4096))
        assert rc == -EINVAL
    # registering memory we do not have: the daemon that reaches client memory (-R)
    # checks it; with engines the client's own shim does (shim_pin_check), and the
    # daemon hands out IOVAs with nothing behind them (test_uvd_engine.c)
    rc, _, _ = b.rpc(6, struct.pack("=QQ", 0x10000, 4096))
    assert rc == (-EFAULT if ring else 0), rc
    # a registration of more than 1 TiB, in either mode
    rc, _, _ = b.rpc(6, struct.pack("=QQ", 0x10000, (1 << 40) + 4096))
    assert rc == -EINVAL, rc
    # freeing memory that is not ours
    rc, _, _ = b.rpc(5, struct.pack("=Q", 12345))
    assert rc == -ENOENT
    assert b.alive()


def test_hostile_client_of_engines_gets_no_ring_and_one_engine(daemon):
    """A daemon of engines never performs a client's stores nor reaches its memory: no
    doorbell ring, one engine socket per client, and a registration by address gets
    IOVAs only (the client's own engine checks its pages, shim_pin_check)."""
    base, _ = _next()
    d = daemon(base + "1")
    b = Raw(d.sock)
    rc, _, fds = b.rpc(10, b"")
    assert rc == -95 and not fds, rc        # RING: EOPNOTSUPP
    rc, body, fds = b.rpc(13, b"")          # ENGINE
    assert rc == 0 and len(fds) == 1, rc
    ip = struct.unpack_from("=I", body)[0]
    bound = socket.socket(fileno=fds[0])
    assert bound.type == socket.SOCK_DGRAM
    assert bound.getsockname() == ("127.%d.%d.%d" % ((ip >> 16) & 255, (ip >> 8) & 255, ip & 255), 4791)
    assert (ip & 255) >= 128 and "%d.%d.%d." % (ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255) == base
    bound.close()
    rc, _, fds = b.rpc(13, b"")
    assert rc == -16 and not fds, rc        # a second ENGINE: EBUSY
    rc, body, _ = b.rpc(6, struct.pack("=QQ", 0x10000, 4096))
    assert rc == 0, rc                      # PIN of memory the raw client has not mapped: IOVAs
    assert b.alive() and d.p.poll() is None
    # one process holds at most 16 engines (one per open), not every address of the /24
    more = []
    for i in range(16):
        r = Raw(d.sock)
        rc, _, fds = r.rpc(13, b"")
        for fd in fds:
            os.close(fd)
        more.append(r)
        if i < 15:
            assert rc == 0, (i, rc)
        else:
            assert rc == -28, rc            # the 17th of this process: ENOSPC
    assert "holds 16 engines already" in d.text(), d.text()


def test_hostile_client_of_an_older_protocol_is_served_only_by_a_daemon_of_rings(daemon):
    """A client of version 2 knows only the doorbell ring: a daemon of engines refuses
    it at HELLO, saying why, and a daemon that runs the data plane (-R) serves it."""
    base, _ = _next()
    d = daemon(base + "1")
    assert Raw(d.sock, version=2).hello_rc == -93
    assert "protocol version 2 refused" in d.text() and "-R" in d.text(), d.text()
    r = daemon(base + "2", args=["-R"])
    old = Raw(r.sock, version=2)
    assert old.hello_rc == 0 and old.alive()
    old.map_ring()


def test_hostile_client_store_outside_its_uar_is_dropped(daemon):
    base, _ = _next()
    d = daemon(base + "1", args=["-R"])   # the daemon runs the data plane: doorbell rings
    b = Raw(d.sock)
    # 8 bytes into the init segment's command doorbell, and into UAR page 5
    for off in (0x18, 5 * 4096 + 0x800):
        b.store(off, bytes(8))
    time.sleep(0.3)
    assert d.text().count("outside its UAR pages: dropped") == 2, d.text()
    assert b.alive()


def test_hostile_client_garbage_records_in_its_ring_are_dropped(daemon):
    base, _ = _next()
    d = daemon(base + "1", args=["-R"])   # the daemon runs the data plane: doorbell rings
    a, b = Raw(d.sock), Raw(d.sock)
    # a UAR page of a's: b's records naming it must not reach the device
    rc, out, msg = a.cmd(_op(0x802))
    assert rc == 0, msg
    uar = int.from_bytes(out[9:12], "big")
    bad = [
        (uar * 4096 + 0x800, bytes(64), 2, None),       # a BlueFlame burst into a's page
        (uar * 4096 + 0x20, bytes(8), 1, None),         # a CQ arm through a's page
        (0x18, bytes(8), 1, None),                      # the command doorbell
        (1 << 40, bytes(8), 1, None),                   # past the BAR
        (uar * 4096 + 0x800, bytes(8), 0, None),        # a "read"
        (uar * 4096 + 0x800, bytes(8), 7, None),        # no such kind
        (uar * 4096 + 0x800, b"", 1, 0),                # no bytes
        (uar * 4096 + 0x800, bytes(8), 1, 100000),      # more bytes than a record holds
    ]
    for off, data, op, size in bad:
        b.store(off, data, op, size)
    deadline = time.time() + 10
    while d.text().count("outside its UAR pages: dropped") < len(bad) and time.time() < deadline:
        time.sleep(0.05)
    assert d.text().count("outside its UAR pages: dropped") == len(bad), d.text()
    # random records, a whole ring of them: dropped too, and both still served
    r = b.ring
    prod = struct.unpack_from("=I", r, 0)[0]
    r[128:] = os.urandom(len(r) - 128)
    struct.pack_into("=I", r, 0, (prod + Raw.RING_SLOTS) & 0xffffffff)
    b.kick()
    time.sleep(0.5)
    assert b.alive() and a.alive(), d.text()
    assert "ring producer index" not in d.text()


def test_hostile_client_cannot_shrink_memory_the_daemon_maps(daemon):
    """The ring and queue memory are sealed memfds: truncating them under the daemon's
    mapping (SIGBUS in the daemon) is refused."""
    base, _ = _next()
    d = daemon(base + "1", args=["-R"])   # the daemon runs the data plane: doorbell rings
    a, b = Raw(d.sock), Raw(d.sock)
    b.map_ring()
    rc, _, fds = b.rpc(4, struct.pack("=QQ", 8192, 4096))
    assert rc == 0 and len(fds) == 1, rc
    for fd in (b.ring_fd, fds[0]):
        with pytest.raises(PermissionError):
            os.ftruncate(fd, 0)
    b.store(0x18, bytes(8))
    time.sleep(0.3)
    assert d.p.poll() is None, d.text()
    assert a.alive() and b.alive()


def test_hostile_client_ring_index_out_of_range_cuts_it_off_not_others(daemon):
    base, _ = _next()
    d = daemon(base + "1", args=["-R"])   # the daemon runs the data plane: doorbell rings
    a, b = Raw(d.sock), Raw(d.sock)
    r = b.map_ring()
    struct.pack_into("=I", r, 0, 100000)     # 100000 records ahead of what the daemon took
    b.kick()
    b.s.settimeout(5)
    assert b.s.recv(100) == b"", "a client with an impossible ring index must be disconnected"
    assert "ring producer index out of range" in d.text(), d.text()
    assert a.alive()


def test_hostile_client_has_no_mapping_of_another_clients_ring(daemon):
    """Each client maps its own doorbell ring and no other; the daemon maps both."""
    base, port = _next()
    d = daemon(base + "1", args=["-R"])   # the daemon runs the data plane: doorbell rings
    s, c = _bw_pair("uvd:" + d.sock, port, "2000000")
    try:
        def rings(pid):
            with open("/proc/%d/maps" % pid) as f:
                return {l.split()[4] for l in f if "uvd-doorbells" in l}
        deadline = time.time() + 20
        while time.time() < deadline and not (rings(s.pid) and rings(c.pid)):
            time.sleep(0.1)
        rs, rc, rd = rings(s.pid), rings(c.pid), rings(d.p.pid)
        assert len(rs) == 1 and len(rc) == 1 and rs != rc, (rs, rc)
        assert rs | rc <= rd, (rs, rc, rd)
    finally:
        for p in (s, c):
            p.kill()
            p.communicate()


def test_hostile_client_garbage_cuts_it_off_not_others(daemon):
    base, _ = _next()
    d = daemon(base + "1")
    a = Raw(d.sock)
    for junk in (b"\x01\x02\x03", struct.pack("=IHHiI", 999, 2, 0, 0, 1), os.urandom(300),
                 struct.pack("=IHHiI", 16, 77, 0, 0, 1)):
        b = Raw(d.sock)
        b.send_raw(junk)
        b.s.settimeout(5)
        assert b.s.recv(100) == b"", "a client sending garbage must be disconnected"
    assert a.alive()
    # a message larger than the daemon reads: cut off too
    b = Raw(d.sock)
    b.s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 21)
    try:
        b.send_raw(struct.pack("=IHHiI", 300000, 2, 0, 0, 1) + bytes(300000 - 16))
    except OSError:
        pass
    assert b.s.recv(100) == b""
    assert a.alive()


def test_client_objects_destroyed_when_it_disconnects(daemon):
    base, _ = _next()
    d = daemon(base + "1")
    a = Raw(d.sock)
    for _ in range(3):
        _alloc_pd(a)
    a.s.close()
    a.evs.close()
    deadline = time.time() + 10
    while "gone: 3 objects destroyed" not in d.text() and time.time() < deadline:
        time.sleep(0.05)
    assert "gone: 3 objects destroyed" in d.text(), d.text()


# ---------------------------------------------------------------- death during traffic

def _bw_pair(uri, port, iters="1000000"):
    """ib_write_bw of 4 KiB messages: long enough to be killed 2 s in (a client's engine
    moves 100,000 in about 1 s on the 2-CPU VM)."""
    args = ["ib_write_bw", "-d", "uverbs0", "-x", "1", "-p", str(port), "-n", iters, "-s", "4096"]
    s = subprocess.Popen(args, env=_env(uri), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.0)
    c = subprocess.Popen(args + ["127.0.0.1"], env=_env(uri), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    return s, c


def test_client_killed_during_traffic_peer_gets_errors(daemon):
    base, port = _next()
    d = daemon(base + "1")
    for rnd in range(3):
        s, c = _bw_pair("uvd:" + d.sock, port + 100 * rnd)
        time.sleep(2.0)
        assert s.poll() is None and c.poll() is None, "traffic ended before the kill"
        c.kill()
        c.wait(timeout=10)
        so, _ = s.communicate(timeout=60)   # an error, not a hang
        assert s.returncode != 0, so
        deadline = time.time() + 10
        while d.text().count("objects destroyed") < rnd + 1 and time.time() < deadline:
            time.sleep(0.05)
        assert d.text().count("objects destroyed") >= rnd + 1, d.text()
    rs, so, rc, co = _pingpong("uvd:" + d.sock, "uvd:" + d.sock, port + 400, ["-n", "50"])
    assert rs == 0 and rc == 0, so + co


def test_daemon_killed_during_traffic_clients_get_errors(daemon):
    base, port = _next()
    sock = tempfile.mktemp(prefix="uvd-", suffix=".sock", dir="/tmp")
    for rnd in range(3):
        d = daemon(base + "1", sock)
        s, c = _bw_pair("uvd:" + sock, port + 100 * rnd)
        time.sleep(2.0)
        if s.poll() is not None or c.poll() is not None:
            raise AssertionError("traffic ended before the kill (round %d): %s%s%s" % (
                rnd, s.communicate()[0], c.communicate()[0], d.text()))
        d.kill()
        so, _ = s.communicate(timeout=60)
        co, _ = c.communicate(timeout=60)
        assert s.returncode != 0 and c.returncode != 0, so + co
    d = daemon(base + "1", sock)
    rs, so, rc, co = _pingpong("uvd:" + sock, "uvd:" + sock, port + 400, ["-n", "50"])
    assert rs == 0 and rc == 0, so + co


# ---------------------------------------------------------------- multicast groups

# A client of the daemon (pyverbs over the preloaded library): a UD QP of an rdma_cm ID
# joined to an IPv4 group (rdma_join_multicast, which attaches it), max_mcast_grp and
# its QPN printed, then asleep until killed.  With max_mcast_grp 0 it says so and does not try.
MCAST_CLIENT = r"""
import sys, time
import pyverbs.device as d
import pyverbs.cm_enums as ce
from pyverbs.cmid import CMID, AddrInfo, CMEventChannel, CMEvent
from pyverbs.qp import QPCap, QPInitAttr
import pyverbs.enums as e
ctx = d.Context(name='uverbs0')
grp = ctx.query_device().max_mcast_grp
print('max_mcast_grp', grp, flush=True)
if grp == 0:
    sys.exit(0)
# the device's address: GID 1, IPv4-mapped (with an engine, the engine's own address)
g = str(ctx.query_gid(1, 1)).split(':')
src, group = '%d.%d.%d.%d' % (int(g[6][:2], 16), int(g[6][2:], 16), int(g[7][:2], 16), int(g[7][2:], 16)), sys.argv[1]
ch = CMEventChannel()
cm = CMID(creator=ch, port_space=ce.RDMA_PS_UDP)
cm.bind_addr(AddrInfo(src=src, port_space=ce.RDMA_PS_UDP))
cm.resolve_addr(AddrInfo(src=src, dst=group, port_space=ce.RDMA_PS_UDP))
assert CMEvent(ch).event_type == ce.RDMA_CM_EVENT_ADDR_RESOLVED
cm.create_qp(QPInitAttr(qp_type=e.IBV_QPT_UD, cap=QPCap(max_recv_wr=1)))
# rdma_join_multicast: the library's CM attaches the QP (ibv_attach_mcast, ATTACH_TO_MCG)
cm.join_multicast(addr=AddrInfo(src=group, port_space=ce.RDMA_PS_UDP))
assert CMEvent(ch).event_type == ce.RDMA_CM_EVENT_MULTICAST_JOIN
print('qpn 0x%x attached' % cm.qpn, flush=True)
time.sleep(60)
"""


def _mcast_client(uri, group):
    p = subprocess.Popen(["/usr/bin/python3", "-c", MCAST_CLIENT, group], env=_env(uri),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = p.stdout.readline()
    return p, first


def _igmp_has(group):
    """Whether some socket of this network namespace joined the IPv4 group (the
    kernel's /proc/net/igmp: each group as the hex of its address in host order)."""
    want = "%08X" % struct.unpack("=I", socket.inet_aton(group))[0]
    with open("/proc/net/igmp") as f:
        return any(line.split()[0] == want for line in f if line.startswith("\t"))


@pytest.mark.parametrize("mode", [["-R"], []], ids=["R", "engines"])
def test_mcast_client_attaches_only_its_own_qp_and_its_death_leaves_the_group(daemon, mode):
    """A client attaches its own UD QP to a group, which joins the group on the wire:
    with -R the daemon's device, with engines the client's engine; another client
    naming that QP is refused; when the client dies the daemon detaches the QP, then
    destroys it, so the IPv4 group is left too."""
    base, _ = _next()
    group = "230.%d.%d.7" % (NET, _seq["b"])
    d = daemon(base + "1", args=mode)
    a, first = _mcast_client("uvd:" + d.sock, group)
    try:
        assert first.split()[:1] == ["max_mcast_grp"] and int(first.split()[1]) > 0, first + d.text()
        line = a.stdout.readline()
        if not line.startswith("qpn "):
            line += a.communicate(timeout=30)[0]
        assert line.startswith("qpn ") and "attached" in line, line
        qpn = int(line.split()[1], 16)
        assert _igmp_has(group), "nobody joined %s" % group
        b = Raw(d.sock)
        for opcode in (0x806, 0x807):     # ATTACH_TO_MCG, DETACH_FROM_MCG (attach_to_mcg_in)
            inp = bytearray(_op(opcode, qpn, size=0x100))
            inp[0x10:0x20] = bytes(10) + b"\xff\xff" + socket.inet_aton(group)
            rc, _, msg = b.cmd(bytes(inp))
            assert rc == -EPERM and "QP 0x%x is not this client's" % qpn in msg, (hex(opcode), rc, msg)
        assert _igmp_has(group), "another client's refused DETACH left the group"
    finally:
        a.kill()
        a.wait(timeout=10)
    deadline = time.time() + 10
    while _igmp_has(group) and time.time() < deadline:
        time.sleep(0.05)
    assert not _igmp_has(group), "the dead client's QP is still in %s: %s" % (group, d.text())
    deadline = time.time() + 10
    while "objects destroyed" not in d.text() and time.time() < deadline:
        time.sleep(0.05)
    assert "objects destroyed" in d.text(), d.text()
    # as Linux does (uverbs_free_qp), its QP left the group before it was destroyed
    assert "1 multicast attachments detached before its QPs were destroyed" in d.text(), d.text()


@pytest.mark.parametrize("mode", [["-R"], []], ids=["R", "engines"])
def test_mcast_mckey_between_two_clients_of_one_daemon(daemon, mode):
    """Debian's mckey, a receiver and a sender, each a client of one daemon: the
    receiver ends with "return status 0" only once all its messages came."""
    base, _ = _next()
    group = "239.%d.%d.1" % (NET, _seq["b"])
    d = daemon(base + "1", args=mode)
    env = _env("uvd:" + d.sock)
    env["UVERBS_LOG"] = "info"
    args = ["mckey", "-m", group, "-C", "10"]
    r = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the CM's "joined multicast group" line (stderr) comes once the QP is attached
        deadline = time.time() + 20
        err = ""
        while "rdma_cm: joined multicast group %s" % group not in err:
            assert r.poll() is None and time.time() < deadline, err + r.stderr.read()
            err += r.stderr.readline()
        s = subprocess.run(args + ["-s"], env=env, capture_output=True, text=True, timeout=30)
        assert s.returncode == 0 and "return status 0" in s.stdout, s.stdout + s.stderr
        out, err2 = r.communicate(timeout=30)
        assert r.returncode == 0 and "data transfers complete" in out and "return status 0" in out, out + err2
    finally:
        if r.poll() is None:
            r.kill()
            r.wait(timeout=10)


# ---------------------------------------------------------------- finding a daemon, uvinfo

def test_discovery_uses_the_daemon_in_the_run_dir(daemon):
    base, _ = _next()
    rundir = tempfile.mkdtemp(prefix="uvd-run-")
    d = daemon(base + "1", os.path.join(rundir, "uvd.sock"))
    env = _env("")
    del env["UVERBS_DEVICES"]
    env["UVERBS_RUN_DIR"] = rundir
    out = subprocess.run(["ibv_devinfo", "-v"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=60).stdout
    assert "::ffff:%s1" % base in out, out
    assert "client 1" in d.text()


def test_uvinfo_reads_counters_through_the_daemon(daemon):
    uvinfo = os.environ.get("UVINFO_BIN", "")
    assert uvinfo and os.path.isfile(uvinfo), "UVINFO_BIN not set or missing"
    base, _ = _next()
    rundir = tempfile.mkdtemp(prefix="uvd-run-")
    os.environ["UVERBS_RUN_DIR"] = rundir     # the daemon publishes there
    try:
        d = daemon(base + "1")
    finally:
        del os.environ["UVERBS_RUN_DIR"]
    env = dict(os.environ, UVERBS_RUN_DIR=rundir)
    deadline = time.time() + 10
    while True:
        r = subprocess.run([uvinfo, "--counters", "--pid", str(d.p.pid)], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=30)
        if r.returncode == 0 or time.time() > deadline:
            break
        time.sleep(0.3)
    assert r.returncode == 0 and "out_of_buffer" in r.stdout and "127.%d" % NET in r.stdout, r.stdout


def test_pingpong_perftest_write_bw_two_clients_one_daemon(daemon):
    base, port = _next()
    d = daemon(base + "1")
    args = ["ib_write_bw", "-d", "uverbs0", "-x", "1", "-p", str(port), "-n", "2000", "-s", "4096"]
    s = subprocess.Popen(args, env=_env("uvd:" + d.sock), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    time.sleep(1.0)
    c = subprocess.run(args + ["127.0.0.1"], env=_env("uvd:" + d.sock), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    so, _ = s.communicate(timeout=120)
    assert s.returncode == 0 and c.returncode == 0, so + c.stdout
    # the result row: bytes, iterations, BW peak, BW average (MB/sec), MsgRate
    rows = [l.split() for l in c.stdout.splitlines() if l.split()[:2] == ["4096", "2000"]]
    assert rows and float(rows[0][3]) > 0, c.stdout
