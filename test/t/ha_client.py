#!/usr/bin/python3
# A client of the HA tests (076_patroni.pl, 077_pg_auto_failover.pl): runs
# one statement again and again, each in its own transaction (autocommit),
# until the stop file exists, and writes every row the server answered a
# committed statement with (the ids handed to this client, acknowledged) to
# OUT, tab-separated, one line each.  On any error it closes the connection,
# waits 50 ms and connects again (a multi-host conninfo with
# target_session_attrs=read-write finds the new primary): a statement whose
# commit got no answer is not acknowledged and not written.  At the end it
# writes OUT.summary: "batches N", "rows N", "errors N", "unique_violations N",
# and "error SQLSTATE: message" for the first error of each SQLSTATE.
#
# PAUSE_MS (optional) is a pause after each acknowledged statement, to keep
# the load light on a shared machine.
#
#   ha_client.py CONNINFO SQL OUT STOPFILE [PAUSE_MS]
import os
import sys
import time

import psycopg2

conninfo, sql, out, stopfile = sys.argv[1:5]
pause = int(sys.argv[5]) / 1000.0 if len(sys.argv) > 5 else 0
batches = rows = errors = unique = 0
first_error = {}
conn = None
with open(out, 'w') as f:
    while not os.path.exists(stopfile):
        try:
            if conn is None:
                conn = psycopg2.connect(conninfo, connect_timeout=3)
                conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute(sql)
                got = cur.fetchall()
            f.write(''.join('\t'.join(str(v) for v in r) + '\n' for r in got))
            f.flush()
            batches += 1
            rows += len(got)
            if pause:
                time.sleep(pause)
        except psycopg2.Error as e:
            errors += 1
            state = getattr(e, 'pgcode', None) or 'none'
            if state == '23505':
                unique += 1
            first_error.setdefault(state, ' '.join(str(e).split()))
            try:
                if conn is not None:
                    conn.close()
            except psycopg2.Error:
                pass
            conn = None
            time.sleep(0.05)
with open(out + '.summary', 'w') as f:
    f.write('batches %d\nrows %d\nerrors %d\nunique_violations %d\n' % (batches, rows, errors, unique))
    for state, msg in sorted(first_error.items()):
        f.write('error %s: %s\n' % (state, msg))
