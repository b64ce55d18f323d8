# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""libiscsi's synchronous API through ctypes (Debian's libiscsi7; no headers are
installed): log in to URL, WRITE16 a pattern at LBA, READ16 it back, print what came
back.  Run by iser_session.py under the preloaded library.
Usage: iscsi_rw.py INITIATOR URL LBA BLOCKS SEED"""
import ctypes
import random
import sys

init, url, lba, blocks, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
BS = 512
lib = ctypes.CDLL("libiscsi.so.7")
vp = ctypes.c_void_p


class Sense(ctypes.Structure):   # struct scsi_sense (scsi-lowlevel.h)
    _fields_ = [("error_type", ctypes.c_ubyte), ("key", ctypes.c_int), ("ascq", ctypes.c_int),
                ("bits", ctypes.c_uint), ("bit_pointer", ctypes.c_ubyte), ("field_pointer", ctypes.c_uint16)]


class Task(ctypes.Structure):    # the head of struct scsi_task, up to datain
    _fields_ = [("status", ctypes.c_int), ("cdb_size", ctypes.c_int), ("xfer_dir", ctypes.c_int),
                ("expxferlen", ctypes.c_int), ("cdb", ctypes.c_ubyte * 16), ("residual_status", ctypes.c_int),
                ("residual", ctypes.c_size_t), ("sense", Sense), ("datain_size", ctypes.c_int),
                ("datain_data", ctypes.POINTER(ctypes.c_ubyte))]


lib.iscsi_create_context.restype = vp
lib.iscsi_create_context.argtypes = [ctypes.c_char_p]
lib.iscsi_parse_full_url.restype = vp
lib.iscsi_parse_full_url.argtypes = [vp, ctypes.c_char_p]
lib.iscsi_set_targetname.argtypes = [vp, ctypes.c_char_p]
lib.iscsi_set_session_type.argtypes = [vp, ctypes.c_int]
lib.iscsi_full_connect_sync.argtypes = [vp, ctypes.c_char_p, ctypes.c_int]
lib.iscsi_get_error.restype = ctypes.c_char_p
lib.iscsi_get_error.argtypes = [vp]
lib.iscsi_write16_sync.restype = ctypes.POINTER(Task)
lib.iscsi_write16_sync.argtypes = [vp, ctypes.c_int, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_int,
                                   ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
lib.scsi_cdb_read16.restype = ctypes.POINTER(Task)
lib.scsi_cdb_read16.argtypes = [ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                ctypes.c_int, ctypes.c_int]
lib.scsi_task_set_iov_in.argtypes = [ctypes.POINTER(Task), vp, ctypes.c_int]
lib.iscsi_scsi_command_sync.restype = ctypes.POINTER(Task)
lib.iscsi_scsi_command_sync.argtypes = [vp, ctypes.c_int, ctypes.POINTER(Task), vp]
lib.scsi_free_scsi_task.argtypes = [ctypes.POINTER(Task)]
lib.iscsi_logout_sync.argtypes = [vp]

ctx = lib.iscsi_create_context(init.encode())
assert ctx
# "iser://": the URL parser sets the context's transport to iSER (iscsi_init_transport)
assert lib.iscsi_parse_full_url(ctx, url.encode()), lib.iscsi_get_error(ctx)
portal, target, lun = url[len("iser://"):].split("/")
lib.iscsi_set_targetname(ctx, target.encode())
lib.iscsi_set_session_type(ctx, 2)   # ISCSI_SESSION_NORMAL
assert lib.iscsi_full_connect_sync(ctx, portal.encode(), int(lun)) == 0, lib.iscsi_get_error(ctx)
data = random.Random(seed).randbytes(blocks * BS)
t = lib.iscsi_write16_sync(ctx, int(lun), lba, data, len(data), BS, 0, 0, 0, 0, 0)
assert t, lib.iscsi_get_error(ctx)
print("write16 status %d" % t.contents.status, flush=True)
lib.scsi_free_scsi_task(t)
# READ16 into a buffer of ours (scsi_task_set_iov_in): over iSER the target's RDMA
# WRITEs land there, and the task's datain stays empty
t = lib.scsi_cdb_read16(lba, len(data), BS, 0, 0, 0, 0, 0)
assert t
buf = ctypes.create_string_buffer(len(data))
iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p).value, len(data))   # struct scsi_iovec
lib.scsi_task_set_iov_in(t, iov, 1)
assert lib.iscsi_scsi_command_sync(ctx, int(lun), t, None), lib.iscsi_get_error(ctx)
got = buf.raw
print("read16 status %d, %d bytes, %s" % (t.contents.status, len(got) - t.contents.residual,
                                          "same as written" if got == data else "DIFFERENT from what was written"),
      flush=True)
lib.scsi_free_scsi_task(t)
lib.iscsi_logout_sync(ctx)
