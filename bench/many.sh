#!/usr/bin/env bash
# make bench's "many generators" part (bench/run.sh runs it; it also runs
# alone: PG=15 bash bench/many.sh): what a generator costs when there are
# many of them, one per tenant, against what a sequence costs when there are
# as many sequences, on the same server in the same run (issue 29).
#
# Two kinds of generator: snowflake ({"strategy": "snowflake"}) and segment,
# a tenant's invoice numbers ({"strategy": "segment", "step": 100, "group":
# "year"} with a codec that prints INV-2026-000042).  For each kind and each
# layout a throwaway server of its own (cosid preloaded, cosid.max_generators
# at its default, jit and autovacuum off, fsync off as in the rest of make
# bench), so that it holds n generators at size n:
#   one database   db gens holds n generators, db seqs n sequences
#   L databases    spread1 .. spreadL hold n/L generators and n/L sequences each
# It is filled in transactions of BENCH_MANY_BATCH (SELECT cosid_define(...)
# FROM generate_series(...); CREATE SEQUENCE in a DO loop), the time printed.
# At each size it measures (in this order), cosid's runs and the sequences'
# alternating:
#   hot call     cosid_next on one of the n (defined as bench/setup.sql's
#                bench_wide, 15 sequence bits, or bench_seg, step 1000)
#                against nextval, per call, as bench/candidates.sql measures
#                them: bench/lib.sql's bench_round, SELECT count(f) FROM
#                generate_series(1, BENCH_MANY_N) g, (median - the bare
#                scan's median) / N
#   define       cosid_define of a new generator (the kind's definition)
#                against CREATE SEQUENCE, one statement a transaction:
#                pgbench -c 1 -t with a script file, every transaction's
#                latency from its per-transaction log (-l): from the client
#                over the socket and back, commit included.  Both in the
#                same database (in one database: gens), so that both make
#                their relation's file in the same directory.  On ext4 a
#                new file's inode comes from its directory's block group,
#                and for a minute or more after many files were deleted
#                there (an earlier bench server, a test run) each new file
#                costs a scan past the recently deleted inodes (perf:
#                find_inode_bit and recently_deleted, 10% of a define in
#                one run, none in the next): measured in two databases,
#                that cost fell on one side only, and the ratio swung from
#                1.4 x to 4.3 x between runs of the same build.
#   first call   the first call of a random generator in a session
#                (snowflake: cosid_next; segment: cosid_next_text, the
#                invoice number's text) against the first nextval of a
#                random sequence in a session, both ways:
#                fresh    pgbench -C, a new session for each; pgbench makes
#                         the connection before the transaction's clock starts,
#                         so the figure is the session's first statement
#                long     one session that has already called up to
#                         BENCH_MANY_LONG (1,000) others, each measured call
#                         on one it did not use before (pgbench's permute())
# Every figure is a median of BENCH_MANY_CALLS (BENCH_MANY_PARTS, 8,
# alternating pgbench runs of a part each; the long session's in two halves,
# each a session of its own: cosid, sequences, sequences, cosid), so that a
# moment the machine is busy elsewhere falls on both sides, not on one (4
# parts, and one long session each after the other, until a define's ratio
# swung from 1.4 x to 4.3 x between runs of the same build).  Each run's own
# median is printed too (stderr, "parts"), so a swing shows whether it was
# one run or all of one side.  The measured defines add to the count (the
# median define is at about n + BENCH_MANY_CALLS / 2).  With L databases
# define and first call (fresh) are measured, in BENCH_MANY_PARTS of them,
# against the sequences of the same database.  Targets (issue 29): define <= 2 x CREATE SEQUENCE, first
# call <= 2 x the first nextval; reported OK or MISSED, never failing the
# run.  A query or server failure fails it at once, except cosid's "too many
# cosid generators in use" (53200: every shared entry held by a generator
# used in the last 10 s), which is what is measured failing: the figure says
# so, the run goes on and exits 1 at its end.
#
# The table is printed with its rows as markdown for docs/benchmarks.md, and
# written to tmp/bench/many-<version>.tsv; the chart (gnuplot, bench/many.gp)
# to tmp/bench/many-<version>.svg (and bench/many-<version>.svg with
# BENCH_CHART=1).
#
#   BENCH_MANY_SIZES="1000 10000 100000"  numbers of generators, ascending
#   BENCH_MANY_KINDS="snowflake segment"
#   BENCH_MANY_LAYOUTS="1 100"  the numbers of databases n is spread over
#   BENCH_MANY_CALLS=200      defines and first calls measured at each size
#   BENCH_MANY_PARTS=8        alternating runs each figure is measured in
#   BENCH_MANY_LONG=1000      generators (sequences) the long session calls
#                             before the measured ones
#   BENCH_MANY_N=1000000, BENCH_MANY_ROUNDS=5  the hot call's N and rounds
#   BENCH_MANY_BATCH=500      defines (or CREATE SEQUENCE) a transaction when
#                             filling
#   BENCH_MANY_FSYNC=off      on: commits and cosid's files are flushed
#   BENCH_MANY_APPEND=1       add the rows to tmp/bench/many-<version>.tsv
#                             instead of replacing it, and print the table
#                             and draw the chart from all its rows (to
#                             measure a slow build part by part)
#   BENCH_MANY_LABEL=...      the markdown rows' first column (default: the
#                             commit checked out, and its date)
#   BENCH_MANY_PORT=54360
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
[ -n "${PGBIN:-}" ] || use_pg "$PG_VERSION" || exit 1
T0=$(date +%s)

