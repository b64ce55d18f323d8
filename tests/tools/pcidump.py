# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Config-space dumps in `lspci -xxxx` format, built here so uvinfo's PCIe path reader can
be tested without the hardware: libpci's dump access method (lspci -A dump -O
dump.name=FILE, or lspci -F FILE) reads them exactly as it reads a saved dump.

Register offsets and encodings are the PCI Local Bus spec 3.0 type 0/1 headers and the
PCI Express Base spec's PCI Express Capability Structure (section 7.5.3):
  +0x02 PCIe Capabilities [7:4] device/port type   +0x04 Device Capabilities [2:0] MPS
  +0x08 Device Control [7:5] MPS, [14:12] MRRS      +0x0c Link Capabilities [3:0] speed, [9:4] width
  +0x12 Link Status [3:0] speed, [9:4] width         +0x2c Link Capabilities 2 [7:1] speeds vector

The vendor/device ids of the non-NIC functions are placeholders (Intel's vendor id, made
up device ids): the reader must not depend on them.  The ConnectX-5 is 15b3:1017.
"""

PORT_TYPE = {"endpoint": 0x0, "root": 0x4, "upstream": 0x5, "downstream": 0x6}
SIZE_CODE = {128: 0, 256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
EXP_OFF = 0x60
PM_OFF = 0x40


class Fn:
    def __init__(self, bus, dev, func, vendor, device, kind, cur, cap, mps, mps_cap, mrrs,
                 sec=None, sub=None, name="Device"):
        self.bus, self.dev, self.func = bus, dev, func
        self.vendor, self.device, self.kind = vendor, device, kind
        self.cur, self.cap = cur, cap          # (gen, width)
        self.mps, self.mps_cap, self.mrrs = mps, mps_cap, mrrs
        self.sec, self.sub, self.name = sec, sub, name

    @property
    def bdf(self):
        return "%02x:%02x.%x" % (self.bus, self.dev, self.func)

    def config(self):
        c = bytearray(4096)

        def w8(off, v):
            c[off] = v & 0xff

        def w16(off, v):
            c[off:off + 2] = (v & 0xffff).to_bytes(2, "little")

        def w32(off, v):
            c[off:off + 4] = (v & 0xffffffff).to_bytes(4, "little")

        w16(0x00, self.vendor)
        w16(0x02, self.device)
        w16(0x04, 0x0406)                      # memory space, bus master
        w16(0x06, 0x0010)                      # capabilities list
        bridge = self.kind != "endpoint"
        if bridge:
            w8(0x0a, 0x04); w8(0x0b, 0x06)     # PCI-to-PCI bridge
            w8(0x0e, 0x01)                     # type 1 header
            w8(0x18, self.bus); w8(0x19, self.sec); w8(0x1a, self.sub)
        else:
            w8(0x0a, 0x00); w8(0x0b, 0x02)     # Ethernet controller
            w8(0x0e, 0x80 if self.func == 0 else 0x00)
            w16(0x2c, self.vendor); w16(0x2e, 0x0008)
        w8(0x34, PM_OFF)
        # Power management capability first, so the reader has to walk the list.
        w8(PM_OFF, 0x01); w8(PM_OFF + 1, EXP_OFF); w16(PM_OFF + 2, 0x0003)
        e = EXP_OFF
        w8(e, 0x10); w8(e + 1, 0x00)
        w16(e + 2, 0x0002 | (PORT_TYPE[self.kind] << 4) | (0x100 if self.kind in ("root", "downstream") else 0))
        w32(e + 4, SIZE_CODE[self.mps_cap])
        w16(e + 8, (SIZE_CODE[self.mps] << 5) | (SIZE_CODE[self.mrrs] << 12))
        w32(e + 0x0c, self.cap[0] | (self.cap[1] << 4) | ((self.dev & 0xff) << 24))
        w16(e + 0x12, self.cur[0] | (self.cur[1] << 4))
        w32(e + 0x2c, ((1 << self.cap[0]) - 1) << 1)   # speeds vector: gen1..cap
        return bytes(c)

    def dump(self):
        lines = ["%s %s: %s" % (self.bdf, "PCI bridge" if self.kind != "endpoint" else "Ethernet controller", self.name)]
        cfg = self.config()
        for off in range(0, len(cfg), 16):
            lines.append("%02x: %s" % (off, " ".join("%02x" % b for b in cfg[off:off + 16])) if off < 0x100
                         else "%03x: %s" % (off, " ".join("%02x" % b for b in cfg[off:off + 16])))
        return "\n".join(lines) + "\n\n"


def thunderbolt_chain():
    """A Mac-style Thunderbolt 5 enclosure: the tunnel shows up as a PCIe Gen4 x4 link
    with a 128-byte max payload; behind it a ConnectX-5 (Gen3 x16 capable) runs Gen3 x4."""
    return [
        Fn(0x00, 0x1c, 0, 0x8086, 0x7ab8, "root", (4, 4), (4, 4), 128, 256, 512, sec=1, sub=4,
           name="Root port"),
        Fn(0x01, 0x00, 0, 0x8086, 0x5786, "upstream", (4, 4), (4, 4), 128, 128, 512, sec=2, sub=4,
           name="Thunderbolt switch upstream port"),
        Fn(0x02, 0x00, 0, 0x8086, 0x5787, "downstream", (4, 4), (4, 4), 128, 128, 512, sec=3, sub=3,
           name="Thunderbolt switch downstream port"),
        Fn(0x02, 0x01, 0, 0x8086, 0x5787, "downstream", (1, 1), (4, 4), 128, 128, 512, sec=4, sub=4,
           name="Thunderbolt switch downstream port (empty)"),
        Fn(0x03, 0x00, 0, 0x15b3, 0x1017, "endpoint", (3, 4), (3, 16), 128, 512, 512,
           name="Mellanox Technologies MT27800 Family [ConnectX-5]"),
        Fn(0x03, 0x00, 1, 0x15b3, 0x1017, "endpoint", (3, 4), (3, 16), 128, 512, 512,
           name="Mellanox Technologies MT27800 Family [ConnectX-5]"),
    ]


def server_slot_chain():
    """A ConnectX-5 in a full x16 Gen3 slot straight under a root port: nothing to warn."""
    return [
        Fn(0x00, 0x01, 0, 0x8086, 0x1901, "root", (3, 16), (3, 16), 512, 512, 512, sec=1, sub=1,
           name="Root port"),
        Fn(0x01, 0x00, 0, 0x15b3, 0x1017, "endpoint", (3, 16), (3, 16), 512, 512, 4096,
           name="Mellanox Technologies MT27800 Family [ConnectX-5]"),
    ]


def write(path, fns):
    with open(path, "w") as fh:
        for f in fns:
            fh.write(f.dump())
    return path


if __name__ == "__main__":
    import sys
    write(sys.argv[1], thunderbolt_chain() if len(sys.argv) < 3 or sys.argv[2] == "tb" else server_slot_chain())
