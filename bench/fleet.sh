#!/usr/bin/env bash
# make bench's fleet rows (bench/run.sh runs it; it also runs alone): what one
# lease store costs for a fleet of N servers, N = 64, 256 and 1,024, each
# holding a slot with TTL 10 s and renewing at the slot worker's own rate,
# directly and through PgBouncer (Debian's pgbouncer, transaction pooling,
# at most 20 server connections).
#
# The servers are virtual: bench/fleet.c, one connection each, speaking the
# worker's protocol (its statements are read from src/slot_lease.c and
# src/segment.c by bench/fleet_sql.py, sent as the worker sends them) and
# following its timing: "busy" servers (ids issued all the time) record a new
# window end every TTL / 2 or so (the lease source's lead: half the TTL and
# 700 ms, at most 6 s), "idle" ones renew every TTL / 2.  Beside them two
# real cosid servers lease slots of the same namespace from the same store
# (through PgBouncer too), under a light pgbench load (20 ids a second each);
# each row says whether they held their slots to the end.  The store is
# PostgreSQL $PG with fsync on (its lease calls commit synchronously), on
# 127.0.0.1.
#
# Measured over BENCH_FLEET_SECONDS (15) after 5 s of warm-up: the store's
# CPU (its processes' from /proc) as a share of one core, PgBouncer's, the
# latency of renewals (send to answer) at p50 / p99 / p99.9 / max, calls a
# second, and the store's client connections.  Targets (issue 31): at 1,024
# holders at most 10% of one core and p99 at most 10 ms; reported OK or
# MISSED, never failing the run.  The table is printed and written to
# tmp/bench/fleet-<version>.tsv, the chart (gnuplot) to
# tmp/bench/fleet-<version>.svg (and bench/fleet-<version>.svg with
# BENCH_CHART=1).
#
#   BENCH_FLEET_SECONDS=15      measured seconds per run
#   BENCH_FLEET_N="64 256 1024" fleet sizes
#   BENCH_FLEET_SEGMENTS=10     segment ranges a second the fleet takes
#   BENCH_FLEET_RESTARTS=2      virtual servers a second that release their slot and acquire one again
#   BENCH_FLEET_PORT=54350      the store's port (PgBouncer: +1; real servers: +2, +3)
#   BENCH_FLEET_ROUTES="direct pgbouncer"  the routes measured
#   BENCH_FLEET_FAILOVER=       N: one more row through PgBouncer, N busy holders
#                               whose store crashes (pg_ctl stop -m immediate) 5 s
#                               into the measured seconds and starts again; its
#                               CPU is not measured.  Every row counts the checks
#                               that found two holders' windows of one slot
#                               overlapping (held_twice, always 0) and the
#                               longest time a busy holder's window stayed
#                               closed (stall_max_ms: no id could be issued)
#   BENCH_FLEET_LEAD_MS=        a fixed window lead for the virtual servers
#                               instead of the lease source's (half the
#                               TTL and 700 ms, at most 6 s; renewed when less
#                               than BENCH_FLEET_RENEW_MS, 700, is left): 1000
#                               is what a busy server did before 1.4 (a
#                               renewal every 300 ms)
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
[ -n "${PGBIN:-}" ] || use_pg "$PG_VERSION" || exit 1

SECS=${BENCH_FLEET_SECONDS:-15}
SIZES=${BENCH_FLEET_N:-64 256 1024}
SEGS=${BENCH_FLEET_SEGMENTS:-10}
RESTARTS=${BENCH_FLEET_RESTARTS:-2}
ROUTES=${BENCH_FLEET_ROUTES:-direct pgbouncer}
LEAD=()
[ -z "${BENCH_FLEET_LEAD_MS:-}" ] || LEAD+=(--lead-ms "$BENCH_FLEET_LEAD_MS")
[ -z "${BENCH_FLEET_RENEW_MS:-}" ] || LEAD+=(--renew-ms "$BENCH_FLEET_RENEW_MS")
PORT=${BENCH_FLEET_PORT:-54350}
BPORT=$((PORT + 1))
BENCH=$REPO/bench
for v in SECS PORT; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "bench: BENCH_FLEET_$v must be a positive integer, not '${!v}'" >&2
		exit 2
	fi
