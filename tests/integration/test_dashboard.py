#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The dashboard page at GET /, in a real headless Chromium (Debian's
chromium, driven by playwright-core: tests/js/dashboard_check.mjs).

dpmon replays a dpmon-gen capture forever (infinite_rx=1, so
mbufs_per_queue must hold the whole capture) with the default example
subnets, so the rates are live. The page must load without a console
error, show for one snapshot exactly the API's numbers, and its charts
must grow. A screenshot goes to <build>/dashboard.png, or to
$DPMON_SCREENSHOT when set, taken $DPMON_SCREENSHOT_SETTLE seconds (default
0) after the checks so the charts have more history: that is how
docs/dashboard.png is made.

dpmon serves HTTPS here (http.tls_cert_file, a self-signed certificate
made by test_https.make_cert): the page and its API requests over TLS, as
an operator with a certificate sees them; Chromium trusts that one
certificate's public key (--ignore-certificate-errors-spki-list), Node's
fetch that certificate (NODE_EXTRA_CA_CERTS). Over plain HTTP the page is
the same bytes.
"""
import base64
import hashlib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import jstools  # noqa: E402
from harness import TestFailure  # noqa: E402
from test_https import make_cert  # noqa: E402

PACKETS = 20000
SUBNETS = [('10.0.0.0/24', 'office'), ('10.0.1.0/24', 'servers'), ('192.0.2.0/24', 'dmz'),
           ('2001:db8:10::/64', 'office-v6')]


def spki_sha256(cert):
    """base64 of the SHA-256 of @cert's SubjectPublicKeyInfo (DER), as
    Chromium's --ignore-certificate-errors-spki-list takes it."""
    der = subprocess.run(['openssl', 'x509', '-in', cert, '-noout', '-pubkey'], check=True,
                         stdout=subprocess.PIPE, timeout=30).stdout
    der = subprocess.run(['openssl', 'pkey', '-pubin', '-outform', 'DER'], input=der,
                         check=True, stdout=subprocess.PIPE, timeout=30).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def test_dashboard(h):
    c = h.checker('dashboard')
    with tempfile.TemporaryDirectory(prefix='dpmon-dash-') as tmp:
        pcap = os.path.join(tmp, 'live.pcap')
        p = subprocess.run([h.dpmon_gen, '--output', pcap, '--packets', str(PACKETS),
                            '--seed', '5', '--size', 'imix', '--internal-percent', '5'],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        if p.returncode != 0:
            raise TestFailure('dpmon-gen failed: %s' % p.stdout.decode('utf-8', 'replace'))
        shot = os.environ.get('DPMON_SCREENSHOT') or os.path.join(h.build, 'dashboard.png')
        cert, key = make_cert(tmp, 'dashboard')
        with h.dpmon_run([pcap], SUBNETS, 'dashboard', merge_interval_ms=1000,
                         vdev_args=',infinite_rx=1',
                         extra_config={'mbufs_per_queue': 32768, 'http': {
                             'listen': '127.0.0.1', 'port': 0, 'tls_cert_file': cert,
                             'tls_key_file': key}}) as d:
            settle = os.environ.get('DPMON_SCREENSHOT_SETTLE', '0')
            out = jstools.run_node(h, c, 'dashboard_check.mjs', [
                '--base', 'https://127.0.0.1:%d' % d.port, '--screenshot', shot,
                '--settle', settle, '--spki', spki_sha256(cert)],
                timeout=240 + float(settle), env={'NODE_EXTRA_CA_CERTS': cert})
            c.true('dashboard_check.mjs ran its checks', ' checks, 0 failed' in out)
            c.true('screenshot written: %s' % shot, os.path.getsize(shot) > 10000)
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
