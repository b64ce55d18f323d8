#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Seed corpus for fuzz_request.c, written into the fuzz work dir at test time.

Each seed is a small program in the fuzzer's input language: one config byte, then
operations (selector calls with a size/patch byte and the request struct, or owner
release / reopen / interrupt / memory lookup / failure / removal / fragmentation ops).
"""
import os
import struct
import sys

PG = 16384
HELLO, INFO, MAP, UNMAP, PIN, SEGS, UNPIN, DMA, FREE, ARM, DISARM, RESET = range(12)
RELEASE, REOPEN, FIRE, MEMTYPE, FAIL, GONE, FRAG = 13, 14, 15, 16, 17, 18, 19
PATCH_HANDLE, PATCH_MEMTYPE = 0x40, 0x20


def call(sel, req, s=0):
    return bytes([sel, s]) + req


def pin(va=0x100000000, length=2 * PG, flags=3):
    return call(PIN, struct.pack('<QQII', va, length, flags, 0))


def dma(length=4096, align=4096):
    return call(DMA, struct.pack('<QQII', length, align, 0, 0))


def handle_op(sel):
    return call(sel, struct.pack('<Q', 0), PATCH_HANDLE)


seeds = {
    'pin_unpin': b'\x09' + pin() + handle_op(UNPIN),
    'dma_alloc_free': b'\x09' + dma() + handle_op(FREE),
    # MEMTYPE: lookup byte, then the IOKit cache mode the caller maps with
    # (1 kIOInhibitCache, 4 kIOWriteCombineCache, 9 kIOPostedCombinedReordered).
    'map_wc_uar': b'\x09' + call(MAP, struct.pack('<IIQQ', 0, 1, PG, PG)) + bytes([MEMTYPE, 1, 9])
                  + call(UNMAP, struct.pack('<II', 0, 0), PATCH_MEMTYPE),
    'map_init_seg_uc': b'\x09' + call(MAP, struct.pack('<IIQQ', 0, 0, 0, PG)) + bytes([MEMTYPE, 1, 1])
                       + bytes([MEMTYPE, 1, 4]),
    'irq': b'\x09' + call(ARM, struct.pack('<IIQ', 1, 0, 0xc0ffee)) + bytes([FIRE, 1])
           + call(DISARM, struct.pack('<IIQ', 1, 0, 0)),
    'reset': b'\x09' + pin() + call(RESET, struct.pack('<II', 0, 0)),
    'hello_info': b'\x00' + call(HELLO, struct.pack('<IIII', 1, 0, 0, 0)) + call(INFO, struct.pack('<II', 0, 0)),
    'bad_version': b'\x00' + call(HELLO, struct.pack('<IIII', 2, 0, 0, 0)) + pin(),
    'release_reopen': b'\x09' + pin() + dma() + bytes([RELEASE, 0, REOPEN, 0x08]) + pin(),
    'fragmented_segs': b'\x09' + bytes([FRAG]) + pin(length=100 * PG) + call(SEGS, struct.pack('<QII', 0, 64, 0), PATCH_HANDLE),
    'quarantine': b'\x09' + pin() + bytes([FAIL, 0x0c, RELEASE, 0, REOPEN, 0]),
    'gone': b'\x09' + pin() + bytes([GONE, 0x5a]) + pin() + bytes([RELEASE, 0]),
    'limits': b'\xf3' + pin(length=PG) * 20 + dma() * 5,
    'bad_segments': b'\x09' + bytes([FAIL, 0x30]) + pin() + bytes([FAIL, 0x10]) + pin() + dma(),
    'sizes': b'\x09' + bytes([PIN, 0x80, 23]) + bytes(23) + bytes([INFO, 0x10, 3]) + bytes(8),
}

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as fh:
        fh.write(data)
