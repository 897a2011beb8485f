#!/usr/bin/env bash
# make bench: how fast cosid's generators are, and how big their primary keys
# get, on a throwaway server with cosid preloaded.  The server is PostgreSQL
# $PG (make bench PG=18), by default the first of COSID_PG_VERSIONS
# (scripts/lib.sh); candidates that need a newer server than that (uuidv7()
# needs 18) are skipped.
#
#   BENCH_N=1000000     calls per timed query
#   BENCH_ROUNDS=7      measured rounds (plus one warm-up round, discarded)
#   BENCH_ROWS=1000000  rows per primary-key table
#   BENCH_PORT=54339    the server's port (it listens on a socket only)
#   BENCH_RAW=1         also print every round's time of every query
#   BENCH_PGBENCH_SECONDS=10  length of each pgbench INSERT run
#   BENCH_PAIR_TX=100   transactions of 200,000 ids per run of one backend
#                       against two (who share them)
#   BENCH_CHART=path    also copy the chart (SVG) there; BENCH_CHART=1 copies
#                       it to bench/chart-<major version>.svg, the one docs/benchmarks.md
#                       shows.  Every run leaves it in tmp/bench/ too.
#   BENCH_FLEET=0       leaves out the fleet rows (bench/fleet.sh: N servers
#                       leasing slots from one store, direct and through
#                       PgBouncer, about 4 minutes; its BENCH_FLEET_* there)
#   BENCH_MANY=0        leaves out the many-generators rows (bench/many.sh:
#                       define, first call and hot call with 1,000 to 100,000
#                       generators against as many sequences, one database and
#                       spread over 100, each on a server of its own; its
#                       BENCH_MANY_* there, e.g. BENCH_MANY_SIZES="1000 10000
#                       100000", BENCH_MANY_KINDS="snowflake segment",
#                       BENCH_MANY_LAYOUTS="1 100"; it also runs alone:
#                       PG=15 bash bench/many.sh.  On 1.4's code before issue
#                       29's rewrite 100,000 time-based generators take hours
#                       to define: BENCH_MANY_SIZES="1000 10000" there)
#   BENCH_CITUS_SECONDS=5, BENCH_CITUS_PORT=54345  the Citus row
#                       (bench/citus.sh: distributed inserts keyed by
#                       bigserial, uuid v4, uuid v7 and cosid on a coordinator
#                       and two workers; skipped, saying why, without Citus)
#
# What is measured is listed in bench/candidates.sql; objects the candidates
# need are created by bench/setup.sql (optional); the machinery is in
# bench/lib.sql, the chart is drawn by gnuplot with bench/chart.gp (gnuplot-nox
# is installed with apt when missing and we are root).  Targets are reported
# OK or MISSED and never fail the run; a server or query failure does.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
[ -n "${PGBIN:-}" ] || use_pg "$PG_VERSION" || exit 1
T0=$(date +%s)

N=${BENCH_N:-1000000}
ROUNDS=${BENCH_ROUNDS:-7}
ROWS=${BENCH_ROWS:-1000000}
PORT=${BENCH_PORT:-54339}
BENCH=$REPO/bench

PAIR_TX=${BENCH_PAIR_TX:-100}
for v in N ROUNDS ROWS PORT PAIR_TX; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "bench: BENCH_$v must be a positive integer, not '${!v}'" >&2
		exit 2
	fi
done

case "${BENCH_CHART:-}" in
'') CHART_TO= ;;
1) CHART_TO=$BENCH/chart-$PG_VERSION.svg ;;
*) CHART_TO=$BENCH_CHART ;;
esac

# gnuplot draws the chart: Debian's gnuplot-nox, installed if missing (as
# root); without it the run goes on, with no chart.
have_gnuplot() {
	command -v gnuplot >/dev/null && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "bench: gnuplot is missing (sudo apt-get install gnuplot-nox): no chart" >&2
		return 1
	fi
	echo "bench: installing gnuplot-nox (apt) for the chart" >&2
	local apt=(apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends gnuplot-nox)
	if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" >/dev/null 2>&1; then
		apt-get -o DPkg::Lock::Timeout=120 update -qq >/dev/null 2>&1 || true
		DEBIAN_FRONTEND=noninteractive "${apt[@]}" >/dev/null || true
	fi
	command -v gnuplot >/dev/null && return 0
	echo "bench: could not install gnuplot-nox: no chart" >&2
	return 1
}
GNUPLOT=0
! have_gnuplot || GNUPLOT=1
if [ -n "$CHART_TO" ] && [ "$GNUPLOT" = 0 ]; then
	echo "bench: BENCH_CHART is set but gnuplot is missing" >&2
	exit 1