SIZES=${BENCH_MANY_SIZES:-1000 10000 100000}
KINDS=${BENCH_MANY_KINDS:-snowflake segment}
LAYOUTS=${BENCH_MANY_LAYOUTS:-1 100}
CALLS=${BENCH_MANY_CALLS:-200}
LONG=${BENCH_MANY_LONG:-1000}
HOT_N=${BENCH_MANY_N:-1000000}
HOT_ROUNDS=${BENCH_MANY_ROUNDS:-5}
BATCH=${BENCH_MANY_BATCH:-500}
FSYNC=${BENCH_MANY_FSYNC:-off}
PORT=${BENCH_MANY_PORT:-54360}
BENCH=$REPO/bench
PARTS=${BENCH_MANY_PARTS:-8} # interleaved pgbench runs of CALLS / PARTS each, per figure

for v in CALLS LONG HOT_N HOT_ROUNDS BATCH PORT PARTS; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "bench: BENCH_MANY_$v must be a positive integer, not '${!v}'" >&2
		exit 2
	fi
done
DBS=1
for L in $LAYOUTS; do
	[[ $L =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_MANY_LAYOUTS: numbers of databases, not '$L'" >&2; exit 2; }
	[ "$L" -le "$DBS" ] || DBS=$L
done
[[ $FSYNC =~ ^(on|off)$ ]] || { echo "bench: BENCH_MANY_FSYNC must be on or off, not '$FSYNC'" >&2; exit 2; }
CALLS=$(((CALLS + PARTS - 1) / PARTS * PARTS))
prev=0
for n in $SIZES; do
	if ! [[ $n =~ ^[1-9][0-9]*$ ]] || [ "$n" -le "$prev" ] || [ "$n" -lt "$CALLS" ] || [ "$n" -lt "$DBS" ]; then
		echo "bench: BENCH_MANY_SIZES must ascend, each at least BENCH_MANY_CALLS ($CALLS) and the most databases ($DBS): '$SIZES'" >&2
		exit 2
	fi
	prev=$n
done
for k in $KINDS; do
	[[ $k =~ ^(snowflake|segment)$ ]] || { echo "bench: BENCH_MANY_KINDS: snowflake or segment, not '$k'" >&2; exit 2; }
done

# The definitions.  A tenant's invoice numbers: INV-2026-000042.
INVOICE_CODEC='[{"grouped": {"group": "year", "value": {"radix": {"radix": 10, "width": 6, "pad-start": true}}}}, {"prefix": "INV-"}]'
def_of() {
	case $1 in
	snowflake) echo '{"strategy": "snowflake"}' ;;
	segment) echo "{\"strategy\": \"segment\", \"step\": 100, \"group\": \"year\", \"codec\": $INVOICE_CODEC}" ;;
	esac
}
hot_def_of() {
	case $1 in
	snowflake) echo '{"time-bits": 38, "seq-bits": 15}' ;;
	segment) echo '{"strategy": "segment", "step": 1000}' ;;
	esac
}
# the first call: the text a tenant's invoice gets, for segment
call_of() {
	case $1 in
	snowflake) echo "cosid_next" ;;
	segment) echo "cosid_next_text" ;;
	esac
}

