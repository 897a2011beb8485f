#!/usr/bin/python3
"""The statements a cosid server sends the lease store, read from the C
sources, so that the fleet simulator (bench/fleet.c) speaks exactly what the
slot worker (src/slot_lease.c) and a segment fetch (src/segment.c) speak:
the same text, with the same $n parameters, all sent as text of no declared
type (libpq's PQsendQueryParams with no types), as those do.

Prints four lines, in this order: acquire, renew, release, segment.  A
statement is a C string literal (adjacent literals joined) that contains the
function's name; exactly one must, or this fails.

  fleet_sql.py [REPO]"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
# one or more adjacent C string literals (no escapes in these statements
# but \" and \\, which are undone)
LITERALS = re.compile(r'"((?:[^"\\\n]|\\.)*)"(?:\s*"((?:[^"\\\n]|\\.)*)")*')
PIECE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def statements(path):
    with open(path) as f:
        text = f.read()
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    out = []
    for m in LITERALS.finditer(text):
        s = ''.join(PIECE.findall(m.group(0)))
        out.append(s.replace('\\"', '"').replace('\\\\', '\\'))
    return out


def one(path, func):
    found = sorted({s for s in statements(path) if re.search(r'\b' + re.escape(func) + r'\s*\(', s)
                    and re.match(r'\s*SELECT\b', s, re.I)})
    if len(found) != 1:
        sys.exit('fleet_sql.py: %d statements calling %s in %s: %r' % (len(found), func, path, found))
    return ' '.join(found[0].split())


src = os.path.join(ROOT, 'src')
for path, func in (('slot_lease.c', 'cosid.lease_acquire'), ('slot_lease.c', 'cosid.lease_renew'),
                   ('slot_lease.c', 'cosid.lease_release'), ('segment.c', 'cosid.segment_acquire')):
    print(one(os.path.join(src, path), func))
