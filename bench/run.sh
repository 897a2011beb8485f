#!/usr/bin/env bash
# make bench: how fast cosid's generators are, and how big their primary keys
# get, on a throwaway server with cosid preloaded.
#
#   BENCH_N=1000000     calls per timed query
#   BENCH_ROUNDS=7      measured rounds (plus one warm-up round, discarded)
#   BENCH_ROWS=1000000  rows per primary-key table
#   BENCH_PORT=54339    the server's port (it listens on a socket only)
#   BENCH_RAW=1         also print every round's time of every query
#
# What is measured is listed in bench/candidates.sql; objects the candidates
# need are created by bench/setup.sql (optional); the machinery is in
# bench/lib.sql.  Targets are reported OK or MISSED and never fail the run;
# a server or query failure does.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

N=${BENCH_N:-1000000}
ROUNDS=${BENCH_ROUNDS:-7}
ROWS=${BENCH_ROWS:-1000000}
PORT=${BENCH_PORT:-54339}
BENCH=$REPO/bench

for v in N ROUNDS ROWS PORT; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "bench: BENCH_$v must be a positive integer, not '${!v}'" >&2
		exit 2
	fi
done

WORK=$(pg_workdir bench)
DATA=$WORK/data
cleanup() {
	local rc=$?
	cluster_stop "$DATA"
	if [ "$rc" -ne 0 ] && [ -f "$DATA/server.log" ]; then
		echo "bench: failed; the end of the server log:" >&2
		tail -n 20 "$DATA/server.log" >&2
	fi
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The SQL files are read by psql, which runs as the server user: give it
# copies it can surely read.
mkdir "$WORK/sql"
cp "$BENCH"/*.sql "$WORK/sql/"
[ "$(id -u)" -ne 0 ] || chown -R postgres:postgres "$WORK/sql"

# No JIT, parallelism or autovacuum to vary the timings; work_mem large
# enough that generate_series()'s tuplestore stays in memory, and
# shared_buffers large enough for every primary-key table.
cluster_start "$DATA" "$PORT" \
	"jit = off" \
	"max_parallel_workers_per_gather = 0" \
	"autovacuum = off" \
	"work_mem = '1GB'" \
	"shared_buffers = '512MB'"

bench_psql() { cluster_psql "$DATA" "$PORT" -d bench -At "$@"; }

cluster_psql "$DATA" "$PORT" -d postgres -c "CREATE DATABASE bench"
setup=()
[ ! -f "$WORK/sql/setup.sql" ] || setup=(-f "$WORK/sql/setup.sql")
bench_psql -c "CREATE EXTENSION cosid" -f "$WORK/sql/lib.sql" "${setup[@]}" \
	-f "$WORK/sql/candidates.sql"

versions=$(bench_psql -F ', ' -c "SELECT 'PostgreSQL ' || current_setting('server_version'),
	'cosid ' || extversion FROM pg_extension WHERE extname = 'cosid'")
echo "cosid benchmark: $versions, $(nproc) CPUs"
echo "per-call: N = $N, $ROUNDS rounds after 1 warm-up; index size: $ROWS rows"

# --- per-call cost: every round in one session, so all run warm ---

echo "bench: per-call cost, round 0 (warm-up) to $ROUNDS ..." >&2
for r in $(seq 0 "$ROUNDS"); do
	echo "CALL bench_round($r, $N);"
	echo "\\warn bench: round $r done"
done | bench_psql -f -

# --- primary-key index size ---

echo "bench: primary keys, $ROWS rows each ..." >&2
bench_psql -c "CALL bench_pk_run($ROWS)"

# --- throughput of bulk calls ---

echo "bench: bulk-call throughput ..." >&2
bench_psql -c "CALL bench_rate_run(3)"

echo
echo "== per-call cost: SELECT count(f) FROM generate_series(1, $N) g"
echo "   (median of $ROUNDS rounds; per-call = (median - baseline median) / N)"
bench_psql -c "SELECT * FROM bench_call_report($N)"
if [ "${BENCH_RAW:-0}" = 1 ]; then
	echo
	echo "== every round, ms (round 0 is the warm-up)"
	bench_psql -F '	' -c "SELECT t.round, c.label, round(t.ms::numeric, 1)
		FROM bench_timing t JOIN bench_call c ON c.label = t.label
		ORDER BY c.ord, t.round"
fi

echo
echo "== primary-key index size, $ROWS rows"
bench_psql -c "SELECT * FROM bench_pk_report()"

# --- pgbench: 2 clients inserting rows, bigserial against cosid_next ---

PGBENCH_SECONDS=${BENCH_PGBENCH_SECONDS:-10}
bench_psql -c "CREATE TABLE pgb_serial (id bigserial PRIMARY KEY, v int)" \
	-c "CREATE TABLE pgb_snow (id bigint PRIMARY KEY DEFAULT cosid_next('bench_snow'), v int)" \
	-c "CREATE TABLE pgb_seg (id bigint PRIMARY KEY DEFAULT cosid_next('bench_seg'), v int)"
declare -A tps
echo "bench: pgbench, 2 clients, ${PGBENCH_SECONDS} s per run, interleaved ..." >&2
for round in 1 2 3; do
	for t in pgb_serial pgb_seg pgb_snow; do
		echo "INSERT INTO $t (v) VALUES (1);" >"$WORK/sql/$t.pgb"
		[ "$(id -u)" -ne 0 ] || chown postgres "$WORK/sql/$t.pgb"
		out=$(as_pg pgbench -n -c 2 -j 2 -T "$PGBENCH_SECONDS" -f "$WORK/sql/$t.pgb" \
			-h "$DATA" -p "$PORT" bench 2>&1) || { echo "$out" >&2; exit 1; }
		tps[$t]="${tps[$t]:-} $(echo "$out" | sed -nE 's/^tps = ([0-9.]+).*/\1/p')"
	done
done
median() { printf '%s\n' $1 | sort -g | sed -n 2p; }

echo
echo "== throughput of bulk calls (median of 3)"
bench_psql -c "SELECT * FROM bench_rate_report()"

echo
echo "== pgbench: 2 clients, one-row INSERTs, ${PGBENCH_SECONDS} s, median tps of 3 interleaved runs"
for t in pgb_serial pgb_seg pgb_snow; do
	printf '%-12s %10s tps   (runs:%s)\n' "$t" "$(median "${tps[$t]}")" "${tps[$t]}"
done

echo
echo "== TARGETS"
bench_psql -c "SELECT * FROM bench_call_targets($N)" -c "SELECT * FROM bench_pk_targets($ROWS)"
for t in pgb_seg pgb_snow; do
	awk -v t="$t" -v a="$(median "${tps[$t]}")" -v b="$(median "${tps[pgb_serial]}")" 'BEGIN {
		r = a / b;
		printf "pgbench %s tps / bigserial tps = %.3f (target >= 0.95) %s\n", t, r, (r >= 0.95 ? "OK" : "MISSED") }'
done