fi

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
	-f "$WORK/sql/candidates.sql" -c "CALL bench_prune()" >/dev/null

versions=$(bench_psql -F ', ' -c "SELECT 'PostgreSQL ' || current_setting('server_version'),
	'cosid ' || extversion FROM pg_extension WHERE extname = 'cosid'")
server_version=$(bench_psql -c "SHOW server_version")
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
machine="$(nproc) CPUs (nproc), ${cpu:-unknown CPU}"
echo "cosid benchmark: $versions; $machine; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "per-call: N = $N, $ROUNDS rounds after 1 warm-up; index size: $ROWS rows; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_psql -c "SELECT * FROM bench_skipped_report()"
# Without OpenSSL pg_strong_random() opens and reads /dev/urandom on every
# call: gen_random_uuid() and uuidv7() then cost several times what they do
# in a packaged server, and ratios against them flatter cosid.
ssl_note=
if [ -z "$(bench_psql -c "SHOW ssl_library")" ]; then
	ssl_note="server built without OpenSSL: gen_random_uuid() and uuidv7() read /dev/urandom on every call"
	echo "NOTE: this $ssl_note, which makes them"
	echo "several times slower than in a packaged server (built with OpenSSL); ratios against them flatter cosid."
fi

# --- per-call cost: every round in one session, so all run warm ---

echo "bench: per-call cost, round 0 (warm-up) to $ROUNDS ..." >&2
for r in $(seq 0 "$ROUNDS"); do
	echo "CALL bench_round($r, $N);"
	echo "\\warn bench: round $r done"
done | bench_psql -f -

# --- primary-key index size ---

echo "bench: primary keys, $ROWS rows each ..." >&2
bench_psql -c "CALL bench_pk_run($ROWS)"

# --- throughput of one backend ---

echo "bench: throughput of one backend ..." >&2
bench_psql -c "CALL bench_rate_run(3)"
# The streaming form must stream: a ProjectSet, no Function Scan (which
# would materialize the rows before the first id).
stream_plan=$(bench_psql -c "EXPLAIN (COSTS OFF) $(bench_psql -c \
	"SELECT format(expr, 1000) FROM bench_rate WHERE label = 'cosid_next, streaming'")" |
	sed -E 's/^[ ->]*//; s/ on .*//' | paste -sd '<')
if [[ $stream_plan == *ProjectSet* && $stream_plan != *"Function Scan"* ]]; then
	stream_note="it streams (plan: $stream_plan; no Function Scan, no tuplestore)"
else
	stream_note="WARNING: it does not stream (plan: $stream_plan)"
fi

# --- two backends on one generator: pgbench, -c 1 against -c 2 ---
#
# Besides the rate, how much CPU the backends got: the postmaster's
# cutime + cstime (/proc/PID/stat) grows by the CPU time of every backend it
# reaps, so its growth over a run is what that run's backends used.  On a
# machine shared with other work two backends may get less than two CPUs;
# ids per CPU-second tells that apart from contention on the generator.

PAIR_IDS=200000
PAIR_TX=$(((PAIR_TX + 1) / 2 * 2)) # even: two clients share them
echo "SELECT count(cosid_next('bench_wide')) FROM (SELECT generate_series(1, $PAIR_IDS)) g;" >"$WORK/sql/pair.pgb"
[ "$(id -u)" -ne 0 ] || chown postgres "$WORK/sql/pair.pgb"
seq_waits() { bench_psql -c "SELECT seq_waits FROM cosid.generator_stats WHERE name = 'bench_wide'"; }
PM_PID=$(head -n1 "$DATA/postmaster.pid")
TCK=$(getconf CLK_TCK)
reaped_ticks() { awk '{ print $16 + $17 }' "/proc/$PM_PID/stat"; }
declare -A pair_rate pair_cpus pair_eff
echo "bench: two backends on one generator, pgbench, $PAIR_TX transactions per run ..." >&2
waits0=$(seq_waits)
for round in 0 1 2 3; do
	for c in 1 2; do
		t0=$(reaped_ticks)
		out=$(as_pg pgbench -n -c "$c" -j "$c" -t $((PAIR_TX / c)) -f "$WORK/sql/pair.pgb" \
			-h "$DATA" -p "$PORT" bench 2>&1) || { echo "$out" >&2; exit 1; }
		sleep 0.3 # until the postmaster has reaped them
		t1=$(reaped_ticks)
		tps_c=$(echo "$out" | sed -nE 's/^tps = ([0-9.]+).*/\1/p')
		[ -n "$tps_c" ] || { echo "bench: no tps in pgbench's output:" >&2; echo "$out" >&2; exit 1; }
		[ "$round" != 0 ] || continue
		read -r rate cpus eff < <(awk -v tps="$tps_c" -v n="$PAIR_IDS" -v tx="$PAIR_TX" \
			-v ticks=$((t1 - t0)) -v tck="$TCK" 'BEGIN {
				elapsed = tx / tps; cpu = ticks / tck;
				printf "%.0f %.2f %.0f\n", tps * n, cpu / elapsed, (cpu > 0 ? tx * n / cpu : 0) }')
		pair_rate[$c]="${pair_rate[$c]:-} $rate"
		pair_cpus[$c]="${pair_cpus[$c]:-} $cpus"
		pair_eff[$c]="${pair_eff[$c]:-} $eff"
	done
done
waits1=$(seq_waits)

echo
echo "== per-call cost: SELECT count(f) FROM generate_series(1, $N) g"
echo "   (median of $ROUNDS rounds; per-call = (median - baseline median) / N; the snowflake generator is"
echo "   bench_wide, SNOWFLAKE_MS with 15 sequence bits, so that its 4,096-a-millisecond cap is not what is measured)"
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
		tps[$t]="${tps[$t]:-} $(echo "$out" | sed -nE 's/^tps = ([0-9]+).*/\1/p')"
	done
done
thousands() { echo "$1" | sed -E ':a; s/([0-9])([0-9]{3})($|,)/\1,\2\3/; ta'; }
median() { printf '%s\n' $1 | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo
echo "== throughput of one backend, bench_snow (SNOWFLAKE_MS: at most 4,096 ids a millisecond, 4,096,000/s), median of 3"
echo "   wall clock: n / the query's time.  ids' own times: n / the milliseconds from the first id's to the last's"
echo "   (id >> 22, both counted), which leaves out the time the row source spends before the first id and after the last."
echo "   cosid_next, streaming: SELECT count(cosid_next('bench_snow')) FROM (SELECT generate_series(1, n)) g;"
echo "   $stream_note"
bench_psql -c "SELECT * FROM bench_rate_report()"

pair1=$(median "${pair_rate[1]}")
pair2=$(median "${pair_rate[2]}")
echo
echo "== two backends on one generator, bench_wide ({\"time-bits\": 38, \"seq-bits\": 15}: 32,768,000 ids/s at most)"
echo "   pgbench -c 1 -t $PAIR_TX against -c 2 -t $((PAIR_TX / 2)), each transaction"
echo "   SELECT count(cosid_next('bench_wide')) FROM (SELECT generate_series(1, $PAIR_IDS)) g;"
echo "   ids/s = pgbench's tps (transactions / elapsed time, connections left out) x $PAIR_IDS; CPUs = the backends'"
echo "   CPU time / elapsed time; median of 3 interleaved runs of each"
printf '%-12s %14s %8s %18s   %s\n' "" "ids/s" "CPUs" "ids/CPU-second" "runs, ids/s"
for c in 1 2; do
	printf '%-12s %14s %8s %18s  %s\n' "$c backend$([ "$c" = 1 ] || echo s)" \
		"$(thousands "$(median "${pair_rate[$c]}")")" "$(median "${pair_cpus[$c]}")" \
		"$(thousands "$(median "${pair_eff[$c]}")")" "${pair_rate[$c]}"
done
echo "the generator waited for its sequence $((waits1 - waits0)) times during these runs (cosid.generator_stats.seq_waits)"

echo
echo "== pgbench: 2 clients, one-row INSERTs, ${PGBENCH_SECONDS} s, median tps of 3 interleaved runs"
for t in pgb_serial pgb_seg pgb_snow; do
	printf '%-12s %8.0f tps   (runs:%s)\n' "$t" "$(median "${tps[$t]}")" "${tps[$t]}"
done

# --- Citus: distributed tables keyed by bigserial, uuids and cosid ---

bash "$BENCH/citus.sh"

# --- a fleet on one lease store: 64 to 1,024 servers, direct and through
# PgBouncer (bench/fleet.sh; BENCH_FLEET=0 leaves it out) ---

[ "${BENCH_FLEET:-1}" = 0 ] || bash "$BENCH/fleet.sh"

# --- many generators: 1,000 to 100,000, one per tenant, against as many
# sequences (bench/many.sh; BENCH_MANY=0 leaves it out) ---

# (its failure, a query's or a generator's for want of shared entries, fails
# the run at its end, after the targets and the chart)
many_rc=0
[ "${BENCH_MANY:-1}" = 0 ] || bash "$BENCH/many.sh" || many_rc=$?

echo
echo "== TARGETS"
bench_psql -c "SELECT * FROM bench_call_targets($N)" -c "SELECT * FROM bench_pk_targets($ROWS)" \
	-c "SELECT * FROM bench_rate_targets()"
awk -v a="$pair2" -v b="$pair1" -v cpus="$(median "${pair_cpus[2]}")" \
	-v e2="$(median "${pair_eff[2]}")" -v e1="$(median "${pair_eff[1]}")" 'BEGIN {
	r = a / b;
	printf "two backends / one backend on one generator (bench_wide) = %.2f (target >= 1.6) %s", r, (r >= 1.6 ? "OK" : "MISSED");
	printf "; on %s CPUs, %.2f x the ids per CPU-second\n", cpus, e2 / e1 }'
for t in pgb_seg pgb_snow; do
	awk -v t="$t" -v a="$(median "${tps[$t]}")" -v b="$(median "${tps[pgb_serial]}")" 'BEGIN {
		r = a / b;
		printf "pgbench %s tps / bigserial tps = %.3f (target >= 0.95) %s\n", t, r, (r >= 0.95 ? "OK" : "MISSED") }'
