#!/usr/bin/python3
"""The statements a cosid server sends the lease store, read from the C
sources, so that the fleet simulator (bench/fleet.c) speaks exactly what the
slot worker (src/slot_lease.c) and a segment fetch (src/segment.c) speak:
the same text, with the same $n parameters, all sent as text of no declared
type (libpq's PQsendQueryParams with no types), as those do.

Prints, one a line: the statements acquire, renew, release, segment, then
the two a new store connection runs first (src/store.c: pin, the session's
search_path; trust, the check that the store's cosid objects are a
superuser's), then the trust check's two parameters (STORE_FUNCTIONS and
STORE_TABLES).  A statement is a C string literal (adjacent literals joined)
that contains what names it; exactly one must, or this fails.  Each
parameter's type is in its cast ($1::pg_catalog.text): bench/fleet.c sends
those types, as the server does.

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


def one(path, func, select=True):
    found = sorted({s for s in statements(path) if re.search(func, s)
                    and (not select or re.match(r'\s*SELECT\b', s, re.I))})
    if len(found) != 1:
        sys.exit('fleet_sql.py: %d statements calling %s in %s: %r' % (len(found), func, path, found))
    return ' '.join(found[0].split())


src = os.path.join(ROOT, 'src')
for path, pattern in (('slot_lease.c', r'\bcosid\.lease_acquire\('), ('slot_lease.c', r'\bcosid\.lease_renew\('),
                      ('slot_lease.c', r'\bcosid\.lease_release\('), ('segment.c', r'\bcosid\.segment_acquire\('),
                      ('store.c', r'pg_catalog\.set_config\(\$1'), ('store.c', r'\brolsuper\b')):
    print(one(os.path.join(src, path), pattern))
print(one(os.path.join(src, 'store.c'), r'^\{lease_acquire,', select=False))
print(one(os.path.join(src, 'store.c'), r'^\{lease,', select=False))
