# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""tools/vfio-bind against a fake sysfs tree with a fake kernel.

The control files the tool writes (a driver's unbind and bind files, bus/pci/drivers_probe)
are FIFOs served by threads that do what the kernel does: unbind removes the device's
driver link, drivers_probe binds the device to its driver_override (or to mlx5_core
by vendor id), binding to vfio-pci creates /dev/vfio/<group>. So the tool's own checks
(driver after probe, group node) run for real, and the tests assert on the files and
links left behind and on the sequence of writes.
Run: /usr/bin/python3 -m pytest tests/shim/test_vfio_bind.py
"""
import os
import select
import subprocess
import threading
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "vfio-bind"
BDF = "0000:03:00.0"


class FakeKernel:
    def __init__(self, root: Path):
        self.sys = root / "sys"
        self.dev = root / "dev"
        self.log = []          # (what, data) in the order the kernel saw them
        self.lock = threading.Lock()
        self.fifos = []
        self.stopping = False
        self.ignore_override = False   # a kernel whose probe gives the device to mlx5_core anyway
        (self.sys / "bus/pci/devices").mkdir(parents=True)
        (self.sys / "bus/pci/drivers").mkdir(parents=True)
        (self.dev / "vfio").mkdir(parents=True)
        (self.dev / "vfio/vfio").touch()
        self._fifo(self.sys / "bus/pci/drivers_probe", self._probe)

    # -- building the tree --
    def driver(self, name):
        d = self.sys / "bus/pci/drivers" / name
        if d.exists():
            return
        d.mkdir()
        self._fifo(d / "unbind", lambda bdf, n=name: self._unbind(n, bdf))
        self._fifo(d / "bind", lambda bdf, n=name: self._bind_write(n, bdf))

    def device(self, bdf, vendor="0x15b3", device="0x1017", group=12, driver="mlx5_core", netdev=None):
        d = self.sys / "bus/pci/devices" / bdf
        d.mkdir()
        (d / "vendor").write_text(vendor + "\n")
        (d / "device").write_text(device + "\n")
        (d / "driver_override").write_text("(null)\n")
        if group is not None:
            g = self.sys / "kernel/iommu_groups" / str(group) / "devices"
            g.mkdir(parents=True, exist_ok=True)
            (d / "iommu_group").symlink_to(f"../../../kernel/iommu_groups/{group}")
            (g / bdf).symlink_to(f"../../../../bus/pci/devices/{bdf}")
        if netdev:
            (d / "net" / netdev).mkdir(parents=True)
        if driver:
            self.driver(driver)
            self._link(bdf, driver)
        return d

    def driver_of(self, bdf):
        link = self.sys / "bus/pci/devices" / bdf / "driver"
        return os.readlink(link).rsplit("/", 1)[-1] if link.is_symlink() else None

    # -- kernel behaviour --
    def _group(self, bdf):
        link = self.sys / "bus/pci/devices" / bdf / "iommu_group"
        return os.readlink(link).rsplit("/", 1)[-1] if link.is_symlink() else None

    def _link(self, bdf, drv):
        (self.sys / "bus/pci/devices" / bdf / "driver").symlink_to(f"../../../bus/pci/drivers/{drv}")
        if drv == "vfio-pci" and self._group(bdf):
            (self.dev / "vfio" / self._group(bdf)).touch()

    def _unbind(self, drv, bdf):
        self.log.append(("unbind " + drv, bdf))
        if self.driver_of(bdf) == drv:
            (self.sys / "bus/pci/devices" / bdf / "driver").unlink()
            if drv == "vfio-pci" and self._group(bdf):
                node = self.dev / "vfio" / self._group(bdf)
                if node.exists():
                    node.unlink()

    def _bind_write(self, drv, bdf):
        self.log.append(("bind " + drv, bdf))
        if self.driver_of(bdf) is None:
            self._link(bdf, drv)

    def _probe(self, bdf):
        self.log.append(("drivers_probe", bdf))
        d = self.sys / "bus/pci/devices" / bdf
        if not d.exists() or self.driver_of(bdf):
            return
        override = (d / "driver_override").read_text().strip()
        if override and override != "(null)" and not self.ignore_override:
            if (self.sys / "bus/pci/drivers" / override).exists():
                self._link(bdf, override)
            return
        if (d / "vendor").read_text().strip() == "0x15b3" and (self.sys / "bus/pci/drivers/mlx5_core").exists():
            self._link(bdf, "mlx5_core")

    # -- FIFO plumbing --
    # One server thread reads every control FIFO (opened read-write so that it never
    # sees EOF). A kernel write is synchronous; FIFO writes are not, so when the tool's
    # "unbind" and "drivers_probe" writes are both pending, unbinds are served first:
    # that is the order the tool writes them in, and the order the kernel would see.
    def _fifo(self, path, handler):
        os.mkfifo(path)
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self.fifos.append((fd, path, handler))
        if not hasattr(self, "_thread"):
            self._thread = threading.Thread(target=self._serve, daemon=True)
            self._thread.start()

    def _serve(self):
        while not self.stopping:
            fds = [f[0] for f in list(self.fifos)]
            ready, _, _ = select.select(fds, [], [], 0.05)
            if not ready:
                continue
            # Read every FIFO, not only those select saw: one created after this
            # round's list was taken may already hold an earlier write.
            pending = []
            for fd, path, handler in list(self.fifos):
                try:
                    data = os.read(fd, 4096).decode()
                except BlockingIOError:
                    continue
                for line in data.splitlines():
                    pending.append((0 if path.name == "unbind" else 1, handler, line.strip()))
            for _, handler, line in sorted(pending, key=lambda x: x[0]):
                with self.lock:
                    handler(line)

    def stop(self):
        self.stopping = True
        if hasattr(self, "_thread"):
            self._thread.join(timeout=2)
        for fd, _, _ in self.fifos:
            os.close(fd)


@pytest.fixture
def k(tmp_path):
    kern = FakeKernel(tmp_path)
    kern.driver("vfio-pci")
    yield kern
    kern.stop()


def run(k, *args):
    return subprocess.run(["bash", str(TOOL), "--sysfs-root", str(k.sys), "--dev-root", str(k.dev), *args],
                          capture_output=True, text=True, timeout=30)


def test_bind_moves_function_from_mlx5_core_to_vfio_pci(k):
    d = k.device(BDF)
    r = run(k, BDF)
    assert r.returncode == 0, r.stderr
    assert k.driver_of(BDF) == "vfio-pci"
    assert (d / "driver_override").read_text() == "vfio-pci\n"
    assert k.log == [("unbind mlx5_core", BDF), ("drivers_probe", BDF)]
    assert (k.dev / "vfio/12").exists()
    assert "IOMMU group 12" in r.stdout
    assert "fwcmd adapter" in r.stdout


def test_bind_prints_memlock_advice(k):
    k.device(BDF)
    r = run(k, BDF)
    assert r.returncode == 0, r.stderr
    assert "locked-memory limit" in r.stdout
    out = subprocess.run(["bash", "-c", "ulimit -l"], capture_output=True, text=True).stdout.strip()
    if out != "unlimited" and int(out) < 65536:
        assert "ulimit -l unlimited" in r.stdout


def test_short_bdf_is_accepted(k):
    k.device(BDF)
    r = run(k, "03:00.0")
    assert r.returncode == 0, (r.stderr, k.log)
    assert k.driver_of(BDF) == "vfio-pci"


def test_restore_returns_function_to_mlx5_core_and_clears_override(k):
    d = k.device(BDF)
    assert run(k, BDF).returncode == 0
    k.log.clear()
    r = run(k, "--restore", BDF)
    assert r.returncode == 0, r.stderr
    assert k.driver_of(BDF) == "mlx5_core"
    assert (d / "driver_override").read_text() == "\n"
    assert k.log == [("unbind vfio-pci", BDF), ("drivers_probe", BDF)]
    assert not (k.dev / "vfio/12").exists()


def test_non_mellanox_device_is_refused_without_writing(k):
    d = k.device("0000:00:02.0", vendor="0x8086", device="0x1237", driver="i915")
    r = run(k, "0000:00:02.0")
    assert r.returncode == 1
    assert "not a Mellanox" in r.stderr
    assert k.log == []
    assert (d / "driver_override").read_text() == "(null)\n"
    assert k.driver_of("0000:00:02.0") == "i915"


def test_missing_device_fails_naming_it(k):
    r = run(k, "0000:42:00.0")
    assert r.returncode == 1
    assert "0000:42:00.0 not found" in r.stderr


def test_no_iommu_group_fails_saying_iommu_off_without_unbinding(k):
    k.device(BDF, group=None)
    r = run(k, BDF)
    assert r.returncode == 1
    assert "IOMMU is off" in r.stderr and "intel_iommu=on" in r.stderr
    assert k.log == []
    assert k.driver_of(BDF) == "mlx5_core"


def test_already_bound_function_is_left_alone(k):
    k.device(BDF, driver="vfio-pci")
    r = run(k, BDF)
    assert r.returncode == 0, r.stderr
    assert "already bound to vfio-pci" in r.stdout
    assert k.log == []


def test_group_member_on_another_driver_is_named_and_exit_1(k):
    k.device(BDF)
    k.device("0000:03:00.1")
    k.device("0000:00:01.0", vendor="0x8086", device="0x1901", driver="pcieport")
    r = run(k, BDF)
    assert r.returncode == 1, r.stderr     # a runtime error (tools/common/cli.h), named last
    assert "0000:03:00.1 shares IOMMU group 12 and is bound to mlx5_core" in r.stderr
    assert r.stderr.splitlines()[-1].startswith("vfio-bind: IOMMU group 12: 1 other device"), r.stderr
    assert "0000:00:01.0" not in r.stderr
    assert k.driver_of(BDF) == "vfio-pci"
    assert k.driver_of("0000:03:00.1") == "mlx5_core"


def test_missing_vfio_pci_driver_fails_before_unbinding(tmp_path):
    kern = FakeKernel(tmp_path)   # no vfio-pci driver directory
    try:
        kern.device(BDF)
        r = run(kern, BDF)
        assert r.returncode == 1
        assert "vfio-pci driver is not loaded" in r.stderr
        assert kern.log == []
        assert kern.driver_of(BDF) == "mlx5_core"
    finally:
        kern.stop()


def test_kernel_refusing_the_bind_is_reported(k):
    k.device(BDF)
    k.ignore_override = True
    r = run(k, BDF)
    assert r.returncode == 1
    assert "did not bind to vfio-pci (now: 'mlx5_core')" in r.stderr


def test_help_exits_zero_with_usage():
    r = subprocess.run(["bash", str(TOOL), "--help"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0
    assert "usage: tools/vfio-bind" in r.stdout
    assert "--restore" in r.stdout


def test_bad_arguments_exit_2():
    for args in ([], ["not-a-bdf"], ["--frobnicate", BDF], [BDF, "0000:04:00.0"]):
        r = subprocess.run(["bash", str(TOOL), *args], capture_output=True, text=True, timeout=10)
        assert r.returncode == 2, args