done

# --- the chart ---

if [ "$GNUPLOT" = 1 ]; then
	bench_psql -F $'\t' -c "SELECT * FROM bench_chart_calls($N)" >"$WORK/calls.tsv"
	bench_psql -F $'\t' -c "SELECT * FROM bench_chart_pk()" >"$WORK/pk.tsv"
	pk_target=$(bench_psql -c "SELECT trim_scale(round(target_mb * $ROWS / 1000000, 1)) FROM bench_pk
		WHERE label = 'gen_ulid_monotonic()'")
	gq() { printf '%s' "$1" | tr -d "'\\\\"; } # nothing that ends a gnuplot string
	gnuplot -e "calls='$WORK/calls.tsv'; pk='$WORK/pk.tsv'; out='$WORK/chart.svg'; rows='$(bench_psql -c "SELECT bench_count($ROWS)")'; pk_target=${pk_target:-31}" \
		-e "chart_title='cosid $(gq "${versions#*cosid }") on PostgreSQL $(gq "$server_version"), make bench $(date -u +%Y-%m-%d)'" \
		-e "chart_subtitle='$(gq "$machine"); per call: median of $ROUNDS rounds of $(bench_psql -c "SELECT bench_count($N)") calls'; chart_note='$(gq "$ssl_note")'" \
		"$BENCH/chart.gp"
	echo
	if mkdir -p "$REPO/tmp/bench" 2>/dev/null && cp "$WORK/chart.svg" "$REPO/tmp/bench/chart-$PG_VERSION.svg" &&
		cp "$WORK/calls.tsv" "$REPO/tmp/bench/calls-$PG_VERSION.tsv" && cp "$WORK/pk.tsv" "$REPO/tmp/bench/pk-$PG_VERSION.tsv"; then
		echo "chart: tmp/bench/chart-$PG_VERSION.svg (its data: calls-$PG_VERSION.tsv, pk-$PG_VERSION.tsv)"
	fi
	if [ -n "$CHART_TO" ]; then
		cp "$WORK/chart.svg" "$CHART_TO"
		echo "chart: $CHART_TO"
	fi
fi

echo
echo "make bench took $(($(date +%s) - T0)) s; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$many_rc" = 0 ] || { echo "bench: the many-generators part failed (above)" >&2; exit "$many_rc"; }
