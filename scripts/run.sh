#!/usr/bin/env bash
# make run / make stop: a throwaway server with cosid preloaded, a demo, and
# how to connect.  Data and socket live in tmp/run under the project (or
# $COSID_RUN_DIR); the port is $COSID_PORT (default 54329).  The server is
# PostgreSQL $PG (make run PG=18), by default the first of COSID_PG_VERSIONS;
# a cluster of another version found in tmp/run is stopped and replaced.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Every path below is absolute, and the server user may not enter the
# clone's directory (a clone in /root): run from / so that its commands do
# not warn that they cannot change into it.
cd /
PORT=${COSID_PORT:-54329}
DATA=${COSID_RUN_DIR:-$REPO/tmp/run}

prepare_dir() {
	mkdir -p "$DATA"
	chmod 700 "$DATA"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres:postgres "$DATA"
		# the server user must reach the directory through the project path
		if ! runuser -u postgres -- test -x "$DATA"; then
			DATA=/tmp/cosid-run
			mkdir -p "$DATA" && chmod 700 "$DATA" && chown postgres:postgres "$DATA"
		fi
	fi
}

# the major version of the cluster in $DATA (empty if there is none)
data_version() { cat "$DATA/PG_VERSION" 2>/dev/null || true; }

case "${1:-start}" in
start)
	[ -n "${PGBIN:-}" ] || use_pg "$PG_VERSION" || exit 1
	prepare_dir
	old=$(data_version)
	if [ -n "$old" ] && [ "$old" != "$PG_VERSION" ]; then
		echo "run: $DATA holds a PostgreSQL $old cluster: stopping it and starting over with PostgreSQL $PG_VERSION"
		if [ -f "$DATA/postmaster.pid" ]; then
			(use_pg "$old" && cluster_stop "$DATA") || {
				echo "run: could not stop it: stop it and remove $DATA yourself" >&2
				exit 1
			}
		fi
		find "$DATA" -mindepth 1 -delete
	fi
	if [ -f "$DATA/postmaster.pid" ] && as_pg pg_ctl -D "$DATA" status >/dev/null 2>&1; then
		echo "run: restarting the server in $DATA to load the freshly built cosid"
		as_pg pg_ctl -D "$DATA" -m fast -w restart >/dev/null
	else
		cluster_start "$DATA" "$PORT"
	fi
	cluster_psql "$DATA" "$PORT" -d postgres -c "SELECT 1" >/dev/null
	if ! cluster_psql "$DATA" "$PORT" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'cosid'" | grep -q 1; then
		cluster_psql "$DATA" "$PORT" -d postgres -c "CREATE DATABASE cosid"
	fi
	cluster_psql "$DATA" "$PORT" -d cosid -c "DROP EXTENSION IF EXISTS cosid CASCADE" -c "CREATE EXTENSION cosid"
	echo "== examples/demo.sql"
	# on standard input: the server user may not read the clone (in /root)
	as_pg psql -X -v ON_ERROR_STOP=1 -h "$DATA" -p "$PORT" -d cosid -f - <"$REPO/examples/demo.sql"
	psql=psql
	[ "$PG_VERSION" = "$COSID_PG_DEBIAN" ] || psql=$PGBIN/psql
	cat <<MSG

cosid is running (PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'), data and socket in $DATA, port $PORT).
Connect:  $psql -h $DATA -p $PORT -U $PG_USER -d cosid
Stop:     make stop
MSG
	;;
stop)
	if [ -f "$DATA/postmaster.pid" ] || [ -f /tmp/cosid-run/postmaster.pid ]; then
		[ -f "$DATA/postmaster.pid" ] || DATA=/tmp/cosid-run
		# with the pg_ctl of the cluster's own version
		use_pg "$(data_version)" 2>/dev/null || use_pg "$PG_VERSION"
		cluster_stop "$DATA"
		echo "run: server in $DATA stopped"
	else
		echo "run: no server running in $DATA"
	fi
	;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