WORK=$(pg_workdir many)
DATA=$WORK/data
cleanup() {
	local rc=$?
	cluster_stop "$DATA"
	if [ "$rc" -ne 0 ] && [ -f "$DATA/server.log" ]; then
		echo "bench: many: failed; the end of the server log:" >&2
		tail -n 20 "$DATA/server.log" >&2
	fi
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$WORK/sql" "$WORK/log"
[ "$(id -u)" -ne 0 ] || chown postgres:postgres "$WORK/sql" "$WORK/log"
cp "$BENCH/lib.sql" "$WORK/sql/"
[ "$(id -u)" -ne 0 ] || chown postgres "$WORK/sql/lib.sql"
RESULTS=$WORK/many.tsv
printf 'kind\tdbs\tn\tdefine_ms\tseq_define_ms\tfirst_ms\tseq_first_ms\tlong_ms\tseq_long_ms\thot_ns\tseq_hot_ns\tpopulate_s\tmeasure_s\n' >"$RESULTS"

mpsql() { local db=$1; shift; cluster_psql "$DATA" "$PORT" -d "$db" -At "$@"; }
# median_of FILE: FILE's median, or "full" when a run of it failed for want
# of a shared entry
median_of() { if [ -f "$1.full" ]; then echo full; else median <"$1"; fi; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
secs() { echo $(($(date +%s) - $1)); }

# pgbench_run DB SCRIPT TX OUT [pgbench options...]: run SCRIPT TX times from
# one client; append each transaction's latency in ms (those after the first
# SKIP=n, when set) to OUT.
pgbench_run() {
	local db=$1 script=$2 tx=$3 out=$4 prefix out_pg
	shift 4
	prefix=$WORK/log/run$((++PGB_RUNS))
	[ "$(id -u)" -ne 0 ] || chown postgres "$script"
	if ! out_pg=$(cd "$WORK/log" && as_pg pgbench -n -M simple -c 1 -j 1 -t "$tx" -f "$script" -l \
		--log-prefix="$prefix" "$@" -h "$DATA" -p "$PORT" "$db" 2>&1); then
		# every shared entry taken (53200): what is measured failed, not
		# the bench; the figure says so, the run goes on and fails at its end
		if [[ $out_pg == *"too many cosid generators in use"* ]]; then
			echo "bench: many: $(basename "$script" .pgb) in $db: $(echo "$out_pg" | grep -m1 -o 'ERROR: .*')" >&2
			touch "$out.full"
			FULL=$((FULL + 1))
			return 0
		fi
		echo "$out_pg" >&2
		exit 1
	fi
	# client_id transaction_no time(us) script_no time_epoch time_us
	cat "$prefix".* | awk -v skip="${SKIP:-0}" '$2 >= skip { printf "%.4f\n", $3 / 1000 }' >"$prefix.ms"
	cat "$prefix.ms" >>"$out"
	# this run's own median, for the "parts" line
	median <"$prefix.ms" >>"$out.parts"
}
PGB_RUNS=0
FULL=0
NAMES=0 # the measured defines' names: d1, d2, ... and q1, q2, ... across the run

# the pgbench scripts; :i counts the client's transactions (client variables
# outlive transactions and, with -C, connections)
script() { printf '%s\n' "$2" >"$WORK/sql/$1.pgb"; [ "$(id -u)" -ne 0 ] || chown postgres "$WORK/sql/$1.pgb"; }

declare -A gidx total sidx stotal # per database: highest g/s index, generators/sequences in it

# populate_sql DB KIND GENERATORS SEQUENCES: psql lines that bring
# DB up to that many generators (g1, g2, ...) and sequences (s1, s2, ...), in
# transactions of BATCH.
populate_sql() {
	local db=$1 kind=$2 tg=$3 ts=$4 a b def
	def=$(def_of "$kind")
	echo "\\c $db"
	while [ "${total[$db]:-0}" -lt "$tg" ]; do
		a=$((${gidx[$db]:-0} + 1))
		b=$((a + BATCH - 1))
		[ $((b - a + 1)) -le $((tg - ${total[$db]:-0})) ] || b=$((a + tg - ${total[$db]:-0} - 1))
		echo "SELECT count(cosid_define('g' || i, '$def')) FROM generate_series($a, $b) i;"
		total[$db]=$((${total[$db]:-0} + b - a + 1))
		gidx[$db]=$b
	done
	while [ "${stotal[$db]:-0}" -lt "$ts" ]; do
		a=$((${sidx[$db]:-0} + 1))
		b=$((a + BATCH - 1))
		[ $((b - a + 1)) -le $((ts - ${stotal[$db]:-0})) ] || b=$((a + ts - ${stotal[$db]:-0} - 1))
		echo "DO \$\$ BEGIN FOR i IN $a .. $b LOOP EXECUTE format('CREATE SEQUENCE s%s', i); END LOOP; END \$\$;"
		stotal[$db]=$((${stotal[$db]:-0} + b - a + 1))
		sidx[$db]=$b
	done
}

# measure_define GDB SDB KIND OUT_GEN OUT_SEQ PART: CALLS / PARTS defines in
# GDB and as many CREATE SEQUENCE in SDB, the order alternating with PART.
measure_define() {
	local gdb=$1 sdb=$2 kind=$3 og=$4 os=$5 part=$6 tx=$((CALLS / PARTS))
	script define_gen "\\set i :i + 1
SELECT cosid_define('d:i', '$(def_of "$kind")');"
	script define_seq "\\set i :i + 1
CREATE SEQUENCE q:i;"
	if [ $((part % 2)) = 0 ]; then
		pgbench_run "$gdb" "$WORK/sql/define_gen.pgb" "$tx" "$og" -D i="$NAMES"
		pgbench_run "$sdb" "$WORK/sql/define_seq.pgb" "$tx" "$os" -D i="$NAMES"
	else
		pgbench_run "$sdb" "$WORK/sql/define_seq.pgb" "$tx" "$os" -D i="$NAMES"
		pgbench_run "$gdb" "$WORK/sql/define_gen.pgb" "$tx" "$og" -D i="$NAMES"
	fi
	NAMES=$((NAMES + tx))
	total[$gdb]=$((${total[$gdb]:-0} + tx))
	stotal[$sdb]=$((${stotal[$sdb]:-0} + tx))
}

# measure_first GDB SDB KIND OUT_GEN OUT_SEQ PART: the first call of a random
# generator of GDB in CALLS / PARTS fresh sessions, and the first nextval of a
# random sequence of SDB likewise.
measure_first() {
	local gdb=$1 sdb=$2 kind=$3 og=$4 os=$5 part=$6 tx=$((CALLS / PARTS))
	script first_gen "\\set k random(1, ${gidx[$gdb]})
SELECT $(call_of "$kind")('g:k');"
	script first_seq "\\set k random(1, ${sidx[$sdb]})
SELECT nextval('s:k');"
	if [ $((part % 2)) = 0 ]; then
		pgbench_run "$gdb" "$WORK/sql/first_gen.pgb" "$tx" "$og" -C
		pgbench_run "$sdb" "$WORK/sql/first_seq.pgb" "$tx" "$os" -C
	else
		pgbench_run "$sdb" "$WORK/sql/first_seq.pgb" "$tx" "$os" -C
		pgbench_run "$gdb" "$WORK/sql/first_gen.pgb" "$tx" "$og" -C
	fi
}

# measure_long GDB SDB KIND OUT_GEN OUT_SEQ: a session calls up to LONG
# generators, then CALLS / 2 more, each once (a permutation of g1..); those
# are measured.  Twice (another permutation), and sequences likewise, in
# the order cosid, sequences, sequences, cosid.
measure_long() {
	local gdb=$1 sdb=$2 kind=$3 og=$4 os=$5 warm half=$((CALLS / 2)) seed h
	warm=$((${gidx[$gdb]} - CALLS))
	[ "$warm" -le "$LONG" ] || warm=$LONG
	for h in 0 1; do
		seed=$RANDOM
		script long_gen "\\set k permute(:i, ${gidx[$gdb]}, $seed) + 1
\\set i :i + 1
SELECT $(call_of "$kind")('g:k');"
		script long_seq "\\set k permute(:i, ${sidx[$sdb]}, $seed) + 1
\\set i :i + 1
SELECT nextval('s:k');"
		if [ $h = 0 ]; then
			SKIP=$warm pgbench_run "$gdb" "$WORK/sql/long_gen.pgb" $((warm + half)) "$og" -D i=0
			SKIP=$warm pgbench_run "$sdb" "$WORK/sql/long_seq.pgb" $((warm + half)) "$os" -D i=0
		else
			SKIP=$warm pgbench_run "$sdb" "$WORK/sql/long_seq.pgb" $((warm + half)) "$os" -D i=0
			SKIP=$warm pgbench_run "$gdb" "$WORK/sql/long_gen.pgb" $((warm + half)) "$og" -D i=0
		fi
	done
}

# measure_hot: per-call ns of cosid_next('hot') and nextval('hot_seq') in db
# gens, through bench/lib.sql, into $WORK/hot as "cosid_ns nextval_ns"
# ("full full" when every shared entry was taken).
measure_hot() {
	local r out
	mpsql gens -c "DELETE FROM bench_timing" >/dev/null
	if ! out=$(for r in $(seq 0 "$HOT_ROUNDS"); do echo "CALL bench_round($r, $HOT_N);"; done |
		mpsql gens -f - 2>&1 >/dev/null); then
		if [[ $out == *"too many cosid generators in use"* ]]; then
			echo "bench: many: hot call: ERROR:  too many cosid generators in use" >&2
			echo "full full" >"$WORK/hot"
			FULL=$((FULL + 1))
			return 0
		fi
		echo "$out" >&2
		exit 1
	fi
	mpsql gens -F ' ' -c "SELECT round(max(per_call_ns) FILTER (WHERE label = 'cosid_next(''hot'')')::numeric, 1),
		round(max(per_call_ns) FILTER (WHERE label = 'nextval(''hot_seq'')')::numeric, 1)
		FROM bench_call_stats($HOT_N)" >"$WORK/hot"
}

echo
echo "== many generators: define, first call and hot call at $(echo "$SIZES" | sed 's/ /, /g') generators, against as many sequences"
echo "   (medians of $CALLS; $(for L in $LAYOUTS; do [ "$L" = 1 ] && echo -n "in one database; " || echo -n "spread over $L databases; "; done)cosid.max_generators at its default; fsync $FSYNC)"

# One server for each kind and layout, so that each holds n generators.
for kind in $KINDS; do
	for L in $LAYOUTS; do
		unset gidx total sidx stotal
		declare -A gidx total sidx stotal
		rm -rf "$DATA"
		t=$(date +%s)
		cluster_start "$DATA" "$PORT" \
			"jit = off" \
			"max_parallel_workers_per_gather = 0" \
			"autovacuum = off" \
			"fsync = $FSYNC" \
			"max_locks_per_transaction = 256"
		if [ "$L" = 1 ]; then
			mpsql postgres -c "CREATE DATABASE gens" -c "CREATE DATABASE seqs" >/dev/null
			mpsql gens -c "CREATE EXTENSION cosid" -f "$WORK/sql/lib.sql" \
				-c "CREATE SEQUENCE hot_seq" \
				-c "SELECT cosid_define('hot', '$(hot_def_of "$kind")')" \
				-c "INSERT INTO bench_call (label, expr, role) VALUES ('g', 'g', 'baseline'),
					('nextval(''hot_seq'')', 'nextval(''hot_seq'')', 'reference'), ('cosid_next(''hot'')', 'cosid_next(''hot'')', NULL)" >/dev/null
			total[gens]=1
			what="one database (gens) and $kind generators, another (seqs) as many sequences"
		else
			for d in $(seq 1 "$L"); do echo "CREATE DATABASE spread$d;"; done | mpsql postgres -f - >/dev/null
			for d in $(seq 1 "$L"); do echo "\\c spread$d"; echo "CREATE EXTENSION cosid;"; done |
				mpsql postgres -f - >/dev/null
			what="$L databases, each with n/$L $kind generators and n/$L sequences"
			# the databases measured in
			spread_dbs=$(for p in $(seq 0 $((PARTS - 1))); do echo "spread$((p * L / PARTS + 1))"; done)
		fi
		echo "bench: many: $kind, $what: server ready in $(secs "$t") s" >&2
		for n in $SIZES; do
			t=$(date +%s)
			per=$((n / L))
			if [ "$L" = 1 ]; then
				{ populate_sql gens "$kind" "$n" 0; populate_sql seqs "$kind" 0 "$n"; } >"$WORK/populate.sql"
			else
				for d in $(seq 1 "$L"); do populate_sql "spread$d" "$kind" "$per" "$per"; done >"$WORK/populate.sql"
			fi
			mpsql postgres -f "$WORK/populate.sql" >/dev/null
			pop=$(secs "$t")
			echo "bench: many: $kind, $n generators and $n sequences ($L database(s)): populated in $pop s" >&2

			t=$(date +%s)
			for f in dg ds fg fs lg ls; do : >"$WORK/$f"; : >"$WORK/$f.parts"; rm -f "$WORK/$f.full"; done
			if [ "$L" = 1 ]; then
				measure_hot
				read -r hot_ns seq_hot_ns <"$WORK/hot"
				for p in $(seq 0 $((PARTS - 1))); do measure_define gens gens "$kind" "$WORK/dg" "$WORK/ds" "$p"; done
				for p in $(seq 0 $((PARTS - 1))); do measure_first gens seqs "$kind" "$WORK/fg" "$WORK/fs" "$p"; done
				measure_long gens seqs "$kind" "$WORK/lg" "$WORK/ls"
			else
				p=0
				for db in $spread_dbs; do
					measure_define "$db" "$db" "$kind" "$WORK/dg" "$WORK/ds" "$p"
					measure_first "$db" "$db" "$kind" "$WORK/fg" "$WORK/fs" "$p"
					p=$((p + 1))
				done
				hot_ns=- seq_hot_ns=-
			fi
			m=$(secs "$t")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$L" "$n" \
				"$(median_of "$WORK/dg")" "$(median_of "$WORK/ds")" "$(median_of "$WORK/fg")" "$(median_of "$WORK/fs")" \
				"$(median_of "$WORK/lg")" "$(median_of "$WORK/ls")" "$hot_ns" "$seq_hot_ns" "$pop" "$m" >>"$RESULTS"
			echo "bench: many: $kind, $n generators ($L database(s)): measured in $m s" >&2
			for f in d f l; do
				[ -s "$WORK/${f}g.parts" ] || continue
				case $f in d) what=define ;; f) what='first call (fresh)' ;; *) what='first call (long)' ;; esac
				echo "bench: many: $kind, $n ($L database(s)): $what, each run's median, ms: cosid $(tr '\n' ' ' <"$WORK/${f}g.parts")/ sequence $(tr '\n' ' ' <"$WORK/${f}s.parts")" >&2
			done
		done
		cluster_stop "$DATA"
	done
