#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The service and host setup, as far as they can be tested without a NIC
and without systemd as PID 1:

 - config/systemd/dpmon.service passes `systemd-analyze verify` with no
   message at all (the binaries it names point at the build tree for the
   check), and carries the directives the appliance relies on, in order
   (Type=notify with WatchdogSec: the pings are tested in test_health.py);
 - shellcheck finds nothing in the shell scripts;
 - scripts/dpmon-prepare, in its dry-run mode, prints exactly the expected
   commands for sample env files, and rejects a bad env file naming the line;
 - the example configurations pass `dpmon --check-config`;
 - dpmon keeps running and counting through SIGHUP (what ExecReload sends,
   after checking the file; with an unchanged file the counts stay) and
   still stops cleanly on SIGTERM.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                          **kw)


def unit_path(h):
    return os.path.join(h.source, 'config', 'systemd', 'dpmon.service')


def test_unit_verifies(h):
    c = h.checker('systemd-analyze verify')
    with open(unit_path(h)) as f:
        text = f.read()
    prepare = os.path.join(h.source, 'scripts', 'dpmon-prepare')
    text = text.replace('/usr/bin/dpmon', h.dpmon).replace('/usr/lib/dpmon/prepare', prepare)
    with tempfile.TemporaryDirectory(prefix='dpmon-it-unit-') as tmp:
        path = os.path.join(tmp, 'dpmon.service')
        with open(path, 'w') as f:
            f.write(text)
        p = run(['systemd-analyze', 'verify', path])
        out = (p.stdout + p.stderr).decode('utf-8', 'replace')
        c.eq('exit status', 0, p.returncode)
        c.eq('messages (none expected)', '', out.strip())
    c.done()


def unit_settings(h):
    """[(section, key, value)] of the unit, in file order."""
    out, section = [], None
    with open(unit_path(h)) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            m = re.match(r'\[(\w+)\]$', line)
            if m:
                section = m.group(1)
                continue
            k, v = line.split('=', 1)
            out.append((section, k, v))
    return out


def test_unit_directives(h):
    c = h.checker('unit directives')
    s = unit_settings(h)
    many = ('ExecStartPre', 'ExecReload', 'Environment', 'DeviceAllow', 'SystemCallFilter')
    svc = {k: v for sec, k, v in s if sec == 'Service' and k not in many}
    pre = [v for sec, k, v in s if sec == 'Service' and k == 'ExecStartPre']
    c.eq('ExecStartPre: check the configuration (as dpmon), then set up the host (as root)', [
        '/usr/bin/dpmon --check-config ${DPMON_CONFIG}', '+/usr/lib/dpmon/prepare setup'], pre)
    for key, want in [
            ('Environment', ['DPMON_CONFIG=/etc/dpmon/dpmon.json', 'XDG_RUNTIME_DIR=/run/dpmon']),
            ('DeviceAllow', ['/dev/vfio/vfio rw', 'char-vfio rw']),
            ('SystemCallFilter', ['@system-service', '~@privileged',
                                  'get_mempolicy set_mempolicy mbind move_pages migrate_pages '
                                  'iopl ioperm'])]:
        c.eq('[Service] %s lines' % key, want,
             [v for sec, k, v in s if sec == 'Service' and k == key])
    rel = [v for sec, k, v in s if sec == 'Service' and k == 'ExecReload']
    c.eq('ExecReload: check the configuration, then SIGHUP', [
        '/usr/bin/dpmon --check-config ${DPMON_CONFIG}', '/bin/kill -HUP $MAINPID'], rel)
    expect = {
        'Type': 'notify',
        'NotifyAccess': 'main',
        'WatchdogSec': '30s',
        'EnvironmentFile': '-/etc/dpmon/dpmon.env',
        'ExecStart': '/usr/lib/dpmon/prepare exec',
        'KillMode': 'mixed',
        'KillSignal': 'SIGTERM',
        'TimeoutStopSec': '30s',
        'Restart': 'on-failure',
        'RestartPreventExitStatus': '1 2',
        'StandardOutput': 'journal',
        'StandardError': 'journal',
        'LogRateLimitIntervalSec': '30s',
        'LogRateLimitBurst': '1000',
        # Least privilege: the user dpmon, no capability, the sandbox.
        'User': 'dpmon',
        'Group': 'dpmon',
        'CapabilityBoundingSet': '',
        'AmbientCapabilities': '',
        'NoNewPrivileges': 'yes',
        'ProtectSystem': 'strict',
        'ReadWritePaths': '-/dev/hugepages -/run/exabgp',
        'StateDirectory': 'dpmon',
        'StateDirectoryMode': '0750',
        # What dpmon creates is not for others (it sets 0600 or 0640 itself).
        'UMask': '0027',
        'RuntimeDirectory': 'dpmon',
        'ProtectHome': 'yes',
        'PrivateTmp': 'yes',
        'DevicePolicy': 'closed',
        'ProtectKernelTunables': 'yes',
        'ProtectKernelModules': 'yes',
        'ProtectControlGroups': 'yes',
        'RestrictAddressFamilies': 'AF_UNIX AF_INET AF_INET6 AF_NETLINK AF_PACKET',
        'MemoryDenyWriteExecute': 'yes',
        'SystemCallArchitectures': 'native',
    }
    for k, v in expect.items():
        c.eq('[Service] %s' % k, v, svc.get(k))
    c.eq('[Install] WantedBy', [('Install', 'WantedBy', 'multi-user.target')],
         [x for x in s if x[0] == 'Install'])
    c.done()


