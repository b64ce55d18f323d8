# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""fwcmd on the emulated ConnectX: output, exit status, and the capability values
decoded independently here (from the emulator's seed bytes -- a real ConnectX-4's
answers -- and the layout rows) rather than by the C accessors fwcmd uses."""
import json
import os
import re
import subprocess

import pytest

FWCMD = os.environ.get("FWCMD", "fwcmd")
SRC = os.environ.get("UVERBS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def run(*args, env=None):
    e = dict(os.environ)
    e.pop("UVERBS_DEVICES", None)
    if env:
        e.update(env)
    p = subprocess.run([FWCMD, *args], capture_output=True, text=True, timeout=120, env=e)
    return p.returncode, p.stdout, p.stderr


def layout_rows(struct):
    """(name, bit offset, width) of every PRM_FIELD row of `struct` in the layouts."""
    rows = []
    pat = re.compile(r"PRM_FIELD\(%s,\s*(\w+),\s*(0x[0-9a-fA-F]+|\d+),\s*(0x[0-9a-fA-F]+|\d+)\)" % struct)
    layouts = os.path.join(SRC, "firmware-cmd", "layouts")
    for f in sorted(os.listdir(layouts)):
        with open(os.path.join(layouts, f)) as fh:
            for m in pat.finditer(fh.read()):
                rows.append((m.group(1), int(m.group(2), 0), int(m.group(3), 0)))
    return rows


def seed_bytes(array):
    """The designated-initializer byte array `array` from hw/emu/caps_seed.c."""
    with open(os.path.join(SRC, "hw", "emu", "caps_seed.c")) as fh:
        text = fh.read()
    m = re.search(r"%s\[[^\]]*\]\s*=\s*\{(.*?)\};" % array, text, re.S)
    assert m, array
    buf = bytearray(0x1000)
    pos = 0
    for tok in re.findall(r"\[(0x[0-9a-fA-F]+)\]\s*=|(0x[0-9a-fA-F]+)", m.group(1)):
        if tok[0]:
            pos = int(tok[0], 16)
        else:
            buf[pos] = int(tok[1], 16)
            pos += 1
    return bytes(buf)


def field(buf, off, width):
    """PRM bit numbering: bit 0 is the MSB of byte 0; big-endian throughout."""
    total = int.from_bytes(buf, "big")
    shift = len(buf) * 8 - off - width
    return (total >> shift) & ((1 << width) - 1)


# Fields the emulated ConnectX-5 Ex changes on top of the ConnectX-4 seed (hw/emu/caps.c
# cx5_changes), with their maximum here: what it adds, what it cannot back and clears
# (no e-switch, vports, NIC flow tables or congestion control: Linux's mlx5_core and
# mlx5_ib went for each in the VM), and its timer's rate.  num_of_uars_per_page changes only the current.
EMU_OVERRIDES = {"pg": 1, "uar_4k": 1, "num_of_uars_per_page": None, "vport_group_manager": 0,
                 "eswitch_manager": 0, "nic_flow_table": 0, "cc_query_allowed": 0,
                 "cc_modify_allowed": 0, "device_frequency_khz": 1000000}


def test_json_caps_general_prints_the_seeded_capabilities():
    rc, out, err = run("--json", "caps", "general")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["caps"] == "general" and doc["layout"] == "cmd_hca_cap"
    fields = doc["fields"]
    rows = layout_rows("cmd_hca_cap")
    assert len(rows) > 300
    # every row of the table is printed: no hand-kept list
    assert set(fields) == {r[0] for r in rows}
    seed = seed_bytes("emu_caps_seed_general_max")[:0x100]
    checked = 0
    for name, off, width in rows:
        if name in EMU_OVERRIDES:
            if EMU_OVERRIDES[name] is not None:
                assert fields[name]["max"] == EMU_OVERRIDES[name], name
            continue
        assert fields[name]["max"] == field(seed, off, width), name
        checked += 1
    assert checked > 300
    # a few values a reader can hold against the ConnectX-4 trace
    assert fields["log_max_qp_sz"]["max"] == 15
    assert fields["log_max_cq_sz"]["max"] == field(seed, 0xc8, 8) > 0
    # what the driver set through SET_HCA_CAP (4 KiB host pages here)
    assert fields["log_uar_page_sz"]["cur"] == 0
    assert fields["cmdif_checksum"]["cur"] == 0


def test_caps_roce_json_matches_seed():
    rc, out, err = run("--json", "caps", "roce")
    assert rc == 0, err
    fields = json.loads(out)["fields"]
    seed = seed_bytes("emu_caps_seed_roce_max")[:0x100]
    for name, off, width in layout_rows("roce_cap"):
        assert fields[name]["max"] == field(seed, off, width), name


def test_caps_table_lists_field_max_and_current():
    rc, out, err = run("caps", "general")
    assert rc == 0, err
    assert re.search(r"^\s+log_max_qp_sz\s+15 \(0xf\)\s+15 \(0xf\)$", out, re.M), out[:2000]


def test_raw_bad_opcode_exits_1_naming_it():
    rc, out, err = run("raw", "0x7777")
    assert rc == 1
    assert "bad opcode" in err
    assert "0x2" in err


def test_raw_query_issi_succeeds_and_decodes_status():
    rc, out, err = run("--json", "raw", "0x10a")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["command"] == "QUERY_ISSI"
    assert doc["status"] == 0


def test_bogus_device_is_a_runtime_error_in_one_line():
    rc, out, err = run("--device", "bogus:", "adapter")
    assert rc == 1
    assert "bogus" in err and err.count("\n") == 1, err


def test_bad_arguments_exit_2():
    assert run("frobnicate")[0] == 2
    assert run("caps", "nonsense")[0] == 2
    assert run("reg", "nope")[0] == 2
    assert run("raw", "zz")[0] == 2
    assert run()[0] == 2


def test_fault_injected_error_exits_1_by_name():
    rc, out, err = run("--device", "emu:fail=0x101:0x3:0xabc", "adapter")
    assert rc == 1
    assert "QUERY_ADAPTER" in err and "bad parameter" in err and "0xabc" in err


def test_fatal_device_fails_fast_naming_the_syndrome():
    rc, out, err = run("--device", "emu:fatal=0x7", "caps")
    assert rc == 1
    assert "fatal" in err and "0x7" in err


def test_bringup_command_refused_exits_1_naming_status_and_syndrome():
    # INIT_HCA (0x102) answered with bad system state: the device said no -> 1
    rc, out, err = run("--device", "emu:fail=0x102:0x4:0x1234", "adapter")
    assert rc == 1, err
    assert err.count("\n") == 1, err
    assert "bring-up" in err and "INIT_HCA" in err and "bad system state" in err
    assert "status bad system state (0x4)" in err and "syndrome 0x1234" in err


def test_bringup_command_refused_by_name_exits_1():
    rc, out, err = run("--device", "emu:fail=INIT_HCA:0x4", "adapter")
    assert rc == 1, err
    assert "INIT_HCA" in err and "bad system state" in err


def test_default_device_comes_from_uverbs_devices():
    rc, out, err = run("--json", "adapter", env={"UVERBS_DEVICES": "emu:page=16k,emu:"})
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["device"] == "emu:page=16k"
    assert doc["host_page_size"] == 16384


def test_adapter_reports_pci_ids_and_fw():
    rc, out, err = run("--json", "adapter")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["pci_id"] == "15b3:1019"
    assert doc["cmd_interface_rev"] == 5
    assert doc["query_adapter_param_block"]["vsd_vendor_id"] == 0x15b3


def test_pages_reports_what_the_device_holds():
    rc, out, err = run("--json", "pages")
    assert rc == 0, err
    doc = json.loads(out)
    d = doc["driver"]
    assert d["pages_held"] == d["boot_pages"] + d["init_pages"] + d["regular_pages"] > 0
    assert doc["query_pages"]["boot"] == 0 and doc["query_pages"]["init"] == 0


def test_bringup_reports_log_max_qp_and_the_init_pages_it_cost():
    rc, out, err = run("--json", "bringup", env={"UVERBS_LOG": "info"})
    assert rc == 0, err
    doc = json.loads(out)
    # Linux's profile as the ConnectX-4 trace shows it set, not the maximum (23)
    assert doc["log_max_qp"] == 17 and doc["log_max_qp_max"] == 23
    rc, pout, perr = run("--json", "pages")
    assert rc == 0, perr
    assert doc["init_pages"] == json.loads(pout)["driver"]["init_pages"] > 0
    assert doc["init_bytes"] == doc["init_pages"] * 4096
    # the async EQ: Linux's 0x001f02be plus command and page-request events
    assert doc["async_event_mask"].split()[0] == "0x00000000001f0ebe"
    # and the same figures in the info log line
    assert re.search(r"log_max_qp 17 .*%d init pages" % doc["init_pages"], err), err


def test_health_ok_and_fatal():
    rc, out, err = run("--json", "health")
    assert rc == 0, err
    assert json.loads(out)["state"] == "ok"
    rc, out, err = run("--json", "--device", "emu:fatal=0x7", "health")
    assert rc == 1, err
    doc = json.loads(out)
    assert doc["state"] == "fatal" and doc["health_syndrome"] == "0x7"


@pytest.mark.parametrize("reg,field_name", [("paos", "admin_status"), ("pmtu", "max_mtu"),
                                            ("ptys", "eth_proto_oper")])
def test_reg_reads(reg, field_name):
    rc, out, err = run("--json", "reg", reg)
    assert rc == 0, err
    assert field_name in json.loads(out)["fields"]


def test_help_is_man_style():
    rc, out, err = run("--help")
    assert rc == 0
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS"):
        assert section in out


def test_device_option_without_a_value_says_it_needs_one():
    rc, out, err = run("--device")
    assert rc == 2 and "option '--device' needs a value" in err and "unknown option" not in err
    rc, out, err = run("--device=")
    assert rc == 2 and "needs a value" in err


@pytest.mark.parametrize("args", [["adapter", "extra"], ["caps", "general", "extra"], ["gids", "x"]])
def test_extra_arguments_are_refused_by_name(args):
    rc, out, err = run("--device", "emu:ip=127.63.3.1", *args)
    assert rc == 2 and "unexpected argument '%s'" % args[-1] in err, err


@pytest.mark.parametrize("args", [["--outlen", "-1"], ["--outlen", "17179869184g"], ["raw", "-1"],
                                  ["raw", "0x10a", "100000000"]])
def test_negative_and_overflowing_numbers_are_refused(args):
    rc, out, err = run("--device", "emu:ip=127.63.3.2", *args)
    assert rc == 2 and err


def test_output_that_cannot_be_written_exits_1():
    e = dict(os.environ)
    e.pop("UVERBS_DEVICES", None)
    with open("/dev/full", "w") as full:
        p = subprocess.run([FWCMD, "--device", "emu:ip=127.63.3.3", "adapter"], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120, env=e)
    assert p.returncode == 1 and "cannot write the output" in p.stderr


def test_wctest_passes_whole_bursts_and_fails_torn_ones():
    # Linux wc.c's verdict: the first CQE names an early NOP when the BlueFlame copies
    # (CQ_UPDATE set) were taken, the last one (254) when the device read the ring
    rc, out, err = run("--device", "emu:", "--json", "wctest")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["result"] == "supported" and doc["nops"] == 255 and doc["first_cqe_wqe_counter"] < 254
    rc, out, err = run("--device", "emu:bf=torn", "--json", "wctest")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["result"] == "not_supported" and doc["first_cqe_wqe_counter"] == 254
