#!/usr/bin/env bash
# make bench's Citus row (bench/run.sh runs it last; it also runs alone):
# inserts into distributed tables whose key is bigserial (Citus's own
# sequence handling), uuid v4 (gen_random_uuid()), uuid v7 (gen_uuidv7()) or
# cosid (cosid_next), side by side, on a coordinator and two workers of this
# machine (slots 0, 1, 2), with pgbench against the coordinator:
#
#   router     one-row INSERTs, 2 clients: the coordinator evaluates the
#              DEFAULT (it routes by the id, the distribution column)
#   select     INSERT INTO t (k, v) SELECT k, v FROM src, 1 client: t is
#              distributed by k, colocated with src (10,000 rows).  Citus
#              never pushes it down verbatim with a volatile DEFAULT: with
#              cosid_next and the uuid functions it plans "repartition", the
#              rows stay on their worker and it evaluates the DEFAULT (cosid:
#              the worker's own slot); with bigserial "pull to coordinator":
#              every row goes through the coordinator, which calls nextval
#
# Every table is emptied before each run; each run is BENCH_CITUS_SECONDS
# (5) long, 3 interleaved runs of each, median.  The ratios are against
# bigserial.  Skipped, with the reason, when Citus is not installed in this
# PostgreSQL (scripts/pg.sh builds it from the vendored tarball) or the
# server is older than 16.
#
#   BENCH_CITUS_SECONDS=5  length of each pgbench run
#   BENCH_CITUS_PORT=54345 the coordinator's port (the workers: the next two)
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
[ -n "${PGBIN:-}" ] || use_pg "$PG_VERSION" || exit 1

SECONDS_RUN=${BENCH_CITUS_SECONDS:-5}
PORT=${BENCH_CITUS_PORT:-54345}
for v in SECONDS_RUN PORT; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "bench: BENCH_CITUS_${v#*_} must be a positive integer, not '${!v}'" >&2
		exit 2
	fi
done