def test_unit_exposure(h):
    """systemd's own measure of the sandbox: `systemd-analyze security`
    (offline, on the unit file) rates the unit 2.0 (OK); as root without
    sandboxing it was 9.6 (UNSAFE)."""
    c = h.checker('systemd-analyze security')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-unit-') as tmp:
        path = os.path.join(tmp, 'dpmon.service')
        with open(unit_path(h)) as f, open(path, 'w') as out:
            out.write(f.read())
        p = run(['systemd-analyze', 'security', '--offline=true', path])
        text = p.stdout.decode('utf-8', 'replace')
        m = re.search(r'Overall exposure level for dpmon.service: ([0-9.]+) (\w+)', text)
        c.eq('exposure level and verdict', ('2.0', 'OK'), m.groups() if m else text[-500:])
    c.done()


def is_shell_script(path):
    """A file whose shebang runs sh or bash (scripts/ also holds Python)."""
    with open(path, 'rb') as f:
        words = f.readline().split()
    return bool(words) and words[0].startswith(b'#!') and \
        words[-1].rsplit(b'/', 1)[-1] in (b'sh', b'bash')


def test_shellcheck(h):
    c = h.checker('shellcheck')
    src = h.source
    files = [os.path.join(src, 'scripts', f) for f in sorted(os.listdir(os.path.join(src, 'scripts')))
             if is_shell_script(os.path.join(src, 'scripts', f))]
    files += [os.path.join(src, '.ci', 'run')]
    kdir = os.path.join(src, 'pktgen-profiles', 'linux-pktgen')
    files += [os.path.join(kdir, f) for f in sorted(os.listdir(kdir)) if f.endswith('.sh')]
    c.true('at least 10 scripts', len(files) >= 10, str(len(files)))
    p = run(['shellcheck', '-x'] + files, cwd=kdir)
    c.eq('shellcheck exit status', 0, p.returncode)
    c.eq('shellcheck findings', '', p.stdout.decode('utf-8', 'replace'))
    c.done()


ENV_NIC = '''# a two-port appliance
DPMON_LCORES=0-4
DPMON_HUGEPAGE_SIZE=1G
DPMON_HUGEPAGES=4G
DPMON_PCI="0000:3b:00.0 0000:3b:00.1"
DPMON_DRIVER=vfio-pci
DPMON_VFIO_NOIOMMU=1
DPMON_CONFIG=/etc/dpmon/two-ports.json
DPMON_EAL_ARGS="-n 4 --log-level=lib.eal:info"
DPMON_ARGS='--http-port 9090'
'''

ENV_VDEV = '''DPMON_LCORES=0-1
DPMON_HUGEPAGES=none
DPMON_MEMORY_MB=512
DPMON_VDEVS="net_pcap0,rx_pcap=/srv/a.pcap net_null0,no-rx=1"
DPMON_FILE_PREFIX=lab
'''

CASES = [
    ('nic', ENV_NIC, 'setup', [
        'dpdk-hugepages.py --pagesize 1G --setup 4G',
        'modprobe vfio-pci',
        'echo 1 > /sys/module/vfio/parameters/enable_unsafe_noiommu_mode',
        'dpdk-devbind.py --bind vfio-pci 0000:3b:00.0',
        'dpdk-devbind.py --bind vfio-pci 0000:3b:00.1',
        'chown dpmon: /dev/hugepages',
        'chmod 0700 /dev/hugepages',
        'chown dpmon: /dev/vfio/<iommu group of 0000:3b:00.0>',
        'chown dpmon: /dev/vfio/<iommu group of 0000:3b:00.1>',
    ]),
    ('nic', ENV_NIC, 'exec', [
        'exec /usr/bin/dpmon -l 0-4 --file-prefix dpmon -a 0000:3b:00.0 -a 0000:3b:00.1 '
        '-n 4 --log-level=lib.eal:info -- --config /etc/dpmon/two-ports.json --http-port 9090',
    ]),
    ('vdev', ENV_VDEV, 'setup', []),
    ('vdev', ENV_VDEV, 'exec', [
        'exec /usr/bin/dpmon -l 0-1 --file-prefix lab --no-huge -m 512 --no-pci '
        '--vdev net_pcap0,rx_pcap=/srv/a.pcap --vdev net_null0,no-rx=1 -- --config '
        '/etc/dpmon/dpmon.json',
    ]),
]

