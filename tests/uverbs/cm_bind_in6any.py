# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Run under the preloaded library (test_rdma_cm_iser.py starts it): librdmacm's
rdma_bind_addr / rdma_listen / rdma_set_option(AFONLY) on one NIC, through ctypes, and
one line per case with what the call returned.  Usage: cm_bind_in6any.py PORT [hold]
("hold": then waits on stdin, its listeners up, for a client the caller runs)."""
import ctypes
import errno
import socket
import struct
import sys

cm = ctypes.CDLL("librdmacm.so.1", use_errno=True)
vp = ctypes.c_void_p
cm.rdma_create_event_channel.restype = vp
cm.rdma_create_id.argtypes = [vp, ctypes.POINTER(vp), vp, ctypes.c_int]
cm.rdma_bind_addr.argtypes = [vp, ctypes.c_char_p]
cm.rdma_listen.argtypes = [vp, ctypes.c_int]
cm.rdma_set_option.argtypes = [vp, ctypes.c_int, ctypes.c_int, vp, ctypes.c_size_t]
RDMA_PS_TCP = 0x106
RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY = 0, 2

ch = cm.rdma_create_event_channel()
assert ch, "rdma_create_event_channel failed"


def new_id():
    i = vp()
    assert cm.rdma_create_id(ch, ctypes.byref(i), None, RDMA_PS_TCP) == 0
    return i


def sin(ip, port):
    return struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton(ip) + bytes(8)


def sin6(ip, port):
    return (struct.pack("=H", socket.AF_INET6) + struct.pack("!HI", port, 0) +
            socket.inet_pton(socket.AF_INET6, ip) + bytes(4))


def res(rc):
    return "0" if rc == 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def afonly(i, v):
    val = ctypes.c_int(v)
    return res(cm.rdma_set_option(i, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, ctypes.byref(val), 4))


def bind(name, i, addr):
    print("%s bind %s" % (name, res(cm.rdma_bind_addr(i, addr))), flush=True)


def listen(name, i):
    print("%s listen %s" % (name, res(cm.rdma_listen(i, 4))), flush=True)


def local(name, i):
    # rdma_get_local_addr (an inline in <rdma/rdma_cma.h>): struct rdma_cm_id's
    # route.addr.src_addr, after its four pointers
    b = ctypes.string_at(i.value + 4 * ctypes.sizeof(vp), 28)
    fam = struct.unpack("=H", b[:2])[0]
    port = struct.unpack("!H", b[2:4])[0]
    addr = socket.inet_ntop(socket.AF_INET6, b[8:24]) if fam == socket.AF_INET6 else socket.inet_ntoa(b[4:8])
    print("%s local family %s addr %s port %d" % (name, "AF_INET6" if fam == socket.AF_INET6 else fam, addr, port),
          flush=True)


port = int(sys.argv[1])
# tgt's iSER portals: 0.0.0.0, then [::] with AFONLY 1, on one port
v4 = new_id()
bind("v4any", v4, sin("0.0.0.0", port))
listen("v4any", v4)
v6 = new_id()
print("v6only afonly %s" % afonly(v6, 1))
bind("v6only", v6, sin6("::", port))
listen("v6only", v6)
local("v6only", v6)
# [::] without AFONLY (net.ipv6.bindv6only 0) or with AFONLY 0: dual-stack, so the
# 0.0.0.0 listener on the port is in its way
for name, opt in (("dual", None), ("dual0", 0)):
    d = new_id()
    if opt is not None:
        print("%s afonly %s" % (name, afonly(d, opt)))
    bind(name, d, sin6("::", port))
# on a port of its own a dual-stack [::] listens, and then holds the port for IPv4 too
dual = new_id()
bind("dualfree", dual, sin6("::", port + 1))
listen("dualfree", dual)
local("dualfree", dual)
bind("v4after", new_id(), sin("0.0.0.0", port + 1))
# IPv6 addresses other than the wildcard name no address of ours
bind("loop6", new_id(), sin6("::1", port + 2))
bind("mapped", new_id(), sin6("::ffff:127.0.0.1", port + 2))
# AFONLY once the ID listens: EINVAL (Linux cma.c rdma_set_afonly)
print("v4any afonly-after-listen %s" % afonly(v4, 1), flush=True)
if len(sys.argv) > 2:
    print("holding", flush=True)
    sys.stdin.read()
