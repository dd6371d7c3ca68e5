#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""HTTP error answers of a running dpmon (docs/api.md, "Errors"): status,
Content-Type application/json and a body {"error": "..."} with nothing
else, for unknown paths, malformed prefixes/addresses/parameters, methods
other than GET/HEAD, and well-formed subnets/hosts that are not there.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SUBNETS = [('141.142.228.0/24', 'a'), ('192.150.187.0/24', 'b'), ('2001:db8:1::/48', 'v6')]

# (method, path, status, body for POST/PUT or None)
CASES = [
    ('GET', '/nope', 404, None),
    ('GET', '/api/v2/summary', 404, None),
    ('GET', '/api/v1/summaryx', 404, None),
    ('GET', '/api/v1/subnets/10.0.0.1/24', 400, None),     # host bits set
    ('GET', '/api/v1/subnets/10.0.0.0/33', 400, None),     # length out of range
    ('GET', '/api/v1/subnets/10.0.0.0', 400, None),        # no length
    ('GET', '/api/v1/subnets/not-a-prefix', 400, None),
    ('GET', '/api/v1/subnets/2001:db8:1::1/48', 400, None),
    ('GET', '/api/v1/subnets/10.9.0.0/24', 404, None),     # valid, not monitored
    ('GET', '/api/v1/subnets/2001:db8:2::/48', 404, None),
    ('GET', '/api/v1/hosts?subnet=10.9.0.0/24', 404, None),
    ('GET', '/api/v1/hosts?subnet=10.0.0.0/99', 400, None),
    ('GET', '/api/v1/hosts?sort=fastest', 400, None),
    ('GET', '/api/v1/hosts?direction=sideways', 400, None),
    ('GET', '/api/v1/hosts?limit=0', 400, None),
    ('GET', '/api/v1/hosts?limit=10001', 400, None),
    ('GET', '/api/v1/hosts?limit=abc', 400, None),
    ('GET', '/api/v1/hosts?bogus=1', 400, None),
    ('GET', '/api/v1/hosts?limit=5&limit=6', 400, None),
    ('GET', '/api/v1/summary?x=1', 400, None),
    ('GET', '/api/v1/hosts/not-an-address', 400, None),
    ('GET', '/api/v1/hosts/10.9.9.9', 404, None),          # valid, never seen
    ('POST', '/api/v1/summary', 405, b''),
    ('POST', '/api/v1/subnets', 405, b'{"prefix": "10.0.0.0/24"}'),
    ('PUT', '/api/v1/hosts', 405, b''),
    ('DELETE', '/api/v1/subnets/141.142.228.0/24', 405, None),
]


def test_http_errors(h):
    c = h.checker('http errors')
    with h.dpmon_run([h.td('pcaps', 'zeek', 'http-vlan-0.pcap')], SUBNETS, 'http errors') as d:
        d.wait_counts(14)
        # Positive controls first: the endpoints the errors are about exist.
        for path in ('/health', '/api/v1/subnets/141.142.228.0/24', '/api/v1/hosts/141.142.228.5',
                     '/api/v1/hosts?subnet=141.142.228.0/24&sort=packets&direction=egress&limit=3'):
            status, headers, body = d.request(path)
            c.eq('GET %s status' % path, 200, status)
        for method, path, want, data in CASES:
            what = '%s %s' % (method, path)
            try:
                status, headers, body = d.request(path, method=method, data=data)
            except OSError as e:
                c.fail('%s: request failed: %s: %s' % (what, type(e).__name__, e))
                continue
            c.eq('%s status' % what, want, status)
            ctype = (headers.get('Content-Type') or '').split(';')[0].strip()
            c.eq('%s Content-Type' % what, 'application/json', ctype)
            c.true('%s body is {"error": "<non-empty string>"} (got %r)' % (what, body),
                   isinstance(body, dict) and list(body) == ['error'] and
                   isinstance(body['error'], str) and body['error'] != '')
            if want == 405:
                c.eq('%s Allow' % what, 'GET, HEAD', headers.get('Allow'))
        # dpmon is still serving after all that.
        status, _, _ = d.request('/api/v1/summary')
        c.eq('GET /api/v1/summary after the errors', 200, status)
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