done

# the rows reported: this run's, or with BENCH_MANY_APPEND=1 these and the
# earlier ones of tmp/bench/many-<version>.tsv (this run's replacing any of
# the same kind, layout and size), in order of kind, layout and size
SAVED=$REPO/tmp/bench/many-$PG_VERSION.tsv
REPORT=$WORK/report.tsv
{
	head -n1 "$RESULTS"
	{
		if [ "${BENCH_MANY_APPEND:-0}" = 1 ] && [ -f "$SAVED" ]; then
			awk -F'\t' 'NR == FNR { if (FNR > 1) new[$1 FS $2 FS $3] = 1; next }
				FNR > 1 && !(($1 FS $2 FS $3) in new)' "$RESULTS" "$SAVED"
		fi
		tail -n +2 "$RESULTS"
	} | sort -t$'\t' -k1,1r -k2,2n -k3,3n
} >"$REPORT"

echo
echo "== many generators (PostgreSQL $("$PGBIN/postgres" -V | sed -E 's/^[^0-9]*([0-9.]+).*/\1/'), cosid.max_generators at its default): medians, cosid / sequence = ratio"
echo "   define: cosid_define / CREATE SEQUENCE, both in the database of the n generators (one statement a transaction, pgbench latency)"
echo "   first: a random one's first cosid_next$([[ " $KINDS " == *" segment "* ]] && echo " (segment: cosid_next_text)") / nextval in a fresh session (pgbench -C)"
echo "   long: the same in one session that has already used up to $LONG others;  hot: per call, ns (bench/lib.sql)"
awk -F'\t' '
function f(x) { return x == "-" ? "-" : x == "full" ? "ERROR" : (x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x)) }
function r(a, b) { return (a == "-" || b == "-" || a == "full" || b == "full" || b <= 0) ? "-" : (a / b >= 10 ? sprintf("%.0f", a / b) : sprintf("%.2f", a / b)) }
NR == 1 { printf "%-10s %4s %8s | %-26s | %-26s | %-26s | %-13s | %s\n", "kind", "dbs", "n",
	"define ms", "first call ms (fresh)", "first call ms (long)", "hot ns", "fill + measure s"; next }
{ printf "%-10s %4s %8s | %-26s | %-26s | %-26s | %-13s | %s + %s\n", $1, $2, $3,
	f($4) " / " f($5) " = " r($4, $5) "x", f($6) " / " f($7) " = " r($6, $7) "x",
	($8 == "-" ? "-" : f($8) " / " f($9) " = " r($8, $9) "x"),
	($10 == "-" ? "-" : $10 == "full" ? "ERROR" : $10 " / " $11), $12, $13 }' "$REPORT"

