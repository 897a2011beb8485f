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
# Measured over BENCH_FLEET_SECONDS (15) after BENCH_FLEET_WARMUP (5 s): the
# store's CPU (its processes' from /proc) as a share of one core,
# PgBouncer's, the latency of renewals (send to answer) at p50 / p99 / p99.9
# / max, calls a second, and the store's client connections; and how long
# the start took (all_slots_s: from the start ramp's beginning until every
# holder had its first slot, as when a fleet starts together or comes back
# after the store was away past the TTL; - when one never had one).  Targets
# (issue 31): at 1,024 holders at most 10% of one core and p99 at most
# 10 ms; reported OK or MISSED, never failing the run.  The table is printed and written to
# tmp/bench/fleet-<version>.tsv, the chart (gnuplot) to
# tmp/bench/fleet-<version>.svg (and bench/fleet-<version>.svg with
# BENCH_CHART=1).  The store's log (with its checkpoints and autovacuum runs)
# and each run's simulator log (its calls of 20 ms or more, by the second) are
# kept in tmp/bench/fleet-<version>-logs/, to set a tail beside what the
# store did.
#
#   BENCH_FLEET_SECONDS=15      measured seconds per run
#   BENCH_FLEET_WARMUP=5        seconds between the start ramp and the
#                               measurement (a backend's first calls of a
#                               statement are planned afresh: 30 or more
#                               measures a fleet that has run a while)
#   BENCH_FLEET_MODES="busy idle"  the rows of each route: busy for every N,
#                               idle for the largest
#   BENCH_FLEET_STALL=          ms: every row's store stopped (SIGSTOP of the
#                               postmaster and its children) that long, 5 s
#                               into the measured seconds; the simulator's log
#                               shows what the fleet does after it (before
#                               1.4 an idle fleet's renewals gathered into a
#                               burst every half TTL from then on)
#   BENCH_FLEET_N="64 256 1024" fleet sizes
#   BENCH_FLEET_SEGMENTS=10     segment ranges a second the fleet takes
#   BENCH_FLEET_RESTARTS=2      virtual servers a second that release their slot and acquire one again
#   BENCH_FLEET_PORT=54350      the store's port (PgBouncer: +1; real servers: +2, +3)
#   BENCH_FLEET_ROUTES="direct pgbouncer"  the routes measured (none: no
#                               fleet rows, the floor's and Patroni's alone)
#   BENCH_FLEET_FAILOVER=       N: one more row through PgBouncer, N busy holders
#                               whose store crashes (pg_ctl stop -m immediate) 5 s
#                               into the measured seconds and starts again; its
#                               CPU is not measured.  Every row counts the checks
#                               that found two holders' windows of one slot
#                               overlapping (held_twice, always 0) and the
#                               longest time a busy holder's window stayed
#                               closed (stall_max_ms: no id could be issued);
#                               busy rows, the holders back at the end (a window
#                               open in the last 2 s); failover rows, how long
#                               the store was away (store_away_ms)
#   BENCH_FLEET_PATRONI=        N: two more rows, N busy holders whose store is a
#                               Patroni cluster (docs/operations.md's recipe,
#                               test/t/076_patroni.pl's settings: two members,
#                               one etcd, synchronous_mode, ttl 8 s; ports
#                               BENCH_FLEET_PORT + 10 to + 15, loopback), reached
#                               directly with a conninfo that lists both members
#                               and target_session_attrs=read-write.  5 s into
#                               the measured seconds (30 at least) a switchover
#                               (Patroni's REST API), and in the second row a
#                               hard kill of the leader (SIGKILL of its Patroni,
#                               postmaster and children); store_away_ms is how
#                               long no member led (polled every 30 ms or so).
#                               Errors count failed connections too.  The
#                               holders start over BENCH_FLEET_PATRONI_RAMP_MS
#                               (20 ms a holder: acquires wait for the
#                               synchronous standby holding the namespace's
#                               lock; two runs that started 1,024 in 5 s went
#                               wrong, see docs/benchmarks.md).  Skipped, with
#                               a message, without patroni, etcd or curl
#   BENCH_FLEET_PIN=rest        with 2 CPUs or more, everything but the store
#                               (the simulator, PgBouncer, the real servers)
#                               runs on all CPUs but the last, so that the
#                               1,024 simulated servers' own work (about a
#                               third of a CPU) does not share the store's
#                               CPU, as on a machine of the store's own; the
#                               store may use every CPU.  store: the store on
#                               the last CPU alone (a one-CPU store); 0: no
#                               pinning
#   BENCH_FLEET_POOL=20         PgBouncer's server connections (default_pool_size
#                               and max_db_connections)
#   BENCH_FLEET_TTL=10          the virtual servers' lease TTL, seconds (the real
#                               servers' stays 10 s)
#   BENCH_FLEET_LEAD_MS=        a fixed window lead for the virtual servers
#                               instead of the lease source's (half the
#                               TTL and 700 ms, at most 6 s; renewed when less
#                               than BENCH_FLEET_RENEW_MS, 700, is left): 1000
#                               is what a busy server did before 1.4 (a
#                               renewal every 300 ms)
#   BENCH_FLEET_FLOOR=1         after the fleet's rows, the floor's: the
#                               largest fleet's rate of calls, sent by pgbench
#                               over 20 and over N connections, each call only
#                               SELECT 1, only one row's UPDATE (committed
#                               synchronously, and not), or the renewal: the
#                               store's CPU for each (0 leaves them out; see
#                               floor_rows below)
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
[ -n "${PGBIN:-}" ] || use_pg "$PG_VERSION" || exit 1

