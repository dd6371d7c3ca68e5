#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The bootable appliance image: built, checked, booted under qemu.

 1. scripts/appliance-image.sh image builds
    <build>/appliance/image/dpmon-appliance.img from the package of
    scripts/build-deb.sh (the Debian root is cached as
    <build>/appliance/cache/image.tar after the first debootstrap), with
    --config-dir (a VM has no DPDK NIC: dpmon polls a net_null device with
    the image's hugepages and serves on 0.0.0.0:8080), a root password
    hash and an extra package.
 2. Reduced form (always): the root has dpmon installed, dpmon.service and
    systemd-networkd enabled, the unit passes `systemd-analyze verify` in
    that root, /etc/dpmon holds the given files, root has the given
    password, the extra package is there, and the boot entry carries the
    kernel command line for hugepages and isolated cores; the disk has a
    GPT with an EFI system partition and a root partition.
 3. Boot (unless DPMON_IMAGE_BOOT=0): qemu-system-x86_64 with OVMF, the
    image as a virtio disk, a virtio NIC on user networking with
    hostfwd=tcp:127.0.0.1:PORT-:8080, software emulation (TCG; KVM is used
    only with DPMON_IMAGE_ACCEL=kvm). From the host: /health answers "ok"
    through the forwarded port, the summary shows the configured port
    (net_null0), a worker on lcore 1 and the configured subnets, the
    kernel booted with the image's command line. Timings are printed. The
    service runs dpmon as the user dpmon in its sandbox (the unit's
    systemd-analyze security exposure is checked in the root: 2.0).

Needs root (debootstrap, chroot) and the Debian mirror. Slow: suite 'slow'.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import TestFailure  # noqa: E402
from test_package import build_deb, sh  # noqa: E402

BOOT_TIMEOUT = float(os.environ.get('DPMON_IMAGE_BOOT_TIMEOUT', '600'))
# openssl passwd -6 -salt dpmontestsalt appliance
ROOT_HASH = ('$6$dpmontestsalt$VvjOTel/5GYZ8krrBd1k6k8cwNeORcEdpThhq/krh5axk1pATQ3IHjX0RAtYvfLZ'
             '2lJJDNRLzgo3qfQSW26TE1')
VM_ENV = """# dpmon in a VM without a DPDK NIC: a null port, the kernel's hugepages.
DPMON_LCORES=0-1
DPMON_HUGEPAGES=
DPMON_PCI=
DPMON_VDEVS="net_null0,no-rx=1"
"""
VM_CONFIG = {
    'ports': [{'device': 'net_null0', 'rx_queues': 1}],
    'subnets': [{'prefix': '10.0.0.0/24', 'name': 'office'},
                {'prefix': '10.9.0.0/24', 'name': 'from-config-dir'}],
    # 0.0.0.0: QEMU's user network forwards the host's port to it; no
    # other machine reaches it, so no write token.
    'http': {'listen': '0.0.0.0', 'port': 8080, 'allow_unauthenticated_writes': True},
}


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(port, path):
    with urllib.request.urlopen('http://127.0.0.1:%d%s' % (port, path), timeout=5) as f:
        return f.status, json.load(f)


def build_image(h):
    deb = build_deb(h)
    out = os.path.join(h.build, 'appliance', 'image')
    cfg = os.path.join(h.build, 'appliance', 'vm-etc-dpmon')
    os.makedirs(cfg, exist_ok=True)
    with open(os.path.join(cfg, 'dpmon.env'), 'w') as f:
        f.write(VM_ENV)
    with open(os.path.join(cfg, 'dpmon.json'), 'w') as f:
        json.dump(VM_CONFIG, f)
    _, text, dt = sh([os.path.join(h.source, 'scripts', 'appliance-image.sh'), 'image',
                      '--deb', deb, '--out', out, '--cache',
                      os.path.join(h.build, 'appliance', 'cache'), '--isolate', '1',
                      '--hugepages', '256', '--config-dir', cfg, '--root-password-hash',
                      ROOT_HASH, '--extra-packages', 'less', '--keep-root'], timeout=2400)
    h.log('     image built in %.1f s' % dt)
    return text.strip().splitlines()[-1], os.path.join(out, 'root')


def check_root(c, root, img):
    c.true('dpmon installed', os.access(os.path.join(root, 'usr/bin/dpmon'), os.X_OK))
    c.true('extra package installed (less)', os.path.exists(os.path.join(root, 'usr/bin/less')))
    with open(os.path.join(root, 'etc/dpmon/dpmon.json')) as f:
        c.eq('/etc/dpmon/dpmon.json from --config-dir', VM_CONFIG, json.load(f))
    with open(os.path.join(root, 'etc/dpmon/dpmon.env')) as f:
        c.eq('/etc/dpmon/dpmon.env from --config-dir', VM_ENV, f.read())
    with open(os.path.join(root, 'etc/shadow')) as f:
        hashes = [line.split(':')[1] for line in f if line.startswith('root:')]
    c.eq('root password hash', [ROOT_HASH], hashes)
    wants = os.path.join(root, 'etc/systemd/system/multi-user.target.wants')
    for unit in ('dpmon.service', 'systemd-networkd.service'):
        c.true('%s enabled' % unit, os.path.islink(os.path.join(wants, unit)))
    p = subprocess.run(['systemd-analyze', 'verify', '--root=' + root,
                        '/lib/systemd/system/dpmon.service'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    c.eq('systemd-analyze verify --root=IMAGE dpmon.service: exit status', 0, p.returncode)
    c.eq('systemd-analyze verify messages', '', p.stdout.decode('utf-8', 'replace').strip())
    # The sandbox as installed: exposure 2.0 (9.6 as root, unsandboxed).
    p = subprocess.run(['systemd-analyze', 'security', '--offline=true', '--root=' + root,
                        '/lib/systemd/system/dpmon.service'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    m = re.search(r'Overall exposure level for dpmon.service: ([0-9.]+) (\w+)',
                  p.stdout.decode('utf-8', 'replace'))
    c.eq('systemd-analyze security --root=IMAGE dpmon.service: exposure',
         ('2.0', 'OK'), m.groups() if m else p.stdout.decode('utf-8', 'replace')[-500:])
    with open(os.path.join(root, 'etc/passwd')) as f:
        users = [line.split(':')[0] for line in f]
    c.true('the system user dpmon exists in the image', 'dpmon' in users)
    with open(os.path.join(os.path.dirname(img), 'cmdline.txt')) as f:
        cmdline = f.read().split()
    for want in ('default_hugepagesz=2M', 'hugepagesz=2M', 'hugepages=256', 'isolcpus=1',
                 'nohz_full=1', 'rcu_nocbs=1', 'root=LABEL=dpmon-root'):
        c.true('kernel command line has %s' % want, want in cmdline, ' '.join(cmdline))
    p = subprocess.run(['sfdisk', '--json', img], stdout=subprocess.PIPE, timeout=60)
    parts = json.loads(p.stdout)['partitiontable']
    c.eq('partition table', 'gpt', parts['label'])
    c.eq('partitions (type)', ['C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
                               '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709'],
         [x['type'] for x in parts['partitions']])
    p = subprocess.run(['mtype', '-i', '%s@@1M' % img, '::/loader/entries/dpmon.conf'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    c.true('boot entry carries the command line', ' '.join(cmdline) in p.stdout.decode(),
           p.stdout.decode())


def qemu_argv(img, port, console, accel):
    ovmf = '/usr/share/ovmf/OVMF.fd'
    cpu = ['-cpu', 'host'] if accel == 'kvm' else ['-cpu', 'max']
    return ['qemu-system-x86_64', '-machine', 'q35,accel=%s' % accel] + cpu + [
        '-m', '2048', '-smp', '2', '-bios', ovmf,
        '-drive', 'file=%s,format=raw,if=virtio,snapshot=on' % img,
        '-netdev', 'user,id=n0,hostfwd=tcp:127.0.0.1:%d-:8080' % port,
        '-device', 'virtio-net-pci,netdev=n0,romfile=',
        '-display', 'none', '-monitor', 'none', '-serial', 'file:' + console]


def boot(c, h, img):
    accel = os.environ.get('DPMON_IMAGE_ACCEL', 'tcg')
    port = free_port()
    tmp = tempfile.mkdtemp(prefix='dpmon-it-vm-')
    console = os.path.join(tmp, 'console.log')
    t0 = time.monotonic()
    vm = subprocess.Popen(qemu_argv(img, port, console, accel), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, start_new_session=True)
    try:
        health = None
        while time.monotonic() - t0 < BOOT_TIMEOUT and vm.poll() is None:
            try:
                status, health = get(port, '/health')
                if status == 200 and health.get('status') == 'ok':
                    break
            except (OSError, ValueError):
                pass
            time.sleep(2)
        dt = time.monotonic() - t0
        h.log('     %s boot to /health ok: %.1f s' % (accel, dt))
        c.eq('qemu running', None, vm.poll())
        c.eq('/health through the forwarded port', 'ok', health and health.get('status'))
        if health and health.get('status') == 'ok':
            _, s = get(port, '/api/v1/summary')
            c.eq('summary ports', ['net_null0'], [p['device'] for p in s['ports']])
            c.eq('summary worker lcores', [1], [w['lcore'] for w in s['workers']])
            _, subs = get(port, '/api/v1/subnets')
            c.eq('subnets from the --config-dir configuration',
                 ['office', 'from-config-dir'], [x['name'] for x in subs['subnets']])
        with open(console, 'rb') as f:
            log = f.read().decode('utf-8', 'replace')
        c.true('kernel booted with the hugepage and isolation parameters',
               'hugepages=256 isolcpus=1 nohz_full=1 rcu_nocbs=1' in log)
        c.true('dpmon.service started', 'Started dpmon.service' in log or
               'Started \x1b[0;1;39mdpmon.service' in log, log[-3000:])
        if c.failures:
            h.log('--- console tail ---\n' + log[-4000:])
    finally:
        os.killpg(vm.pid, signal.SIGKILL)
        vm.wait(timeout=30)
        vm.stdout.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_image_builds_and_boots(h):
    c = h.checker('image')
    if os.geteuid() != 0:
        raise TestFailure('needs root (debootstrap, chroot)')
    img, root = build_image(h)
    try:
        check_root(c, root, img)
        if os.environ.get('DPMON_IMAGE_BOOT', '1') != '0':
            boot(c, h, img)
        else:
            h.log('     boot skipped (DPMON_IMAGE_BOOT=0)')
    finally:
        shutil.rmtree(root, ignore_errors=True)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