echo
echo "== TARGETS (issue 29): define <= 2 x CREATE SEQUENCE, first call <= 2 x the first nextval"
awk -F'\t' '
function t(what, a, b) {
	if (a == "full" || b == "full")
		printf "%s: %s: ERROR: too many cosid generators in use (target <= 2) MISSED\n", where, what;
	else
		printf "%s: %s %.3g / %.3g ms = %.2f (target <= 2) %s\n", where, what, a, b, a / b, (a <= 2 * b ? "OK" : "MISSED");
}
NR > 1 {
	where = sprintf("%s, %s generators in %s", $1, $3, ($2 == 1 ? "one database" : $2 " databases"));
	t("define", $4, $5);
	t("first call, fresh session", $6, $7);
	if ($8 != "-")
		t("first call, long session", $8, $9);
}' "$REPORT"

echo
BUILD=${BENCH_MANY_LABEL:-$(git -C "$REPO" log -1 --format='%h %cd' --date=format:%Y-%m-%d 2>/dev/null || echo '?')}
echo "== the rows for docs/benchmarks.md (PostgreSQL $PG_VERSION; build: $BUILD, BENCH_MANY_LABEL)"
awk -F'\t' -v pg="$PG_VERSION" -v build="$BUILD" '
function f(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x) }
function r(a, b) { return a / b >= 10 ? sprintf("%.0f", a / b) : sprintf("%.1f", a / b) }
function cell(a, b) { return a == "-" ? "" : (a == "full" || b == "full") ? "fails: too many cosid generators in use" : f(a) " / " f(b) " ms: " r(a, b) " ×" }
function th(x,  s) { s = ""; while (length(x) > 3) { s = "," substr(x, length(x) - 2) s; x = substr(x, 1, length(x) - 3) } return x s }
NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", build, pg, th($3), ($2 == 1 ? "1" : $2), $1,
	cell($4, $5), cell($6, $7), cell($8, $9), ($10 == "-" ? "" : $10 == "full" ? "fails: too many cosid generators in use" : $10 " / " $11 " ns") }' "$REPORT"