SECS=${BENCH_FLEET_SECONDS:-15}
WARMUP=${BENCH_FLEET_WARMUP:-5}
MODES=${BENCH_FLEET_MODES:-busy idle}
STALL=${BENCH_FLEET_STALL:-}
TTL=${BENCH_FLEET_TTL:-10}
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
FAILOVER=${BENCH_FLEET_FAILOVER:-}
PATRONI_N=${BENCH_FLEET_PATRONI:-}
for v in SECS TTL PORT ${FAILOVER:+FAILOVER} ${PATRONI_N:+PATRONI_N} ${STALL:+STALL}; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "bench: BENCH_FLEET_${v%_N} must be a positive integer, not '${!v}'" >&2
		exit 2
	fi
done
if ! [[ $WARMUP =~ ^[0-9]+$ ]]; then
	echo "bench: BENCH_FLEET_WARMUP must be a number of seconds, not '$WARMUP'" >&2
	exit 2
fi
for m in $MODES; do
	case "$m" in busy | idle) ;; *) echo "bench: BENCH_FLEET_MODES: no mode '$m' (busy, idle)" >&2; exit 2 ;; esac
done

echo
echo "== fleet: N servers leasing slots from one store (TTL $TTL s), direct and through PgBouncer"
[ ${#LEAD[@]} -eq 0 ] || echo "  (not the worker's timing: ${LEAD[*]})"
if ! command -v pgbouncer >/dev/null && ! [ -x /usr/sbin/pgbouncer ]; then
	if [ "$(id -u)" -eq 0 ]; then
		echo "bench: installing pgbouncer (apt)" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q pgbouncer >/dev/null 2>&1 || true
	fi
fi
PGBOUNCER=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
[ -x "$PGBOUNCER" ] || PGBOUNCER=

# the store on a CPU of its own (BENCH_FLEET_PIN): on_store and on_rest
# prefix the commands that start its processes and everyone else's
on_store=()
on_rest=()
NCPU=$(nproc 2>/dev/null || echo 1)
PIN=${BENCH_FLEET_PIN:-rest}
case "$PIN" in
0 | rest | store) ;;
*) echo "bench: BENCH_FLEET_PIN must be rest, store or 0, not '$PIN'" >&2; exit 2 ;;
esac
if [ "$PIN" != 0 ] && [ "$NCPU" -ge 2 ] && command -v taskset >/dev/null; then
	on_rest=(taskset -c 0-$((NCPU - 2)))
	if [ "$PIN" = store ]; then
		on_store=(taskset -c $((NCPU - 1)))
		echo "  (the store on CPU $((NCPU - 1)) alone, the simulator, PgBouncer and the real servers on CPUs 0-$((NCPU - 2)): BENCH_FLEET_PIN=store)"
	else
		echo "  (the simulator, PgBouncer and the real servers on CPUs 0-$((NCPU - 2)), the store on any: BENCH_FLEET_PIN=rest)"
	fi
fi