done

echo
echo "== fleet: N servers leasing slots from one store (TTL 10 s), direct and through PgBouncer"
[ ${#LEAD[@]} -eq 0 ] || echo "  (not the worker's timing: ${LEAD[*]})"
if ! command -v pgbouncer >/dev/null && ! [ -x /usr/sbin/pgbouncer ]; then
	if [ "$(id -u)" -eq 0 ]; then
		echo "bench: installing pgbouncer (apt)" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q pgbouncer >/dev/null 2>&1 || true
	fi
fi
PGBOUNCER=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
[ -x "$PGBOUNCER" ] || PGBOUNCER=

WORK=$(pg_workdir fleet)
STORE=$WORK/store
pids_to_stop=()
cleanup() {
	local d
	for p in "${pids_to_stop[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$WORK/bouncer.pid" ] && kill "$(cat "$WORK/bouncer.pid")" 2>/dev/null || true
	for d in "$WORK"/real1 "$WORK"/real2 "$STORE"; do
		[ -f "$d/postmaster.pid" ] && as_pg pg_ctl -D "$d" -m fast -w stop >/dev/null 2>&1 || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# the simulator, and the worker's statements
# the worker's timing constants, from src/slot.h
WORKER_CONSTS=$(awk '$1 == "#define" && $2 ~ /^COSID_(WINDOW_RENEW_MS|WINDOW_LEAD_MS|LEASE_RENEW_PART|LEASE_LEAD_MAX_MS|LEASE_LEAD_MARGIN_MS)$/ { printf "-D%s=%s ", $2, $3 }' "$REPO/src/slot.h")
cc -O2 -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra $WORKER_CONSTS -I"$("$PG_CONFIG" --includedir)" "$BENCH/fleet.c" \
	-L"$("$PG_CONFIG" --libdir)" -Wl,-rpath,"$("$PG_CONFIG" --libdir)" -lpq -o "$WORK/fleet"
python3 "$BENCH/fleet_sql.py" "$REPO" >"$WORK/fleet.sql"
head -4 "$WORK/fleet.sql" | sed 's/^/  statement: /'

# the store: fsync on, room for 1,024 direct connections
as_pg initdb -D "$STORE" -A trust -U "$PG_USER" --no-sync >/dev/null
cat >>"$STORE/postgresql.conf" <<EOF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$STORE'
max_connections = 1200
fsync = on
log_min_messages = warning
EOF
as_pg pg_ctl -D "$STORE" -l "$STORE/server.log" -w -t 60 start >/dev/null
STORE_PID=$(head -1 "$STORE/postmaster.pid")
spsql() { as_pg psql -X -q -At -v ON_ERROR_STOP=1 -h "$STORE" -p "$PORT" -d postgres "$@"; }
spsql -c 'CREATE EXTENSION cosid'
DIRECT="host=127.0.0.1 port=$PORT dbname=postgres user=$PG_USER"
ADMIN="host=$STORE port=$PORT dbname=postgres user=$PG_USER"

# PgBouncer: transaction pooling, at most 20 server connections
BOUNCER="host=127.0.0.1 port=$BPORT dbname=store user=$PG_USER"
if [ -n "$PGBOUNCER" ]; then
	echo "\"$PG_USER\" \"\"" >"$WORK/userlist.txt"
	cat >"$WORK/pgbouncer.ini" <<EOF
[databases]
store = host=127.0.0.1 port=$PORT dbname=postgres connect_query='SELECT pg_catalog.set_config(''search_path'', ''pg_catalog, pg_temp'', false)'

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BPORT
unix_socket_dir =
auth_type = trust
auth_file = $WORK/userlist.txt
pool_mode = transaction
default_pool_size = 20
max_db_connections = 20
max_client_conn = 2100
query_wait_timeout = 5
server_login_retry = 1
logfile = $WORK/pgbouncer.log
pidfile = $WORK/bouncer.pid
EOF
	[ "$(id -u)" -ne 0 ] || chown postgres "$WORK"/pgbouncer.ini "$WORK"/userlist.txt
	as_pg bash -c "ulimit -n 8192 && '$PGBOUNCER' -d -q '$WORK/pgbouncer.ini'"
	for _ in $(seq 50); do [ -s "$WORK/bouncer.pid" ] && break; sleep 0.1; done
fi

# two real servers of the namespace, 20 ids a second each
for i in 1 2; do
	d=$WORK/real$i
	as_pg initdb -D "$d" -A trust -U "$PG_USER" --no-sync >/dev/null
	cat >>"$d/postgresql.conf" <<EOF
port = $((PORT + 1 + i))
listen_addresses = ''
unix_socket_directories = '$d'
shared_preload_libraries = 'cosid'
cosid.slot = 'lease'
cosid.lease_store = '$DIRECT'
cosid.lease_ttl = 10
cosid.namespace = 'fleet'
cosid.machine_bits = 11
cosid.instance_id = 'real$i'
EOF
	as_pg pg_ctl -D "$d" -l "$d/server.log" -w -t 60 start >/dev/null
	rpsql() { as_pg psql -X -q -At -v ON_ERROR_STOP=1 -h "$WORK/real$1" -p "$((PORT + 1 + $1))" -d postgres "${@:2}"; }
	rpsql $i -c 'CREATE EXTENSION cosid' \
		-c "SELECT cosid_define('fleet_ids', '{\"layout\": \"SNOWFLAKE_MS\", \"node-bits\": 11, \"seq-bits\": 11}')" >/dev/null
	echo "SELECT cosid_next('fleet_ids');" >"$WORK/real.sql"
	[ "$(id -u)" -ne 0 ] || chown postgres "$WORK/real.sql"
	as_pg pgbench -n -R 20 -T 100000 -c 1 -f "$WORK/real.sql" -h "$d" -p "$((PORT + 1 + i))" postgres \
		>"$WORK/pgbench$i.log" 2>&1 &
	pids_to_stop+=($!)
done
rpsql() { as_pg psql -X -q -At -v ON_ERROR_STOP=1 -h "$WORK/real$1" -p "$((PORT + 1 + $1))" -d postgres "${@:2}"; }
real_state() { echo "$(rpsql 1 -c 'SELECT state FROM cosid_slot()')/$(rpsql 2 -c 'SELECT state FROM cosid_slot()')"; }
point_real() {
	local i
	for i in 1 2; do
		rpsql $i -c "ALTER SYSTEM SET cosid.lease_store = '$1'" -c 'SELECT pg_reload_conf()' >/dev/null
	done
}

ulimit -n 8192 2>/dev/null || true
RESULTS=$WORK/fleet.tsv
printf 'route\tmode\tholders\tstore_cpu_pct\tbouncer_cpu_pct\trenew_per_s\trenew_p50_ms\trenew_p99_ms\trenew_p999_ms\trenew_max_ms\tacquire_p99_ms\trelease_p99_ms\tsegment_p99_ms\terrors\tstore_connections\treal_servers\theld_twice\tstall_max_ms\tstall_p50_ms\n' >"$RESULTS"
run() {
	local route=$1 mode=$2 n=$3 conninfo bpid=0 out crash=
	[ "$mode" != busy+crash ] || { crash=1; mode=busy; }
	if [ "$route" = direct ]; then conninfo=$DIRECT; else conninfo=$BOUNCER; bpid=$(cat "$WORK/bouncer.pid"); fi
	if [ -n "$crash" ]; then
		# the ramp (5 ms a holder, at least 1 s), the warm-up, then 5 s
		(
			sleep $(((n * 5 > 1000 ? n * 5 : 1000) / 1000 + 1 + 5 + 5))
			t0=$(date +%s%N)
			as_pg pg_ctl -D "$STORE" -m immediate -w stop >/dev/null 2>&1
			as_pg pg_ctl -D "$STORE" -l "$STORE/server.log" -w -t 60 start >/dev/null 2>&1
			echo "store crashed and back in $((($(date +%s%N) - t0) / 1000000)) ms" >"$WORK/crash.txt"
		) &
		CRASH_PID=$!
	fi
	out=$("$WORK/fleet" --conninfo "$conninfo" --admin "$ADMIN" --sql "$WORK/fleet.sql" --n "$n" \
		--seconds "$SECS" --warmup 5 --ttl 10 --slot-bits 11 --namespace fleet --prefix "sim-$route-$mode-$n" \
		--store-pid "$([ -n "$crash" ] && echo 0 || echo "$STORE_PID")" --bouncer-pid "$bpid" --segments "$SEGS" --restarts "$RESTARTS" $([ "$mode" = idle ] && echo --idle) "${LEAD[@]}" \
		2>"$WORK/fleet-$route-$mode-$n.err") || { cat "$WORK/fleet-$route-$mode-$n.err" >&2; return 1; }
	[ -z "$crash" ] || mode=busy+crash
	v() { echo "$out" | sed -n "s/^$1=//p"; }
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$route" "$mode" "$n" \
		"$(v store_cpu_pct)" "$(v bouncer_cpu_pct)" "$(v renew_per_s)" "$(v renew_p50_ms)" "$(v renew_p99_ms)" \
		"$(v renew_p999_ms)" "$(v renew_max_ms)" "$(v acquire_p99_ms)" "$(v release_p99_ms)" "$(v segment_p99_ms)" \
		"$(($(v acquire_errors) + $(v renew_errors) + $(v release_errors) + $(v segment_errors)))" "$(v store_connections)" \
		"$(real_state)" "$(v held_twice)" "$(v stall_max_ms)" "$(v stall_p50_ms)" >>"$RESULTS"
	tail -1 "$RESULTS"
}

# an idle store first: the real servers alone
sleep 3
for route in $ROUTES; do
	case "$route" in direct | pgbouncer) ;; *) echo "bench: BENCH_FLEET_ROUTES: no route '$route'" >&2; exit 2 ;; esac
	if [ "$route" = pgbouncer ]; then
		[ -n "$PGBOUNCER" ] || { echo "fleet: pgbouncer is not installed: no PgBouncer rows"; break; }
		point_real "$BOUNCER"
		sleep 2
	fi
	for n in $SIZES; do run "$route" busy "$n"; done
	run "$route" idle "${SIZES##* }"
	if [ "$route" = pgbouncer ] && [ -n "${BENCH_FLEET_FAILOVER:-}" ]; then
		run pgbouncer busy+crash "$BENCH_FLEET_FAILOVER"
		wait "$CRASH_PID"
		cat "$WORK/crash.txt"
		STORE_PID=$(head -1 "$STORE/postmaster.pid")
	fi