BAD_ENV = [
    ('DPMON_LCORES=0-1\nDPMON_PCII=0000:01:00.0\n', 'env:2: unknown variable DPMON_PCII'),
    ('DPMON_LCORES=0-1\nexport FOO\n', 'env:2: not KEY=VALUE'),
    ('DPMON_PCI=0000:01:00.0\n', 'DPMON_LCORES is not set'),
]


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith('DPMON_')}


def test_prepare_dry_run(h):
    c = h.checker('dpmon-prepare --dry-run')
    prepare = os.path.join(h.source, 'scripts', 'dpmon-prepare')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-env-') as tmp:
        for name, text, step, want in CASES:
            env = os.path.join(tmp, name + '.env')
            with open(env, 'w') as f:
                f.write(text)
            p = run([prepare, '--env', env, '--dry-run', step], env=clean_env())
            c.eq('%s %s: exit status' % (name, step), 0, p.returncode)
            c.eq('%s %s: commands' % (name, step), want, p.stdout.decode().splitlines())
            c.eq('%s %s: stderr' % (name, step), b'', p.stderr)
        for i, (text, msg) in enumerate(BAD_ENV):
            env = os.path.join(tmp, 'env')
            with open(env, 'w') as f:
                f.write(text)
            p = run([prepare, '--env', env, '--dry-run', 'exec'], env=clean_env())
            err = p.stderr.decode()
            c.eq('bad env %d: exit status' % i, 2, p.returncode)
            c.true('bad env %d: says %r' % (i, msg), msg in err, err)
        # systemd passes the variables in the environment instead of --env
        e = dict(clean_env(), DPMON_LCORES='0-2', DPMON_PCI='0000:01:00.0')
        p = run([prepare, '--dry-run', 'exec'], env=e)
        c.eq('from the environment', ['exec /usr/bin/dpmon -l 0-2 --file-prefix dpmon -a '
                                      '0000:01:00.0 -- --config /etc/dpmon/dpmon.json'],
             p.stdout.decode().splitlines())
        # the shipped env file
        p = run([prepare, '--env', os.path.join(h.source, 'config', 'dpmon.env'), '--dry-run',
                 'setup'], env=clean_env())
        c.eq('config/dpmon.env setup', ['dpdk-hugepages.py --pagesize 2M --setup 1G',
                                        'modprobe vfio-pci',
                                        'dpdk-devbind.py --bind vfio-pci 0000:01:00.0',
                                        'chown dpmon: /dev/hugepages',
                                        'chmod 0700 /dev/hugepages',
                                        'chown dpmon: /dev/vfio/<iommu group of 0000:01:00.0>'],
             p.stdout.decode().splitlines())
    c.done()


def test_example_configs_valid(h):
    c = h.checker('example configurations')
    for rel in ('config/dpmon.json', 'config/appliance/dpmon.json'):
        p = run([h.dpmon, '--check-config', os.path.join(h.source, rel)])
        c.eq('%s: --check-config exit status' % rel, 0, p.returncode)
    c.done()


def test_sighup_keeps_running(h):
    c = h.checker('SIGHUP')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-hup-') as tmp:
        pcap = os.path.join(tmp, 'a.pcap')
        subprocess.run([h.dpmon_gen, '-o', pcap, '--packets', '3000', '--subnet', '10.0.0.0/24'],
                       stdout=subprocess.DEVNULL, check=True, timeout=60)
        with h.dpmon_run([pcap], [('10.0.0.0/24', 'office')], 'sighup') as d:
            before = d.wait_counts(3000)
            d.proc.send_signal(signal.SIGHUP)
            # A reload builds the workers' next tables between two merges
            # (half a second and more on a loaded 2-vCPU machine): wait for
            # the merges to go on rather than for a fixed time.
            deadline = time.monotonic() + 10
            after = d.summary()
            while after['snapshot_seq'] <= before['snapshot_seq'] and time.monotonic() < deadline:
                time.sleep(0.05)
                after = d.summary()
            c.eq('running after SIGHUP', None, d.proc.poll())
            c.true('snapshots go on after SIGHUP',
                   after['snapshot_seq'] > before['snapshot_seq'])
            c.eq('counts kept', before['totals']['ingress']['packets'],
                 after['totals']['ingress']['packets'])
            deadline = time.monotonic() + 10
            while after['config']['reloads'] < 1 and time.monotonic() < deadline:
                time.sleep(0.05)
                after = d.summary()
            c.eq('reload applied (same file)', (1, 0),
                 (after['config']['reloads'], after['config']['reload_failures']))
            c.eq('counts kept after the reload', before['totals']['ingress']['packets'],
                 after['totals']['ingress']['packets'])
            c.eq('exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
