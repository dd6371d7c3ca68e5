#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bearer tokens on a running dpmon (docs/api.md, "Security"): a POST to
/api/v1/blackholes without a token, with a wrong one and with the right
one; the 401's WWW-Authenticate and JSON error, the count on /metrics; a
SIGHUP that picks up a new token, and one whose token file others may read
(refused, the old token stays). At --check-config: a token file others may
read, and a listener other than loopback without a write token.

Expected values come from docs/api.md and docs/configuration.md.
"""
import os
import re
import signal
import sys
import tempfile
import time
import shutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_check_config import check_config  # noqa: E402

SUBNETS = [('141.142.228.0/24', 'a')]
WRITE_MSG = ('this request changes state: it needs Authorization: Bearer with the write '
             'token (http.write_token_file)')


def write_token(path, text, mode=0o600):
    """Replace @path atomically with @text and mode @mode."""
    tmp = path + '.tmp'
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.rename(tmp, path)


def post(d, address, token=None):
    headers = {'Authorization': 'Bearer ' + token} if token is not None else {}
    return d.request('/api/v1/blackholes', 'POST',
                     ('{"address": "%s"}' % address).encode(), headers)


def unauthorized_total(d, want, timeout=10.0):
    """dpmon_http_unauthorized_total once it reads @want (/metrics is
    rendered once per snapshot), else the last value read."""
    deadline = time.monotonic() + timeout
    got = None
    while True:
        _, _, text = d.request('/metrics')
        m = re.search(r'^dpmon_http_unauthorized_total (\d+)$', text, re.M)
        got = int(m.group(1)) if m else None
        if got == want or time.monotonic() >= deadline:
            return got
        time.sleep(0.1)


def wait_post_status(d, address, token, want, timeout=10.0):
    """The status of POST @address with @token, polled until it is @want."""
    deadline = time.monotonic() + timeout
    while True:
        status, _, _ = post(d, address, token)
        if status == want or time.monotonic() >= deadline:
            return status
        time.sleep(0.1)


def test_tokens_live(h):
    c = h.checker('tokens')
    work = tempfile.mkdtemp(prefix='dpmon-it-tokens-')
    token = os.path.join(work, 'write.token')
    write_token(token, 'first-Token_1\n')
    pcap = h.td('pcaps', 'zeek', 'http-vlan-0.pcap')
    try:
        with h.dpmon_run([pcap], SUBNETS, 'tokens',
                         extra_config={'http': {'listen': '127.0.0.1', 'port': 0,
                                                'write_token_file': token}}) as d:
            d.wait_counts(14)
            for label, tok in [('no token', None), ('wrong token', 'first-Token_2'),
                               ('token cut short', 'first-Token_')]:
                status, headers, body = post(d, '141.142.228.5', tok)
                c.eq('POST with %s: status' % label, 401, status)
                c.eq('POST with %s: WWW-Authenticate' % label, 'Bearer',
                     headers.get('WWW-Authenticate'))
                c.eq('POST with %s: error' % label, {'error': WRITE_MSG}, body)
            status, _, body = d.request('/api/v1/blackholes')
            c.eq('nothing added; GET needs no token', (200, {'blackholes': []}), (status, body))
            status, _, body = post(d, '141.142.228.5', 'first-Token_1')
            c.eq('POST with the token', (201, '141.142.228.5'), (status, body.get('address')))
            c.eq('dpmon_http_unauthorized_total', 3, unauthorized_total(d, 3))

            # SIGHUP: a new token replaces the old one.
            write_token(token, 'second-Token\n')
            d.proc.send_signal(signal.SIGHUP)
            # polled with an address outside every subnet: 400 while the
            # old token is taken, nothing added
            c.eq('after SIGHUP the old token is refused', 401,
                 wait_post_status(d, '10.1.2.3', 'first-Token_1', 401))
            status, _, _ = post(d, '141.142.228.6', 'second-Token')
            c.eq('after SIGHUP the new token is taken', 201, status)

            # A token file others may read: the reload is refused, the token stays.
            write_token(token, 'third-Token\n', 0o644)
            d.proc.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 10
            while 'group or others may access it' not in d.log_tail(20000) and \
                    time.monotonic() < deadline:
                time.sleep(0.1)
            c.true('the refused reload is logged with the reason',
                   'write_token_file: token file "%s": group or others may access it '
                   '(mode 0644; chmod 600)' % token in d.log_tail(20000), d.log_tail())
            status, _, _ = post(d, '141.142.228.7', 'third-Token')
            c.eq('the world-readable token is not taken', 401, status)
            status, _, _ = post(d, '141.142.228.7', 'second-Token')
            c.eq('the old token still works', 201, status)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.done()


def test_tokens_check_config(h):
    c = h.checker('tokens at --check-config')
    work = tempfile.mkdtemp(prefix='dpmon-it-tokens-cc-')
    try:
        token = os.path.join(work, 'open.token')
        write_token(token, 'tok\n', 0o644)
        base = ('{"ports": [{"device": "net_pcap0"}], "subnets": [{"prefix": "10.0.0.0/8"}], '
                '"http": %s}')
        cfg = os.path.join(work, 'open.json')
        with open(cfg, 'w') as f:
            f.write(base % ('{"write_token_file": "%s"}' % token))
        rc, out = check_config(h, cfg)
        c.true('a token file others may read: exit status non-zero', rc != 0, out)
        c.true('a token file others may read: file, JSON path and reason',
               '%s: $.http.write_token_file: token file "%s": group or others may access it '
               '(mode 0644; chmod 600)' % (cfg, token) in out, out)
        cfg = os.path.join(work, 'any.json')
        with open(cfg, 'w') as f:
            f.write(base % '{"listen": "0.0.0.0"}')
        rc, out = check_config(h, cfg)
        c.true('0.0.0.0 without a write token: exit status non-zero', rc != 0, out)
        c.true('0.0.0.0 without a write token: file, JSON path and reason',
               '%s: $.http.listen: "0.0.0.0" is not a loopback address: set '
               'http.write_token_file, or http.allow_unauthenticated_writes to true' % cfg
               in out, out)
        with open(cfg, 'w') as f:
            f.write(base % '{"listen": "0.0.0.0", "allow_unauthenticated_writes": true}')
        rc, out = check_config(h, cfg)
        c.eq('0.0.0.0 with allow_unauthenticated_writes: exit status', 0, rc)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