mkdir -p "$REPO/tmp/bench" 2>/dev/null && cp "$REPORT" "$SAVED" &&
	echo "table: tmp/bench/many-$PG_VERSION.tsv"
if command -v gnuplot >/dev/null; then
	# (the rows come in order of kind, layout and n: a line each)
	dbs=$(awk -F'\t' 'NR > 1 && $2 > m { m = $2 } END { print m + 0 }' "$REPORT")
	one=$(awk -F'\t' 'NR > 1 && $2 == 1 { n++ } END { print n + 0 }' "$REPORT")
	gnuplot -e "data='$REPORT'; out='$WORK/many.svg'; dbs=$dbs; one=$one; long='$LONG'" \
		-e "chart_title='Many generators against as many sequences: $(printf '%s' "$BUILD" | tr -d "'\\\\") on PostgreSQL $PG_VERSION, cosid.max_generators at its default, make bench $(date -u +%Y-%m-%d)'" \
		"$BENCH/many.gp" && cp "$WORK/many.svg" "$REPO/tmp/bench/many-$PG_VERSION.svg" &&
		echo "chart: tmp/bench/many-$PG_VERSION.svg"
	case "${BENCH_CHART:-}" in
	'') ;;
	1) cp "$WORK/many.svg" "$BENCH/many-$PG_VERSION.svg" && echo "chart: bench/many-$PG_VERSION.svg" ;;
	*) cp "$WORK/many.svg" "${BENCH_CHART%.svg}-many.svg" ;;
	esac
else
	echo "many: gnuplot is missing: no chart"
fi
echo "the many-generators part took $(secs "$T0") s"
if [ "$FULL" -gt 0 ]; then
	echo "bench: many: $FULL measurement(s) failed: too many cosid generators in use (cosid.max_generators)" >&2
	exit 1
fi