WORK=$(pg_workdir fleet)
STORE=$WORK/store
pids_to_stop=()
cleanup() {
	local d p
	for p in "${pids_to_stop[@]}"; do kill "$p" 2>/dev/null || true; done
	if [ -d "$WORK" ] && mkdir -p "$REPO/tmp/bench/fleet-$PG_VERSION-logs" 2>/dev/null; then
		rm -f "$REPO/tmp/bench/fleet-$PG_VERSION-logs"/*
		cp "$WORK"/fleet-*.err "$WORK"/floor-*.log "$REPO/tmp/bench/fleet-$PG_VERSION-logs/" 2>/dev/null || true
		cp "$STORE/server.log" "$REPO/tmp/bench/fleet-$PG_VERSION-logs/store.log" 2>/dev/null || true
	fi
	[ -f "$WORK/bouncer.pid" ] && kill "$(cat "$WORK/bouncer.pid")" 2>/dev/null || true
	for d in "$WORK"/real1 "$WORK"/real2 "$STORE"; do
		[ -f "$d/postmaster.pid" ] && as_pg pg_ctl -D "$d" -m fast -w stop >/dev/null 2>&1 || true
	done
	# the Patroni rows: each Patroni stops its PostgreSQL, then etcd
	for p in "$WORK"/patroni1.pid "$WORK"/patroni2.pid "$WORK"/etcd.pid; do
		[ -s "$p" ] || continue
		p=$(cat "$p")
		kill "$p" 2>/dev/null || continue
		for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$p" 2>/dev/null || true
	done
	for d in "$WORK"/pg1/data "$WORK"/pg2/data; do
		[ -f "$d/postmaster.pid" ] && as_pg pg_ctl -D "$d" -m immediate -w stop >/dev/null 2>&1 || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# the simulator, and the worker's statements
# the worker's timing constants, from src/slot.h and src/slot_source.h, its
# back-off (src/core/backoff.h) and its call deadline (src/store.h)
WORKER_CONSTS=$(awk '$1 == "#define" && $2 ~ /^COSID_(WINDOW_RENEW_MS|WINDOW_LEAD_MS|LEASE_RENEW_PART|LEASE_LEAD_MAX_MS|LEASE_LEAD_MARGIN_MS|LEASE_CALL_MIN_MS|WORKER_TURN_MS|BACKOFF_MIN_MS|BACKOFF_MAX_MS|STORE_TIMEOUT_MS)$/ { printf "-D%s=%s ", $2, $3 }' \
	"$REPO/src/slot.h" "$REPO/src/slot_source.h" "$REPO/src/core/backoff.h" "$REPO/src/store.h")
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
log_checkpoints = on
# its autovacuum runs too: a tail set beside them (cosid.lease, updated by
# every renewal, is vacuumed about once a minute at 1,024 holders)
log_autovacuum_min_duration = 0
# docs/operations.md's recipe: a backend whose server gave up on its call
# (after 5 s) stops instead of running it for no one
client_connection_check_interval = '1s'
EOF
as_pg "${on_store[@]}" pg_ctl -D "$STORE" -l "$STORE/server.log" -w -t 60 start >/dev/null
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
default_pool_size = ${BENCH_FLEET_POOL:-20}
max_db_connections = ${BENCH_FLEET_POOL:-20}
max_client_conn = 2100
query_wait_timeout = 5
server_login_retry = 1
logfile = $WORK/pgbouncer.log
pidfile = $WORK/bouncer.pid
EOF
	[ "$(id -u)" -ne 0 ] || chown postgres "$WORK"/pgbouncer.ini "$WORK"/userlist.txt
	as_pg "${on_rest[@]}" bash -c "ulimit -n 8192 && '$PGBOUNCER' -d -q '$WORK/pgbouncer.ini'"
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
	as_pg "${on_rest[@]}" pg_ctl -D "$d" -l "$d/server.log" -w -t 60 start >/dev/null
	rpsql() { as_pg psql -X -q -At -v ON_ERROR_STOP=1 -h "$WORK/real$1" -p "$((PORT + 1 + $1))" -d postgres "${@:2}"; }
	rpsql $i -c 'CREATE EXTENSION cosid' \
		-c "SELECT cosid_define('fleet_ids', '{\"layout\": \"SNOWFLAKE_MS\", \"node-bits\": 11, \"seq-bits\": 11}')" >/dev/null
	echo "SELECT cosid_next('fleet_ids');" >"$WORK/real.sql"
	[ "$(id -u)" -ne 0 ] || chown postgres "$WORK/real.sql"
	as_pg "${on_rest[@]}" pgbench -n -R 20 -T 100000 -c 1 -f "$WORK/real.sql" -h "$d" -p "$((PORT + 1 + i))" postgres \
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
printf 'route\tmode\tholders\tstore_cpu_pct\tbouncer_cpu_pct\trenew_per_s\trenew_p50_ms\trenew_p99_ms\trenew_p999_ms\trenew_max_ms\tacquire_p99_ms\trelease_p99_ms\tsegment_p99_ms\terrors\tstore_connections\treal_servers\theld_twice\tstall_max_ms\tstall_p50_ms\tstore_away_ms\tback\tall_slots_s\n' >"$RESULTS"

# spawn NAME LOG COMMAND...: COMMAND in the background as the server user,
# its pid (the command's own, not a wrapper's) in $WORK/NAME.pid
spawn() {
	local name=$1 log=$2
	shift 2
	as_pg bash -c 'echo $$ >"$0"; exec "$@"' "$WORK/$name.pid" "$@" >"$log" 2>&1 &
	for _ in $(seq 50); do [ -s "$WORK/$name.pid" ] && break; sleep 0.1; done
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The faults of the failover rows, 5 s into the measured seconds: each
# writes away_ms= (how long there was no store, or no leader) to
# $WORK/failover.txt and what happened to $WORK/failover.log.
failover_crash() {
	local t0
	t0=$(now_ms)
	as_pg pg_ctl -D "$STORE" -m immediate -w stop >/dev/null 2>&1
	as_pg "${on_store[@]}" pg_ctl -D "$STORE" -l "$STORE/server.log" -w -t 60 start >/dev/null 2>&1
	echo "away_ms=$(($(now_ms) - t0))" >"$WORK/failover.txt"
	echo "store crashed and back in $(($(now_ms) - t0)) ms" >"$WORK/failover.log"
}
# the Patroni members' PostgreSQL and REST API ports, etcd's
PAT_PG=(- $((PORT + 10)) $((PORT + 11)))
PAT_REST=(- $((PORT + 12)) $((PORT + 13)))
ETCD_CLIENT=$((PORT + 14))
ETCD_PEER=$((PORT + 15))
PATRONI="host=127.0.0.1,127.0.0.1 port=${PAT_PG[1]},${PAT_PG[2]} dbname=postgres user=$PG_USER target_session_attrs=read-write connect_timeout=2"
http_code() { curl -s -o /dev/null -m 2 -w '%{http_code}' "$@" || true; }
is_primary() { [ "$(http_code "http://127.0.0.1:${PAT_REST[$1]}/primary")" = 200 ]; }
# member $1 is the synchronous standby (Patroni's view)
is_sync() { [ "$(http_code "http://127.0.0.1:${PAT_REST[$1]}/sync")" = 200 ]; }
# the member that leads (1 or 2), asked for up to 10 s, or none
patroni_leader() {
	local i
	for _ in $(seq 10); do
		for i in 1 2; do is_primary $i && { echo $i; return 0; }; done
		sleep 0.5
	done
	return 1
}
# watch_leader OLD T0: poll both members (every 30 ms or so) until the other
# one leads; no leader from the last poll that saw OLD lead (T0 at the
# latest) to the first that saw the other one
watch_leader() {
	local old=$1 t0=$2 new=$((3 - $1)) last t
	last=$t0
	while t=$(now_ms) && [ "$t" -lt $((t0 + 90000)) ]; do
		if is_primary "$new"; then
			t=$(now_ms)
			echo "away_ms=$((t - last))" >"$WORK/failover.txt"
			echo "no leader for $((t - last)) ms; pg$new leads $((t - t0)) ms after the fault" >>"$WORK/failover.log"
			return 0
		fi
		if is_primary "$old"; then last=$(now_ms); fi
		sleep 0.03
	done
	echo "away_ms=none" >"$WORK/failover.txt"
	echo "no leader 90 s after the fault" >>"$WORK/failover.log"
}
failover_switchover() {
	local l t0 post
	l=$(patroni_leader) || { echo "away_ms=none" >"$WORK/failover.txt"; return 0; }
	t0=$(now_ms)
	echo "switchover pg$l -> pg$((3 - l)) (REST API)" >"$WORK/failover.log"
	curl -s -m 60 -X POST -H 'Content-Type: application/json' \
		-d "{\"leader\": \"pg$l\", \"candidate\": \"pg$((3 - l))\"}" \
		"http://127.0.0.1:${PAT_REST[$l]}/switchover" >"$WORK/switchover.out" 2>&1 &
	post=$!
	watch_leader "$l" "$t0"
	wait $post || true
}
failover_kill() {
	local l pm t0 victims
	l=$(patroni_leader) || { echo "away_ms=none" >"$WORK/failover.txt"; return 0; }
	# as a machine that dies: its Patroni, its postmaster and every child
	pm=$(head -1 "$WORK/pg$l/data/postmaster.pid")
	victims="$(cat "$WORK/patroni$l.pid") $pm $(pgrep -P "$pm" | tr '\n' ' ')"
	t0=$(now_ms)
	kill -KILL $victims 2>/dev/null || true
	echo "killed pg$l, the leader ($(echo $victims | wc -w) processes, SIGKILL)" >"$WORK/failover.log"
	watch_leader "$l" "$t0"
}

# BENCH_FLEET_STALL: the whole store (postmaster and children) stopped for
# that long
stall_store() {
	local pm procs
	pm=$(head -1 "$STORE/postmaster.pid")
	procs="$pm $(pgrep -P "$pm" | tr '\n' ' ')"
	kill -STOP $procs 2>/dev/null || true
	sleep "$(awk -v ms="$STALL" 'BEGIN { printf "%.3f", ms / 1000 }')"
	kill -CONT $procs 2>/dev/null || true
	echo "  the store stopped for $STALL ms at $(date -u +%T) (SIGSTOP, $(echo $procs | wc -w) processes)"
}

run() {
	local route=$1 mode=$2 n=$3 conninfo admin=$ADMIN bpid=0 out fail= fault= secs=$SECS spid=$STORE_PID away=- real name ramp=()
	case "$mode" in busy+*) fail=${mode#busy+}; mode=busy ;; esac
	case "$route" in
	direct) conninfo=$DIRECT ;;
	pgbouncer) conninfo=$BOUNCER; bpid=$(cat "$WORK/bouncer.pid") ;;
	# 30 s at least: a failover after a kill takes about Patroni's ttl (8 s)
	patroni)
		conninfo=$PATRONI
		admin=$PATRONI
		secs=$((SECS > 30 ? SECS : 30))
		ramp=(--ramp-ms "${BENCH_FLEET_PATRONI_RAMP_MS:-$((n * 20))}")
		;;
	esac
	name=$route-$mode${fail:++$fail}-$n
	rm -f "$WORK/measuring" "$WORK/failover.txt" "$WORK/failover.log"
	# the previous row's backends gone first (its releases may outlive the
	# simulator, which gives up on them after 30 s): a row that began beside
	# 1,024 of them ran out of connections and never recovered (direct, idle)
	if [ "$route" != patroni ]; then
		for _ in $(seq 600); do
			[ "$(spsql -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()" 2>/dev/null || echo 9999)" -le 10 ] && break
			sleep 0.1
		done
	fi
	fault=
	if [ -n "$fail" ]; then
		# the store's processes change: its CPU is not measured
		spid=0
		fault=failover_$fail
	elif [ -n "$STALL" ] && [ "$route" != patroni ]; then
		fault=stall_store
	fi
	if [ -n "$fault" ]; then
		# 5 s into the measured seconds
		(
			for _ in $(seq 1200); do [ -s "$WORK/measuring" ] && break; sleep 0.1; done
			sleep 5
			"$fault"
		) &
		FAULT_PID=$!
	fi
	out=$("${on_rest[@]}" "$WORK/fleet" --conninfo "$conninfo" --admin "$admin" --sql "$WORK/fleet.sql" --n "$n" \
		--seconds "$secs" --warmup "$WARMUP" --ttl "$TTL" --slot-bits 11 --namespace fleet --prefix "sim-$name" \
		--store-pid "$spid" --bouncer-pid "$bpid" --segments "$SEGS" --restarts "$RESTARTS" $([ "$mode" = idle ] && echo --idle) "${LEAD[@]}" \
		--mark "$WORK/measuring" "${ramp[@]}" 2>"$WORK/fleet-$name.err") || { cat "$WORK/fleet-$name.err" >&2; return 1; }
	[ -z "$fault" ] || wait "$FAULT_PID" || true
	if [ -n "$fail" ]; then
		mode=busy+$fail
		away=$(sed -n 's/^away_ms=//p' "$WORK/failover.txt" 2>/dev/null)
		sed 's/^/  /' "$WORK/failover.log" 2>/dev/null || true
	fi
	# the real servers lease from the single store, not from the Patroni cluster
	if [ "$route" = patroni ]; then real=-; else real=$(real_state); fi
	v() { echo "$out" | sed -n "s/^$1=//p"; }
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$route" "$mode" "$n" \
		"$(v store_cpu_pct)" "$(v bouncer_cpu_pct)" "$(v renew_per_s)" "$(v renew_p50_ms)" "$(v renew_p99_ms)" \
		"$(v renew_p999_ms)" "$(v renew_max_ms)" "$(v acquire_p99_ms)" "$(v release_p99_ms)" "$(v segment_p99_ms)" \
		"$(($(v acquire_errors) + $(v renew_errors) + $(v release_errors) + $(v segment_errors) + $(v connect_errors)))" \
		"$(v store_connections)" "$real" "$(v held_twice)" "$(v stall_max_ms)" "$(v stall_p50_ms)" "$away" \
		"$(if [ "$mode" = idle ]; then echo -; else echo "$(v back)/$n"; fi)" \
		"$(awk -v ms="$(v all_slots_ms)" 'BEGIN { if (ms == "" || ms < 0) print "-"; else printf "%.1f\n", ms / 1000 }')" >>"$RESULTS"
	if [ "$mode" != idle ] && [ "$(v back)" != "$n" ]; then
		echo "  fleet: $((n - $(v back))) of $n busy holders had no window open in the last 2 s ($(v connected) connected; log: $WORK/fleet-$name.err)"
	fi
	[ -z "$fail" ] || echo "  $(v reconnects) new connections, $(v connect_errors) failed; $(v lost_leases) leases lost"
	tail -1 "$RESULTS"
}

# an idle store first: the real servers alone
sleep 3
for route in $ROUTES; do
	case "$route" in direct | pgbouncer) ;; none) continue ;; *) echo "bench: BENCH_FLEET_ROUTES: no route '$route'" >&2; exit 2 ;; esac
	if [ "$route" = pgbouncer ]; then
		[ -n "$PGBOUNCER" ] || { echo "fleet: pgbouncer is not installed: no PgBouncer rows"; break; }
		point_real "$BOUNCER"
		sleep 2
	fi
	[[ " $MODES " != *" busy "* ]] || for n in $SIZES; do run "$route" busy "$n"; done
	[[ " $MODES " != *" idle "* ]] || run "$route" idle "${SIZES##* }"
	if [ "$route" = pgbouncer ] && [ -n "$FAILOVER" ]; then
		run pgbouncer busy+crash "$FAILOVER"
		STORE_PID=$(head -1 "$STORE/postmaster.pid")
	fi
done

# The floor (BENCH_FLEET_FLOOR): what this machine's store spends on the
# fleet's rate of calls when each call is only a wakeup, or only one row's
# update, so that the fleet's rows can be read against what no lease
# protocol of one durable write per renewal can go below.  pgbench, on the
# simulator's CPUs, sends the largest fleet's renewal rate (N servers every
# TTL / 2: 205 a second at 1,024 and 10 s) over PgBouncer's 20 connections
# and over N (as direct servers), each statement as its own transaction
# (extended protocol, as the worker sends):
#   select_1       SELECT 1: a backend woken, a statement parsed and answered
#   update         one row of a plain table of N rows updated by its primary
#                  key (the renewal's UPDATE without the function), committed
#                  synchronously: the floor of one durable write per renewal
#   update_async   the same with synchronous_commit = off (not safe for a
#                  lease: what the WAL flush costs)
#   lease_renew    the renewal as the worker sends it (its statement from
#                  src/slot_lease.c) on N leases of a namespace of its own
# Each row: the store's CPU over BENCH_FLEET_SECONDS, once every connection
# is made and 5 s have passed, and what one call cost it (µs of CPU).
# the store's CPU time in ns: each live process's from the scheduler
# (/proc/PID/schedstat; /proc/PID/stat's ticks are truncated to 10 ms for
# each of its 1,024 backends, see bench/fleet.c), the reaped ones' from the
# postmaster's cutime and cstime
floor_ns() {
	local pm t=0 p a tick
	pm=$(head -1 "$STORE/postmaster.pid")
	tick=$((1000000000 / $(getconf CLK_TCK)))
	for p in $pm $(pgrep -P "$pm"); do
		{ read -r a _ <"/proc/$p/schedstat"; } 2>/dev/null && t=$((t + a))
	done
	read -r -a a <"/proc/$pm/stat"
	echo $((t + (a[15] + a[16]) * tick))
}
# the store's pgbench connections, and stopping a floor row's pgbench
# until none is left (so that the next row counts only its own)
floor_conns() { spsql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'"; }
floor_stop() {
	pkill -INT -f -- "$WORK/floor-$1.sql" 2>/dev/null || true
	wait "$2" 2>/dev/null || true
	for _ in $(seq 600); do
		[ "$(floor_conns)" -eq 0 ] && break
		sleep 0.1
	done
}
floor_row() {
	local name=$1 conns=$2 rate=$3 opts=$4 pid t0 c0 t1 c1 cpu
	as_pg bash -c "ulimit -n 8192 && PGOPTIONS='$opts' exec ${on_rest[*]} pgbench -n -M extended -c $conns -j 1 -R $rate -T 900 \
		-D n=$FLOOR_N -D ttl='$TTL s' -D tok=$FLOOR_TOKEN -D ns=floor -D we=0 -f '$WORK/floor-$name.sql' \
		-h 127.0.0.1 -p $PORT postgres" >"$WORK/floor-$name-$conns.log" 2>&1 &
	pid=$!
	pids_to_stop+=("$pid")
	local up=0
	for _ in $(seq 1200); do
		kill -0 "$pid" 2>/dev/null || break
		[ "$(floor_conns)" -ge "$conns" ] && { up=1; break; }
		sleep 0.1
	done
	if [ "$up" = 0 ]; then
		# pgbench ended or never made every connection: no row to read
		echo "fleet: the floor's $name over $conns connections did not connect (see $WORK/floor-$name-$conns.log)" >&2
		floor_stop "$name" "$pid"
		printf '%s\t%s\t%s\t-\t-\n' "$name" "$conns" "$rate" >>"$FLOOR_RESULTS"
		return 0
	fi
	sleep 5
	t0=$(date +%s%N)
	c0=$(floor_ns)
	sleep "$SECS"
	t1=$(date +%s%N)
	c1=$(floor_ns)
	floor_stop "$name" "$pid"
	cpu=$(awk -v c="$((c1 - c0))" -v ns="$((t1 - t0))" 'BEGIN { printf "%.1f", 100 * c / ns }')
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$conns" "$rate" "$cpu" \
		"$(awk -v p="$cpu" -v r="$rate" 'BEGIN { printf "%.0f", p / 100 * 1e6 / r }')" >>"$FLOOR_RESULTS"
	tail -1 "$FLOOR_RESULTS"
}
floor_rows() {
	local n rate conns name
	n=$(printf '%s\n' $SIZES | sort -n | tail -1)
	FLOOR_N=$n
	FLOOR_TOKEN=00000000-0000-4000-8000-00000000f100
	rate=$(awk -v n="$n" -v ttl="$TTL" 'BEGIN { printf "%.1f", n / (ttl / 2) }')
	echo
	echo "== the floor: $rate calls a second (1 every TTL / 2 from each of $n servers) that do less than a renewal"
	# a table shaped as cosid.lease; N leases of a namespace of the floor's
	# own, their instance ids the slot numbers and one token for all (set as
	# the store's superuser), so that a pgbench script can renew any of them
	spsql -c 'CREATE TABLE floor_lease (slot integer PRIMARY KEY, expires_at timestamptz NOT NULL,
			renewed_at timestamptz, window_end bigint NOT NULL DEFAULT 0)' \
		-c "INSERT INTO floor_lease SELECT g, now(), now() FROM generate_series(0, $n - 1) g" \
		-c "SELECT count(*) FROM generate_series(0, $n - 1) g, cosid.lease_acquire('floor', 'floor-' || g, 11, '$TTL s')" \
		-c "UPDATE cosid.lease SET instance = slot::text, token = '$FLOOR_TOKEN' WHERE namespace = 'floor'" \
		-c 'VACUUM ANALYZE floor_lease' -c 'VACUUM ANALYZE cosid.lease' >/dev/null || return 1
	echo 'SELECT 1;' >"$WORK/floor-select_1.sql"
	printf '%s\n' '\set s random(0, :n - 1)' \
		"UPDATE floor_lease SET expires_at = pg_catalog.clock_timestamp() + :ttl::pg_catalog.interval, renewed_at = pg_catalog.clock_timestamp() WHERE slot = :s;" \
		>"$WORK/floor-update.sql"
	cp "$WORK/floor-update.sql" "$WORK/floor-update_async.sql"
	# the worker's renewal, its parameters pgbench's variables
	{
		echo '\set s random(0, :n - 1)'
		sed -n '2{s/\$1/:ns/; s/\$2/:s/; s/\$3/:s/; s/\$4/:tok/; s/\$5/:we/; s/\$6/:ttl/; s/$/;/; p}' "$WORK/fleet.sql"
	} >"$WORK/floor-lease_renew.sql"
	grep -q 'cosid.lease_renew(:ns' "$WORK/floor-lease_renew.sql" ||
		{ echo "fleet: the renewal is not the second statement of bench/fleet_sql.py's output: no floor rows" >&2; return 1; }
	[ "$(id -u)" -ne 0 ] || chown postgres "$WORK"/floor-*.sql
	FLOOR_RESULTS=$WORK/fleet-floor.tsv
	printf 'statement\tconnections\tcalls_per_s\tstore_cpu_pct\tcpu_us_per_call\n' >"$FLOOR_RESULTS"
	for conns in 20 "$n"; do
		for name in select_1 update update_async lease_renew; do
			floor_row "$name" "$conns" "$rate" "$([ "$name" = update_async ] && echo '-c synchronous_commit=off')"
		done
	done
}
FLOOR_RESULTS=
[ "${BENCH_FLEET_FLOOR:-1}" = 0 ] || floor_rows || true

# The store a Patroni cluster (docs/operations.md's recipe, with
# test/t/076_patroni.pl's settings): a switchover, then a hard kill of the
# leader.
patroni_yaml() {
	local i=$1
	cat <<EOF
scope: fleet
name: pg$i
restapi:
  listen: 127.0.0.1:${PAT_REST[$i]}
  connect_address: 127.0.0.1:${PAT_REST[$i]}
etcd3:
  hosts: 127.0.0.1:$ETCD_CLIENT
bootstrap:
  dcs:
    ttl: 8
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        shared_preload_libraries: cosid
        cosid.slot: 1
        synchronous_commit: 'on'
        wal_log_hints: 'on'
        max_connections: 1200
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${PAT_PG[$i]}
  connect_address: 127.0.0.1:${PAT_PG[$i]}
  data_dir: $WORK/pg$i/data
  basebackup:
    - checkpoint: fast
  bin_dir: $PGBIN
  pgpass: $WORK/pg$i/pgpass
  authentication:
    superuser:
      username: $PG_USER
    replication:
      username: replicator
    rewind:
      username: $PG_USER
  parameters:
    unix_socket_directories: '$WORK/pg$i'
    logging_collector: 'on'
    log_directory: '$WORK/pg$i'
    log_filename: 'postgresql.log'
    log_min_messages: warning
EOF
}
poll_until() {
	local secs=$1
	shift
	for _ in $(seq $((secs * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}
etcd_up() { [ "$(http_code "http://127.0.0.1:$ETCD_CLIENT/health")" = 200 ]; }
patroni_rows() {
	local n=$1 i l
	echo "  (Patroni store: pg1 on port ${PAT_PG[1]}, pg2 on ${PAT_PG[2]}, etcd on $ETCD_CLIENT)"
	spawn etcd "$WORK/etcd.log" etcd --name e1 --data-dir "$WORK/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD_CLIENT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
		--initial-cluster "e1=http://127.0.0.1:$ETCD_PEER"
	poll_until 30 etcd_up || { echo "fleet: etcd did not start (see $WORK/etcd.log): no Patroni rows" >&2; return 1; }
	for i in 1 2; do
		mkdir -p "$WORK/pg$i"
		patroni_yaml $i >"$WORK/pg$i/patroni.yml"
		[ "$(id -u)" -ne 0 ] || chown -R postgres "$WORK/pg$i"
	done
	spawn patroni1 "$WORK/pg1/patroni.log" patroni "$WORK/pg1/patroni.yml"
	poll_until 90 is_primary 1 || { echo "fleet: pg1 does not lead (see $WORK/pg1/patroni.log): no Patroni rows" >&2; return 1; }
	as_pg psql -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${PAT_PG[1]}" -d postgres -c 'CREATE EXTENSION cosid'
	spawn patroni2 "$WORK/pg2/patroni.log" patroni "$WORK/pg2/patroni.yml"
	poll_until 90 is_sync 2 || { echo "fleet: pg2 is not pg1's synchronous standby: no Patroni rows" >&2; return 1; }
	run patroni busy+switchover "$n"
	# the old leader back, as the synchronous standby, before the kill
	l=$(patroni_leader) && poll_until 90 is_sync $((3 - l)) ||
		{ echo "fleet: no synchronous standby after the switchover: no kill row" >&2; return 1; }
	run patroni busy+kill "$n"
}
if [ -n "$PATRONI_N" ]; then
	if ! command -v patroni >/dev/null || ! command -v etcd >/dev/null || ! command -v curl >/dev/null; then
		echo "fleet: patroni, etcd or curl is not installed: no Patroni rows (BENCH_FLEET_PATRONI)"
	else
		patroni_rows "$PATRONI_N" || true
	fi
fi

echo
column -t -s $'\t' "$RESULTS"
echo
awk -F'\t' 'NR > 1 && $3 == 1024 && $2 == "busy" {
	printf "target: 1,024 busy holders %s: store CPU %s%% of one core (<= 10%%): %s; renewal p99 %s ms (<= 10 ms): %s\n",
		$1, $4, ($4 <= 10 ? "OK" : "MISSED"), $8, ($8 <= 10 ? "OK" : "MISSED") }' "$RESULTS"
if [ -n "$FLOOR_RESULTS" ] && [ -s "$FLOOR_RESULTS" ]; then
	echo
	column -t -s $'\t' "$FLOOR_RESULTS"
	awk -F'\t' 'NR > 1 && $1 == "update" {
		printf "floor: one synchronous UPDATE a renewal, over %s connections, takes %s%% of one core on this machine\n", $2, $4 }' "$FLOOR_RESULTS"
	mkdir -p "$REPO/tmp/bench" 2>/dev/null && cp "$FLOOR_RESULTS" "$REPO/tmp/bench/fleet-$PG_VERSION-floor.tsv" &&
		echo "table: tmp/bench/fleet-$PG_VERSION-floor.tsv"
fi

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
