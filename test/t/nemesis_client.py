#!/usr/bin/python3
# A client of the nemesis (095_nemesis.pl): asks its server, again and again,
# for a time-based id (KIND S) or a segment number (KIND G), each call its own
# statement (autocommit), until the stop file exists.  (One kind a client: a
# segment fetch waiting for an unreachable store does not hold up ids.)  Every value the server answered
# (acknowledged) is written to OUT at once, one line each, with the client's
# own clock (never faked):
#   S <TAB> unix_ms <TAB> id        an id of the time-based generator 'snow'
#   G <TAB> unix_ms <TAB> number    a number of the segment generator 'seg'
#   E <TAB> unix_ms <TAB> SQLSTATE  a statement that failed
# After an error it waits 20 ms; on a lost connection 50 ms, and connects again.  A statement whose
# answer never came is not acknowledged and not written.
#
#   nemesis_client.py KIND CONNINFO OUT STOPFILE [PAUSE_MS]
import os
import sys
import time

import psycopg2

kind, conninfo, out, stopfile = sys.argv[1:5]
pause = int(sys.argv[5]) / 1000.0 if len(sys.argv) > 5 else 0
conn = None
STATEMENTS = [s for s in (('S', "SELECT cosid_next('snow')"), ('G', "SELECT cosid_next('seg')")) if s[0] == kind]


def now_ms():
    return int(time.time() * 1000)


with open(out, 'w') as f:
    while not os.path.exists(stopfile):
        for kind, sql in STATEMENTS:
            try:
                if conn is None:
                    conn = psycopg2.connect(conninfo, connect_timeout=3)
                    conn.autocommit = True
                with conn.cursor() as cur:
                    cur.execute(sql)
                    value = cur.fetchone()[0]
                f.write('%s\t%d\t%d\n' % (kind, now_ms(), value))
            except psycopg2.Error as e:
                f.write('E\t%d\t%s\n' % (now_ms(), getattr(e, 'pgcode', None) or 'none'))
                if conn is not None and conn.closed:
                    conn = None
                elif conn is not None and getattr(e, 'pgcode', None) is None:
                    try:
                        conn.close()
                    except psycopg2.Error:
                        pass
                    conn = None
                # (not too fast: a server without a window fails at once)
                time.sleep(0.05 if conn is None else 0.02)
            f.flush()
        if pause:
            time.sleep(pause)