done

echo
column -t -s $'\t' "$RESULTS"
echo
awk -F'\t' 'NR > 1 && $3 == 1024 && $2 == "busy" {
	printf "target: 1,024 busy holders %s: store CPU %s%% of one core (<= 10%%): %s; renewal p99 %s ms (<= 10 ms): %s\n",
		$1, $4, ($4 <= 10 ? "OK" : "MISSED"), $8, ($8 <= 10 ? "OK" : "MISSED") }' "$RESULTS"

mkdir -p "$REPO/tmp/bench" 2>/dev/null && cp "$RESULTS" "$REPO/tmp/bench/fleet-$PG_VERSION.tsv" &&
	echo "table: tmp/bench/fleet-$PG_VERSION.tsv"
if command -v gnuplot >/dev/null; then
	gnuplot -e "data='$RESULTS'; out='$WORK/fleet.svg'; chart_title='Lease store for a fleet (PostgreSQL $PG_VERSION, make bench $(date -u +%Y-%m-%d))'" \
		"$BENCH/fleet.gp" && cp "$WORK/fleet.svg" "$REPO/tmp/bench/fleet-$PG_VERSION.svg" &&
		echo "chart: tmp/bench/fleet-$PG_VERSION.svg"
	case "${BENCH_CHART:-}" in
	'') ;;
	1) cp "$WORK/fleet.svg" "$BENCH/fleet-$PG_VERSION.svg" && echo "chart: bench/fleet-$PG_VERSION.svg" ;;
	*) cp "$WORK/fleet.svg" "${BENCH_CHART%.svg}-fleet.svg" ;;
	esac
else
	echo "fleet: gnuplot is missing: no chart"
fi
