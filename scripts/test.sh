#!/usr/bin/env bash
# make test: every suite, then one line "N passed, N failed".
#
#   scripts/test.sh [suite ...]     suites: unit fuzz regress isolation tap pgtap
#
# COSID_TAP=PREFIX runs only the TAP files whose names start with PREFIX.
#
# Expects cosid built and installed and the unit-test and fuzzer binaries
# built (make test does both).  Servers run as the postgres
# OS user when we are root, from a copy of the test files in a scratch
# directory that user owns; set COSID_KEEP=1 to keep it.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

SUITES=("$@")
[ ${#SUITES[@]} -gt 0 ] || SUITES=(unit fuzz regress isolation tap pgtap)
FUZZ_SECONDS=${COSID_FUZZ_SECONDS:-20}

PASSED=0
FAILED=0
FAILED_SUITES=()

WORK=$(pg_workdir test)
cp -r "$REPO/sql" "$REPO/expected" "$REPO/test" "$WORK/"
[ "$(id -u)" -ne 0 ] || chown -R postgres:postgres "$WORK"
cd "$WORK" || exit 1
cleanup() {
	for d in "$WORK"/pgtap/data; do [ -d "$d" ] && cluster_stop "$d"; done
	if [ "${COSID_KEEP:-0}" = 1 ] || [ "$FAILED" -gt 0 ]; then
		echo "test: outputs kept in $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

# record SUITE PASSED FAILED
record() {
	echo "== $1: $2 passed, $3 failed"
	PASSED=$((PASSED + $2))
	FAILED=$((FAILED + $3))
	[ "$3" -eq 0 ] || FAILED_SUITES+=("$1")
}

# Counts from pg_regress-style output: "... ok" and "... FAILED" lines.
count_regress() {
	local log=$1 rc=$2 suite=$3 ok bad
	ok=$(grep -cE '\.\.\. ok' "$log")
	bad=$(grep -cE '\.\.\. (FAILED|failed)' "$log")
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	record "$suite" "$ok" "$bad"
}

# Counts from a TAP::Harness summary (prove, pg_prove).
count_tap() {
	local log=$1 rc=$2 suite=$3 total bad
	total=$(sed -nE 's/^Files=[0-9]+, Tests=([0-9]+),.*/\1/p' "$log" | tail -n1)
	total=${total:-0}
	bad=$(grep -oE 'Failed: [0-9]+\)' "$log" | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	record "$suite" $((total - bad < 0 ? 0 : total - bad)) "$bad"
}

suite_unit() {
	local log=$WORK/unit.log rc=0 ok bad t
	: >"$log"
	for t in "$REPO"/test/unit/test_*; do
		case "$t" in *.c) continue ;; esac
		[ -x "$t" ] || continue
		"$t" >>"$log" 2>&1 || rc=1
	done
	cat "$log"
	ok=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	bad=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	record unit "$ok" "$bad"
}

suite_fuzz() {
	local ok=0 bad=0 f name
	for f in "$REPO"/test/fuzz/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f")
		mkdir -p "$WORK/fuzz/$name"
		# each harness starts from its own seeds (test/fuzz/corpus_ulid, ...)
		cp -r "$REPO/test/fuzz/corpus_${name#fuzz_}/." "$WORK/fuzz/$name/" 2>/dev/null
		if "$f" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
			-artifact_prefix="$WORK/fuzz/" "$WORK/fuzz/$name" >"$WORK/fuzz/$name.log" 2>&1; then
			ok=$((ok + 1))
			echo "$name: $(grep -E '^stat::number_of_executed_units' "$WORK/fuzz/$name.log" | awk '{print $2}') runs, nothing found"
		else
			bad=$((bad + 1))
			tail -n 40 "$WORK/fuzz/$name.log"
		fi
	done
	record fuzz "$ok" "$bad"
}

suite_regress() {
	local tests rc
	tests=$(cd "$WORK/sql" && ls *.sql | grep -v '^cosid--' | sed 's/\.sql$//' | sort)
	as_pg "$PGXS_DIR/src/test/regress/pg_regress" \
		--temp-instance="$WORK/regress/tmp_check" \
		--temp-config="$WORK/test/cosid.conf" \
		--inputdir="$WORK" --outputdir="$WORK/regress" --bindir="$PGBIN" \
		--encoding=UTF8 --no-locale --dbname=cosid_regression $tests >"$WORK/regress.log" 2>&1
	rc=$?
	cat "$WORK/regress.log"
	[ $rc -eq 0 ] || cat "$WORK/regress/regression.diffs" 2>/dev/null
	count_regress "$WORK/regress.log" $rc regress
}

suite_isolation() {
	local tests rc
	tests=$(cd "$WORK/test/specs" && ls *.spec | sed 's/\.spec$//' | sort)
	as_pg "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
		--temp-instance="$WORK/isolation/tmp_check" \
		--temp-config="$WORK/test/cosid.conf" \
		--inputdir="$WORK/test" --outputdir="$WORK/isolation" --bindir="$PGBIN" \
		--encoding=UTF8 --no-locale --dbname=cosid_isolation $tests >"$WORK/isolation.log" 2>&1
	rc=$?
	cat "$WORK/isolation.log"
	[ $rc -eq 0 ] || cat "$WORK/isolation/output_iso/regression.diffs" "$WORK/isolation/regression.diffs" 2>/dev/null
	count_regress "$WORK/isolation.log" $rc isolation
}

suite_tap() {
	local rc
	mkdir -p "$WORK/tap"
	[ "$(id -u)" -ne 0 ] || chown postgres:postgres "$WORK/tap"
	as_pg env TESTDIR="$WORK/tap" PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
		COSID_SRC="$WORK" \
		prove --failures -I "$PGXS_DIR/src/test/perl" -I "$WORK/test/t" "$WORK"/test/t/${COSID_TAP:-}*.pl \
		>"$WORK/tap.log" 2>&1
	rc=$?
	cat "$WORK/tap.log"
	if [ $rc -ne 0 ]; then
		for f in "$WORK"/tap/tmp_check/log/*; do
			echo "---- $f (last 30 lines)"
			tail -n 30 "$f"
		done
	fi
	count_tap "$WORK/tap.log" $rc tap
}

suite_pgtap() {
	local data=$WORK/pgtap/data port=54340 rc
	mkdir -p "$WORK/pgtap"
	[ "$(id -u)" -ne 0 ] || chown postgres:postgres "$WORK/pgtap"
	if ! cluster_start "$data" "$port"; then
		tail -n 30 "$data/server.log"
		record pgtap 0 1
		return
	fi
	cluster_psql "$data" "$port" -d postgres -c "CREATE DATABASE cosid_pgtap"
	cluster_psql "$data" "$port" -d cosid_pgtap -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION cosid"
	as_pg pg_prove --failures -h "$data" -p "$port" -U "$PG_USER" -d cosid_pgtap \
		"$WORK"/test/pgtap/*.sql >"$WORK/pgtap.log" 2>&1
	rc=$?
	cat "$WORK/pgtap.log"
	cluster_stop "$data"
	count_tap "$WORK/pgtap.log" $rc pgtap
}

for s in "${SUITES[@]}"; do
	echo "==== $s"
	"suite_$s"
done

[ ${#FAILED_SUITES[@]} -eq 0 ] || echo "failing suites: ${FAILED_SUITES[*]}"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
