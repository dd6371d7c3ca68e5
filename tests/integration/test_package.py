#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Debian package, built from this repository and installed into a
throw-away Debian 12 root.

 1. scripts/build-deb.sh builds dpmon_VERSION_amd64.deb (dpkg-buildpackage,
    debhelper + Meson) under <build>/appliance/deb; unchanged sources reuse
    the last package.
 2. scripts/appliance-image.sh rootfs makes (once, cached as
    <build>/appliance/cache/pkgtest.tar) a minimal bookworm root with
    debootstrap from the machine's Debian mirror; each run unpacks a fresh
    copy and installs the package with apt, which brings its dependencies.
 3. In that root: `dpmon --version`, `dpmon --check-config
    /etc/dpmon/dpmon.json`, the files and conffiles the package must hold,
    the service enabled for boot, the host setup helper's dry run, and a
    real run: dpmon-gen renders a shipped profile and the installed dpmon
    counts it through the pcap PMD, exactly; the system user dpmon,
    dpmonctl, the manual pages and the shell completions.
 4. lintian (Debian 12's) finds no error and no warning in the package.

Needs root (debootstrap, chroot, mounts) and the Debian mirror. Slow on the
first run (debootstrap: about a minute); suite 'slow'.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import TestFailure  # noqa: E402

FILES = [
    '/usr/bin/dpmon', '/usr/bin/dpmon-gen', '/usr/lib/dpmon/prepare',
    '/lib/systemd/system/dpmon.service', '/etc/dpmon/dpmon.json', '/etc/dpmon/dpmon.env',
    '/usr/share/doc/dpmon/appliance.md', '/usr/share/doc/dpmon/configuration.md',
    '/usr/share/dpmon/pktgen-profiles/README.md',
    '/usr/share/dpmon/pktgen-profiles/pktgen-dpdk/udp-flood-64.pkt',
    '/usr/share/dpmon/pktgen-profiles/linux-pktgen/kpktgen.sh',
    '/usr/bin/dpmonctl', '/usr/share/man/man8/dpmon.8.gz', '/usr/share/man/man8/dpmonctl.8.gz',
    '/usr/share/man/man1/dpmon-gen.1.gz', '/usr/share/bash-completion/completions/dpmon',
    '/usr/share/bash-completion/completions/dpmon-gen',
    '/usr/share/bash-completion/completions/dpmonctl',
    '/usr/share/zsh/vendor-completions/_dpmonctl', '/usr/lib/sysusers.d/dpmon.conf',
]


def sh(argv, timeout=1800, check=True):
    t0 = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    out = p.stdout.decode('utf-8', 'replace')
    if check and p.returncode != 0:
        raise TestFailure('%s exited %d:\n%s\n%s' % (' '.join(argv), p.returncode, out[-3000:],
                                                     p.stderr.decode('utf-8', 'replace')[-3000:]))
    return p, out, time.monotonic() - t0


def build_deb(h):
    _, out, dt = sh([os.path.join(h.source, 'scripts', 'build-deb.sh'),
                     os.path.join(h.build, 'appliance', 'deb')])
    h.log('     package built in %.1f s' % dt)
    return out.strip().splitlines()[-1]


class Chroot:
    """A fresh root unpacked from the cached tarball, with /proc, /sys, /dev."""

    def __init__(self, h, tar):
        self.h = h
        self.tar = tar
        self.root = tempfile.mkdtemp(prefix='dpmon-pkgroot-', dir=os.path.join(h.build, 'appliance'))
        self.mounts = []

    def __enter__(self):
        sh(['tar', '-C', self.root, '-xf', self.tar])
        for args, target in ((['-t', 'proc', 'proc'], 'proc'), (['--rbind', '/sys'], 'sys'),
                             (['--rbind', '/dev'], 'dev')):
            path = os.path.join(self.root, target)
            sh(['mount'] + args + [path])
            self.mounts.append(path)
        shutil.copy('/etc/resolv.conf', os.path.join(self.root, 'etc', 'resolv.conf'))
        return self

    def __exit__(self, *exc):
        for m in reversed(self.mounts):
            subprocess.run(['umount', '-l', m], stderr=subprocess.DEVNULL)
        if all(not os.path.ismount(m) for m in self.mounts):
            shutil.rmtree(self.root, ignore_errors=True)
        return False

    def run(self, argv, check=True, timeout=600):
        env = ['env', '-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin', 'LC_ALL=C.UTF-8',
               'DEBIAN_FRONTEND=noninteractive']
        return sh(['chroot', self.root] + env + argv, timeout=timeout, check=check)

    def path(self, p):
        return os.path.join(self.root, p.lstrip('/'))


def test_package_installs_and_runs(h):
    c = h.checker('package')
    if os.geteuid() != 0:
        raise TestFailure('needs root (debootstrap, chroot, mount)')
    deb = build_deb(h)
    c.true('package built: %s' % os.path.basename(deb), os.path.isfile(deb))
    _, out, dt = sh([os.path.join(h.source, 'scripts', 'appliance-image.sh'), 'rootfs',
                     os.path.join(h.build, 'appliance', 'cache'), 'pkgtest'])
    tar = out.strip().splitlines()[-1]
    h.log('     throw-away root ready in %.1f s (%s)' % (dt, tar))
    with Chroot(h, tar) as r:
        shutil.copy(deb, r.path('/tmp/dpmon.deb'))
        _, _, dt = r.run(['apt-get', 'install', '-y', '-q', '--no-install-recommends',
                          '/tmp/dpmon.deb'])
        h.log('     installed with its dependencies in %.1f s' % dt)
        p, out, _ = r.run(['dpmon', '--version'], check=False)
        c.eq('dpmon --version exit status', 0, p.returncode)
        c.true('dpmon --version says "dpmon 0.1.0 (DPDK 22.11..."',
               out.startswith("dpmon 0.1.0 (DPDK 22.11."), out)
        p, out, _ = r.run(['dpmon', '--check-config', '/etc/dpmon/dpmon.json'], check=False)
        c.eq('dpmon --check-config /etc/dpmon/dpmon.json exit status', 0, p.returncode)
        c.eq('--check-config output', '/etc/dpmon/dpmon.json: valid (1 ports, 4 subnets)',
             out.strip())
        for f in FILES:
            c.true('installed: %s' % f, os.path.exists(r.path(f)))
        c.true('prepare is executable', os.access(r.path('/usr/lib/dpmon/prepare'), os.X_OK))
        p, out, _ = r.run(['getent', 'passwd', 'dpmon'], check=False)
        c.eq('the system user dpmon: no login, home the state directory',
             ['dpmon', '/var/lib/dpmon', '/usr/sbin/nologin'],
             [f for i, f in enumerate(out.strip().split(':')) if i in (0, 5, 6)])
        c.true('dpmon is a system user (uid < 1000)', p.returncode == 0 and
               int(out.split(':')[2]) < 1000, out)
        p, out, _ = r.run(['dpmonctl', '--version'], check=False)
        c.eq('dpmonctl --version', (0, 'dpmonctl 0.1.0'), (p.returncode, out.strip()))
        _, out, _ = r.run(['dpkg-query', '-W', '-f=${Conffiles}', 'dpmon'])
        conffiles = sorted(line.split()[0] for line in out.splitlines() if line.strip())
        c.eq('conffiles', ['/etc/dpmon/dpmon.env', '/etc/dpmon/dpmon.json'], conffiles)
        c.true('dpmon.service enabled for boot', os.path.islink(
            r.path('/etc/systemd/system/multi-user.target.wants/dpmon.service')))
        p, out, _ = r.run(['/usr/lib/dpmon/prepare', '--env', '/etc/dpmon/dpmon.env',
                           '--dry-run', 'exec'])
        c.eq('prepare dry run with the shipped env file',
             'exec /usr/bin/dpmon -l 0-2 --file-prefix dpmon -a 0000:01:00.0 -- --config '
             '/etc/dpmon/dpmon.json', out.strip())
        for tool in ('dpdk-devbind.py', 'dpdk-hugepages.py'):
            c.true('%s installed (dependency)' % tool, os.path.exists(r.path('/usr/bin/' + tool)))
        run_installed(c, r)
    c.done()


def test_lintian(h):
    """Debian 12's lintian on the built package: no error and no warning
    (an override, in debian/, must say why for each one left)."""
    c = h.checker('lintian')
    deb = build_deb(h)
    p, out, dt = sh(['lintian', '--info', '--display-level', '>=warning', deb], check=False)
    h.log('     lintian ran in %.1f s' % dt)
    tags = [l for l in out.splitlines() if l[:2] in ('E:', 'W:')]
    c.eq('lintian: errors and warnings', [], tags)
    c.eq('lintian: exit status', 0, p.returncode)
    c.done()


def get_json(port, path):
    import urllib.request
    with urllib.request.urlopen('http://127.0.0.1:%d%s' % (port, path), timeout=5) as f:
        return json.load(f)


def run_installed(c, r):
    """dpmon-gen renders a shipped profile; the installed dpmon counts it exactly."""
    prof = '/usr/share/dpmon/pktgen-profiles/pktgen-dpdk/imix.pkt'
    _, out, _ = r.run(['dpmon-gen', '--profile', prof, '-o', '/tmp/imix.pcap', '--packets',
                       '1200', '--summary', 'json'])
    sm = json.loads(out)
    cfg = {'ports': [{'device': 'net_pcap0'}], 'subnets': [{'prefix': '10.0.1.0/24'}],
           'http': {'listen': '127.0.0.1', 'port': 0}, 'merge_interval_ms': 100}
    with open(r.path('/tmp/test.json'), 'w') as f:
        json.dump(cfg, f)
    argv = ['chroot', r.root, 'dpmon', '--no-huge', '-m', '256', '--no-pci', '-l', '0-1',
            '--file-prefix', 'pkgtest', '--vdev', 'net_pcap0,rx_pcap=/tmp/imix.pcap', '--',
            '--config', '/tmp/test.json', '--http-port-file', '/tmp/port']
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline, s = time.monotonic() + 60, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                port = int(open(r.path('/tmp/port')).read())
                s = get_json(port, '/api/v1/summary')
                if s['ports'][0]['ipackets'] == sm['packets'] and \
                        sum(w['packets'] for w in s['workers']) == sm['packets']:
                    time.sleep(0.3)  # one more merge: every counter of the last burst
                    break
            except (OSError, ValueError, KeyError, IndexError):
                pass
            time.sleep(0.1)
        c.true('installed dpmon running and serving', s is not None and proc.poll() is None)
        if s is not None:
            sub = get_json(port, '/api/v1/subnets/10.0.1.0/24')['ingress']
            c.eq('installed dpmon: 10.0.1.0/24 ingress udp (packets, bytes) == rendering',
                 (sm['udp']['packets'], sm['udp']['bytes']),
                 (sub['udp']['packets'], sub['udp']['bytes']))
        proc.terminate()
        c.eq('installed dpmon exit status after SIGTERM', 0, proc.wait(timeout=30))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out = proc.stdout.read().decode('utf-8', 'replace')
        proc.stdout.close()
    c.true('installed dpmon printed its API line', 'API at http://127.0.0.1:' in out, out[-2000:])


if __name__ == '__main__':
    harness.main(globals())