echo
echo "== Citus: inserts into distributed tables, coordinator + 2 workers on this machine"
major=$("$PG_CONFIG" --version | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')
if [ "$major" -lt 16 ]; then
	echo "   skipped: Citus builds against PostgreSQL 16 and later, this is $major (make bench PG=18)"
	exit 0
fi
if [ ! -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ]; then
	echo "   skipped: Citus is not installed in PostgreSQL $major ($("$PG_CONFIG" --pkglibdir)/citus.so is missing);"
	echo "   scripts/pg.sh builds it from the vendored tarball citus-*.tar.gz in ../shared/vendor (or \$COSID_VENDOR)"
	exit 0
fi

WORK=$(pg_workdir bench-citus)
NODES=(coord w1 w2)
cleanup() {
	local rc=$? n
	for n in "${NODES[@]}"; do cluster_stop "$WORK/$n"; done
	if [ "$rc" -ne 0 ]; then
		for n in "${NODES[@]}"; do
			[ -f "$WORK/$n/server.log" ] || continue
			echo "bench: failed; the end of $n's server log:" >&2
			tail -n 15 "$WORK/$n/server.log" >&2
		done
	fi
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Citus reaches the nodes over TCP on 127.0.0.1 (initdb -A trust covers it)
for i in 0 1 2; do
	cluster_start "$WORK/${NODES[$i]}" $((PORT + i)) \
		"shared_preload_libraries = 'citus,cosid'" \
		"cosid.slot = $i" \
		"listen_addresses = '127.0.0.1'" \
		"max_prepared_transactions = 100" \
		"jit = off" \
		"autovacuum = off" \
		"shared_buffers = '256MB'" \
		"citus.shard_count = 8"
	cluster_psql "$WORK/${NODES[$i]}" $((PORT + i)) -d postgres -c "CREATE DATABASE bench"
	cluster_psql "$WORK/${NODES[$i]}" $((PORT + i)) -d bench -c "CREATE EXTENSION citus" >/dev/null
done
# cosid and its generator on the coordinator only: Citus brings both to the
# workers
coord() { cluster_psql "$WORK/coord" "$PORT" -d bench -At "$@"; }
coord -c "CREATE EXTENSION cosid" -c "SELECT citus_set_coordinator_host('127.0.0.1', $PORT)" \
	-c "SELECT citus_add_node('127.0.0.1', $((PORT + 1)))" \
	-c "SELECT citus_add_node('127.0.0.1', $((PORT + 2)))" \
	-c "SELECT cosid_define('bench_snow', '{\"strategy\": \"snowflake\"}')" >/dev/null
versions=$(coord -c "SELECT 'Citus ' || extversion FROM pg_extension WHERE extname = 'citus'")

# name, type, DEFAULT
KEYS=("bigserial|bigserial|" "uuid v4|uuid|gen_random_uuid()" "uuid v7|uuid|gen_uuidv7()"
	"cosid|bigint|cosid_next('bench_snow')")
col() {
	local type=${1#*|}
	type=${type%%|*}
	local def=${1##*|}
	echo "id $type NOT NULL${def:+ DEFAULT $def}"
}
coord -c "CREATE TABLE src (k int PRIMARY KEY, v int)" -c "SELECT create_distributed_table('src', 'k')" \
	-c "INSERT INTO src SELECT g, g FROM generate_series(1, 10000) g" >/dev/null
for i in 0 1 2 3; do
	coord -c "CREATE TABLE r$i ($(col "${KEYS[$i]}") PRIMARY KEY, v int)" \
		-c "SELECT create_distributed_table('r$i', 'id')" \
		-c "CREATE TABLE p$i (k int NOT NULL, $(col "${KEYS[$i]}"), v int, PRIMARY KEY (k, id))" \
		-c "SELECT create_distributed_table('p$i', 'k', colocate_with => 'src')" >/dev/null
done
# Citus's plan of the INSERT ... SELECT for each key: a volatile DEFAULT
# keeps it from being pushed down verbatim; with cosid_next or a uuid
# function it is "repartition" (each worker runs the SELECT on its shards of
# src and inserts the rows into t's shards, colocated, so on the same worker,
# evaluating the DEFAULT there); with bigserial "pull to coordinator" (the
# rows go through the coordinator, which calls nextval for each).
method=()
for i in 0 1 2 3; do
	plan=$(coord -c "EXPLAIN (COSTS OFF) INSERT INTO p$i (k, v) SELECT k, v FROM src")
	m=$(echo "$plan" | sed -nE 's/.*INSERT\/SELECT method: (.*)/\1/p')
	method[$i]=${m:-pushdown}
done

declare -A rate
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: Citus, pgbench, ${SECONDS_RUN} s per run, interleaved ..." >&2
for _ in 1 2 3; do
	for i in 0 1 2 3; do
		for kind in r p; do
			coord -c "TRUNCATE ${kind}$i" >/dev/null
			if [ "$kind" = r ]; then
				echo "INSERT INTO r$i (v) VALUES (1);" >"$WORK/$kind$i.pgb"
				clients=2
			else
				echo "INSERT INTO p$i (k, v) SELECT k, v FROM src;" >"$WORK/$kind$i.pgb"
				clients=1
			fi
			[ "$(id -u)" -ne 0 ] || chown postgres "$WORK/$kind$i.pgb"
			out=$(as_pg pgbench -n -c $clients -j $clients -T "$SECONDS_RUN" -f "$WORK/$kind$i.pgb" \
				-h 127.0.0.1 -p "$PORT" bench 2>&1) || { echo "$out" >&2; exit 1; }
			tps=$(echo "$out" | sed -nE 's/^tps = ([0-9.]+).*/\1/p')
			[ -n "$tps" ] || { echo "bench: no tps in pgbench's output:" >&2; echo "$out" >&2; exit 1; }
			[ "$kind" = r ] || tps=$(awk -v t="$tps" 'BEGIN { printf "%.0f", t * 10000 }')
			rate[$kind$i]="${rate[$kind$i]:-} ${tps%.*}"
		done
	done
done
# which node made the cosid ids of the last runs (the slot in each id)
made_by=$(coord -c "SELECT string_agg(s, ', ') FROM (
	SELECT format('%s: slot %s', t, string_agg(DISTINCT node::text, '/' ORDER BY node::text)) AS s
	FROM (SELECT 'router' AS t, id FROM r3 UNION ALL SELECT 'select', id FROM p3) x, cosid_unpack('bench_snow', x.id) u
	GROUP BY t ORDER BY t) y")

median() { printf '%s\n' $1 | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "   $versions; ${SECONDS_RUN} s per run, median of 3 interleaved runs; every table emptied before each run;"
echo "   load average before: $LOAD0, after: $(cut -d' ' -f1-3 /proc/loadavg) (three servers share this machine's $(nproc) CPUs)"
echo "   router: pgbench -c 2, INSERT INTO t (v) VALUES (1) (the coordinator evaluates the DEFAULT), rows/s = tps"
echo "   select: pgbench -c 1, INSERT INTO t (k, v) SELECT k, v FROM src (10,000 rows of a colocated table),"
echo "   rows/s = tps x 10,000; Citus's INSERT/SELECT method in brackets (where the DEFAULT is evaluated:"
echo "   repartition: on the workers, pull to coordinator: on the coordinator).  cosid ids made by: $made_by"
printf '   %-10s %14s %8s %16s %8s  %-21s %s\n' "key" "router rows/s" "x serial" "select rows/s" "x serial" "[method]" "runs (router; select)"
for i in 0 1 2 3; do
	name=${KEYS[$i]%%|*}
	r=$(median "${rate[r$i]}")
	p=$(median "${rate[p$i]}")
	printf '   %-10s %14s %8s %16s %8s  %-21s%s;%s\n' "$name" "$r" \
		"$(awk -v a="$r" -v b="$(median "${rate[r0]}")" 'BEGIN { printf "%.2f", a / b }')" "$p" \
		"$(awk -v a="$p" -v b="$(median "${rate[p0]}")" 'BEGIN { printf "%.2f", a / b }')" \
		"[${method[$i]}]" "${rate[r$i]}" "${rate[p$i]}"
done
