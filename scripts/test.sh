#!/usr/bin/env bash
# make test: every suite on every PostgreSQL version, then one line
# "N passed, N failed, N skipped" (and before it the failing suites, e.g.
# pg18/tap).  A suite that ran no test fails; so does a skip that
# test/expected-skips does not list (suite, file, and a part of the reason,
# for example a tool that did not install or Citus that did not build).
#
#   scripts/test.sh [suite ...]     suites: architecture unit fuzz docs regress isolation tap
#                                   pgtap clients run package
#
# architecture, unit, fuzz and docs do not depend on PostgreSQL and run once; the others run on
# each version of $PG (make test PG=18), else of COSID_PG_VERSIONS
# (scripts/lib.sh), after cosid is built and installed for it
# (scripts/pg.sh install; a build that fails is the failing suite pgN/build).
# COSID_TAP=PREFIX runs only the TAP files whose names start with PREFIX.
#
# Expects the servers installed (make deps) and the unit-test and fuzzer
# binaries built (make test does both).  Servers run as the postgres
# OS user when we are root, from a copy of the test files in a scratch
# directory that user owns; set COSID_KEEP=1 to keep it.
set -uo pipefail
COSID_LIB_NO_DEFAULT=1
. "$(dirname "$0")/lib.sh"

SUITES=("$@")
[ ${#SUITES[@]} -gt 0 ] || SUITES=(architecture unit fuzz docs regress isolation tap pgtap clients run package)
FUZZ_SECONDS=${COSID_FUZZ_SECONDS:-20}
mapfile -t VERSIONS < <(pg_versions)
[ ${#VERSIONS[@]} -gt 0 ] || exit 2

PASSED=0
FAILED=0
SKIPPED=0
FAILED_SUITES=()
EXPECTED_SKIPS=$REPO/test/expected-skips
# the Citus tarball that scripts/pg.sh builds Citus from (the Citus tests may
# skip only when there is none)
VENDOR=${COSID_VENDOR:-$REPO/../shared/vendor}

WORK=$(pg_workdir test)
cd "$WORK" || exit 1
cleanup() {
	local d
	for d in "$WORK"/pg*/pgtap/data "$WORK"/pg*/clients/data; do
		[ -f "$d/PG_VERSION" ] && (use_pg "$(cat "$d/PG_VERSION")" && cluster_stop "$d")
	done
	if [ "${COSID_KEEP:-0}" = 1 ] || [ "$FAILED" -gt 0 ]; then
		echo "test: outputs kept in $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

# record SUITE PASSED FAILED [SKIPPED] (SUITE gets the version's prefix,
# pg18/tap, in the suites that run per version).  A suite that passed and
# failed nothing ran no test: that is a failure.
record() {
	local name=${PREFIX}$1 passed=$2 failed=$3 skipped=${4:-0}
	if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ]; then
		echo "test: $name ran no test ($skipped skipped): counted as a failure"
		failed=1
	fi
	echo "== $name: $passed passed, $failed failed, $skipped skipped"
	PASSED=$((PASSED + passed))
	FAILED=$((FAILED + failed))
	SKIPPED=$((SKIPPED + skipped))
	[ "$failed" -eq 0 ] || FAILED_SUITES+=("$name")
}
PREFIX=

# skip_condition COND: whether a conditional line of test/expected-skips holds.
skip_condition() {
	case "$1" in
	no-citus-vendor) ! ls "$VENDOR"/citus-*.tar.gz >/dev/null 2>&1 ;;
	root) [ "$(id -u)" -eq 0 ] ;;
	not-root) [ "$(id -u)" -ne 0 ] ;;
	*)
		echo "test: test/expected-skips: unknown condition '$1'" >&2
		return 1
		;;
	esac
}

# skip_expected SUITE FILE REASON: whether test/expected-skips lists it.  A
# line is "SUITE FILE [if=CONDITION] REASON": the skip's suite and file name
# (as test.sh names them), and a part of the reason it gives.
skip_expected() {
	local suite=$1 file=$2 reason=$3 s f rest cond
	while read -r s f rest; do
		case "$s" in '' | '#'*) continue ;; esac
		[ "$s" = "$suite" ] && [ "$f" = "$file" ] || continue
		cond=
		if [[ "$rest" == if=* ]]; then
			cond=${rest%% *}
			cond=${cond#if=}
			rest=${rest#* }
			rest=${rest#"${rest%%[![:space:]]*}"}
		fi
		[[ "$reason" == *"$rest"* ]] || continue
		[ -z "$cond" ] || skip_condition "$cond" || continue
		return 0
	done <"$EXPECTED_SKIPS"
	return 1
}

# tap_skips LOG: the skips of a TAP::Harness run in verbose mode (prove -v,
# pg_prove -v), one "FILE<TAB>REASON" a line: a whole file skipped
# ("FILE .. skipped: REASON") or a test of it ("ok N # skip REASON").
tap_skips() {
	awk '
		match($0, /^[^ ]+ \.+ /) { f = substr($0, 1, RLENGTH); sub(/ \.+ $/, "", f); n = split(f, p, "/"); file = p[n] }
		/^[^ ]+ \.+ skipped: / { r = $0; sub(/^[^ ]+ \.+ skipped: /, "", r); print file "\t" r; next }
		/^ok [0-9]+( - [^#]*)? # (skip|SKIP)/ { r = $0; sub(/^ok [0-9]+( - [^#]*)? # (skip|SKIP) ?/, "", r); print file "\t" r }
	' "$1"
}

# check_skips SUITE LOG: the number of skips in LOG (tap_skips); each one that
# test/expected-skips does not list is named and counted a failure
# (UNEXPECTED_SKIPS).
UNEXPECTED_SKIPS=0
check_skips() {
	local suite=${PREFIX}$1 log=$2 file reason n=0
	UNEXPECTED_SKIPS=0
	while IFS=$'\t' read -r file reason; do
		n=$((n + 1))
		if ! skip_expected "$suite" "$file" "$reason"; then
			echo "test: $suite: $file skipped, which test/expected-skips does not expect: $reason"
			UNEXPECTED_SKIPS=$((UNEXPECTED_SKIPS + 1))
		fi
	done < <(tap_skips "$log")
	SKIPS=$n
}

# show_tap LOG: a verbose TAP::Harness log without its passing test lines
show_tap() {
	grep -vE '^ok [0-9]+( - |$)' "$1"
}

# Counts from pg_regress output: "test x ... ok" and "... FAILED" lines up to
# PostgreSQL 15, TAP-like "ok 1 - x" and "not ok 1 - x" from 16 on.
count_regress() {
	local log=$1 rc=$2 suite=$3 ok bad
	ok=$(grep -cE '\.\.\. ok|^ok [0-9]+ ' "$log")
	bad=$(grep -cE '\.\.\. (FAILED|failed)|^not ok [0-9]+ ' "$log")
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	record "$suite" "$ok" "$bad"
}

# Counts from a verbose TAP::Harness run (prove -v, pg_prove -v): its
# summary's tests less the failed and skipped ones; a whole file skipped
# counts one skip; an unexpected skip counts a failure too.
count_tap() {
	local log=$1 rc=$2 suite=$3 total bad in_file passed
	total=$(sed -nE 's/^Files=[0-9]+, Tests=([0-9]+),.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	bad=$(grep -oE 'Failed: [0-9]+\)' "$log" | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	check_skips "$suite" "$log"
	in_file=$(grep -cE '^ok [0-9]+( - [^#]*)? # (skip|SKIP)' "$log")
	passed=$((total - bad - in_file))
	record "$suite" $((passed < 0 ? 0 : passed)) $((bad + UNEXPECTED_SKIPS)) "$SKIPS"
}

# ARCHITECTURE.md's module graph against the #include lines of src/ and the
# symbols of the first version's build (build/pgN/src), and the prefix of
# every exported symbol: one check (scripts/check_architecture.sh names
# every difference).  It runs after the builds.
suite_architecture() {
	if ! ls "$REPO/build/pg${VERSIONS[0]}/src/"*.o >/dev/null 2>&1; then
		bash "$REPO/scripts/pg.sh" install "${VERSIONS[0]}" >"$WORK/build-architecture.log" 2>&1 ||
			cat "$WORK/build-architecture.log"
	fi
	if bash "$REPO/scripts/check_architecture.sh" "$REPO" "$REPO/build/pg${VERSIONS[0]}/src"; then
		record architecture 1 0
	else
		record architecture 0 1
	fi
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

# The documentation's links (test/docs/links.py, TAP, one test per file):
# every relative link of README.md, ARCHITECTURE.md and docs/*.md names a
# file of the repository, every #anchor a heading of its file; links to
# other sites are checked for form only.
suite_docs() {
	local log=$WORK/docs.log rc total bad
	python3 "$REPO/test/docs/links.py" "$REPO" >"$log" 2>&1
	rc=$?
	cat "$log"
	total=$(grep -cE '^(not )?ok [0-9]+ ' "$log")
	bad=$(grep -cE '^not ok [0-9]+ ' "$log")
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	record docs $((total - bad < 0 ? 0 : total - bad)) "$bad"
}

suite_regress() {
	local tests rc
	tests=$(cd "$VW/sql" && ls *.sql | grep -v '^cosid--' | sed 's/\.sql$//' | sort)
	as_pg "$PGXS_DIR/src/test/regress/pg_regress" \
		--temp-instance="$VW/regress/tmp_check" \
		--temp-config="$VW/test/cosid.conf" \
		--inputdir="$VW" --outputdir="$VW/regress" --bindir="$PGBIN" \
		--encoding=UTF8 --no-locale --dbname=cosid_regression $tests >"$VW/regress.log" 2>&1
	rc=$?
	cat "$VW/regress.log"
	[ $rc -eq 0 ] || cat "$VW/regress/regression.diffs" 2>/dev/null
	count_regress "$VW/regress.log" $rc regress
}

suite_isolation() {
	local tests rc
	tests=$(cd "$VW/test/specs" && ls *.spec | sed 's/\.spec$//' | sort)
	as_pg "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
		--temp-instance="$VW/isolation/tmp_check" \
		--temp-config="$VW/test/cosid.conf" \
		--inputdir="$VW/test" --outputdir="$VW/isolation" --bindir="$PGBIN" \
		--encoding=UTF8 --no-locale --dbname=cosid_isolation $tests >"$VW/isolation.log" 2>&1
	rc=$?
	cat "$VW/isolation.log"
	[ $rc -eq 0 ] || cat "$VW/isolation/output_iso/regression.diffs" "$VW/isolation/regression.diffs" 2>/dev/null
	count_regress "$VW/isolation.log" $rc isolation
}

# The TAP files run COSID_TAP_JOBS (default 2) at a time: most of a file's
# time is waiting (for a TTL, a restart, a server's clock), so two run in
# about half the time on two cores.  Each worker takes the next file nobody
# has taken (a directory made per file is the claim), the long ones first
# (TAP_LONG: over 20 s on a loaded machine), and runs it alone with prove;
# PostgreSQL::Test::Cluster's port locks live in one directory for all of
# them (PG_TEST_PORT_DIR).  The workers' logs are put together in tap.log,
# one prove summary a file.
TAP_LONG='095 047 076 039 081 025 072 070 033 043 061 048 083 062 050'
tap_worker() {
	local i=$1 claims=$2 f rc=0
	shift 2
	for f in "$@"; do
		mkdir "$claims/$(basename "$f")" 2>/dev/null || continue
		as_pg env TESTDIR="$VW/tap" TESTDATADIR="$VW/tap/tmp_check" TESTLOGDIR="$VW/tap/tmp_check/log" \
			PG_TEST_PORT_DIR="$VW/tap/portlock" \
			PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" COSID_SRC="$VW" \
			prove -v -I "$PGXS_DIR/src/test/perl" -I "$VW/test/t" "$f" >>"$VW/tap.$i.log" 2>&1 || rc=1
	done
	return $rc
}

suite_tap() {
	local rc=0 files=() ordered=() f n jobs=${COSID_TAP_JOBS:-2} i pids=() claims=$VW/tap/claims
	mkdir -p "$VW/tap/portlock" "$claims"
	[ "$(id -u)" -ne 0 ] || chown -R postgres:postgres "$VW/tap"
	for f in "$VW"/test/t/${COSID_TAP:-}*.pl; do
		[ -f "$f" ] && files+=("$f")
	done
	if [ ${#files[@]} -eq 0 ]; then
		echo "test: no TAP file matches test/t/${COSID_TAP:-}*.pl"
		record tap 0 1
		return
	fi
	for n in $TAP_LONG; do
		for f in "${files[@]}"; do
			[[ "$(basename "$f")" == "$n"_* ]] && ordered+=("$f")
		done
	done
	for f in "${files[@]}"; do
		[[ " ${ordered[*]} " == *" $f "* ]] || ordered+=("$f")
	done
	for ((i = 1; i <= jobs; i++)); do
		: >"$VW/tap.$i.log"
		tap_worker "$i" "$claims" "${ordered[@]}" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	cat "$VW"/tap.[0-9]*.log >"$VW/tap.log"
	show_tap "$VW/tap.log"
	if [ $rc -ne 0 ]; then
		for f in "$VW"/tap/tmp_check/log/*; do
			echo "---- $f (last 30 lines)"
			tail -n 30 "$f"
		done
	fi
	count_tap "$VW/tap.log" $rc tap
}

suite_pgtap() {
	local data=$VW/pgtap/data port=${COSID_PGTAP_PORT:-54340} rc
	mkdir -p "$VW/pgtap"
	[ "$(id -u)" -ne 0 ] || chown postgres:postgres "$VW/pgtap"
	if ! cluster_start "$data" "$port"; then
		tail -n 30 "$data/server.log"
		record pgtap 0 1
		return
	fi
	cluster_psql "$data" "$port" -d postgres -c "CREATE DATABASE cosid_pgtap"
	cluster_psql "$data" "$port" -d cosid_pgtap -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION cosid"
	as_pg pg_prove -v -h "$data" -p "$port" -U "$PG_USER" -d cosid_pgtap \
		"$VW"/test/pgtap/*.sql >"$VW/pgtap.log" 2>&1
	rc=$?
	show_tap "$VW/pgtap.log"
	cluster_stop "$data"
	count_tap "$VW/pgtap.log" $rc pgtap
}

# The real clients (test/clients/: psycopg 3, psycopg2, asyncpg, SQLAlchemy and
# Alembic, Django, pgjdbc, Hibernate, node-postgres, Knex, TypeORM, Sequelize,
# Drizzle and drizzle-kit, pg-promise, pgx, tokio-postgres), each program
# printing TAP and making its own
# database on one throwaway server: TCP on 127.0.0.1 for pgjdbc, and
# cosid.machine_bits = 3 for the JS_SAFE_MS layout; python/readme_test.py
# checks that the Cookbook (docs/cookbook.md) shows their code.  The npm packages are
# installed once per package-lock.json into $COSID_CACHE/node-clients; the Go
# and Rust programs are built once per source into $COSID_CACHE/go-clients and
# rust-clients.
suite_clients() {
	local data=$VW/clients/data port=${COSID_CLIENTS_PORT:-54341} modules=$COSID_CACHE/node-clients rc
	mkdir -p "$VW/clients"
	[ "$(id -u)" -ne 0 ] || chown postgres:postgres "$VW/clients"
	if ! bash "$VW/test/clients/node/install.sh" "$modules" >"$VW/clients/npm.log" 2>&1; then
		cat "$VW/clients/npm.log"
		record clients 0 1
		return
	fi
	# the Go and Rust programs, built before the clock of prove starts (a no-op
	# when built); a failed build is reported by their *_test.sh
	bash "$VW/test/clients/go/build.sh" "$COSID_CACHE/go-clients" >"$VW/clients/go-build.log" 2>&1
	bash "$VW/test/clients/rust/build.sh" "$COSID_CACHE/rust-clients" >"$VW/clients/rust-build.log" 2>&1
	if ! cluster_start "$data" "$port" "include '$VW/test/cosid.conf'" \
		"listen_addresses = '127.0.0.1'" "cosid.machine_bits = 3"; then
		tail -n 30 "$data/server.log"
		record clients 0 1
		return
	fi
	env PGHOST=127.0.0.1 PGPORT="$port" PGUSER="$PG_USER" NODE_PATH="$modules/node_modules" \
		COSID_CACHE="$COSID_CACHE" COSID_DOCS="$VW/docs" timeout 300 prove -v --exec '' "$VW"/test/clients/*/*_test.* >"$VW/clients.log" 2>&1
	rc=$?
	show_tap "$VW/clients.log"
	[ $rc -eq 0 ] || tail -n 30 "$data/server.log"
	cluster_stop "$data"
	count_tap "$VW/clients.log" $rc clients
}

# make run and make stop, as the README gives them to a new user, from a
# clean clone of this repository (its committed HEAD) on a port and in a
# directory of their own: each check below is one test.  make run installs
# what is missing (apt), so it needs root, as the README says.
# check NAME TEST: one test of suite_run (TEST is evaluated)
check() {
	if eval "$2"; then
		ok=$((ok + 1))
		echo "ok - $1"
	else
		bad=$((bad + 1))
		echo "not ok - $1"
	fi
}

suite_run() {
	local dir clone log=$WORK/run.log ok=0 bad=0 port=${COSID_RUN_TEST_PORT:-54338} data rc
	if [ "$(id -u)" -ne 0 ]; then
		echo "run .. skipped: make run installs packages (apt): it needs root" >"$log"
		cat "$log"
		check_skips run "$log"
		record run 0 "$UNEXPECTED_SKIPS" "$SKIPS"
		return
	fi
	dir=$(mktemp -d "${TMPDIR:-/tmp}/cosid-run-test.XXXXXX")
	chmod 755 "$dir"
	# the clone where the server user may not read it, as a clone in /root is
	# (make run failed there: its demo was read by psql as that user)
	mkdir -m 700 "$dir/private"
	clone=$dir/private/cosid
	data=$dir/data
	git clone -q "$REPO" "$clone"
	(cd "$clone" && COSID_PORT=$port COSID_RUN_DIR=$data make run) >"$log" 2>&1
	rc=$?
	check 'make run exits 0' '[ $rc -eq 0 ]'
	cat "$log"
	check 'make run ends by saying how to connect and stop' \
		'tail -n 3 "$log" | grep -q "^Connect:  .*-p $port -U .* -d cosid$" && tail -n 1 "$log" | grep -q "^Stop:     make stop$"'
	check 'the demo shows a ULID and its time' \
		'grep -qE "^ [0-9A-HJKMNP-TV-Z]{26} \| [0-9]{4}-[0-9]{2}-[0-9]{2} " "$log"'
	check 'gen_ulid_monotonic() gives 5 ULIDs, each above the one before' \
		'grep -E "^ +[1-5] \| [0-9A-HJKMNP-TV-Z]{26}$" "$log" | awk "{print \$3}" | LC_ALL=C sort -C -u &&
		 [ "$(grep -cE "^ +[1-5] \| [0-9A-HJKMNP-TV-Z]{26}$" "$log")" -eq 5 ]'
	check 'the snowflake id unpacks to this server'"'"'s slot 0' \
		'grep -qE "^ [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+[+-][0-9]{2}(:[0-9]{2})? \| +0 \| +[0-9]+$" "$log"'
	check 'the segment generator numbers the orders 1, 2, 3 with their codes' \
		'[ "$(grep -cE "^ +[123] \| O[0-9]{6}[123]$" "$log")" -eq 3 ]'
	check 'the manual slot is active with its window ahead' \
		'grep -qE "^ manual \| +0 \| active \| t$" "$log"'
	check 'the stats rows: 3 ids of trace (snowflake), 3 of order (segment)' \
		'grep -qE "^ trace \| snowflake \| +3 \| +0$" "$log" && grep -qE "^ order \| segment +\| +3 \| +[0-9]+$" "$log"'
	(cd "$clone" && COSID_PORT=$port COSID_RUN_DIR=$data make stop) >"$log.stop" 2>&1
	rc=$?
	check 'make stop exits 0' '[ $rc -eq 0 ]'
	cat "$log.stop"
	check 'make stop says the server stopped' 'grep -q "^run: server in $data stopped$" "$log.stop"'
	check 'the server is gone (no postmaster.pid, nothing on the port)' \
		'[ ! -f "$data/postmaster.pid" ] && ! pg_isready -q -h "$data" -p "$port"'
	(cd "$clone" && COSID_PORT=$port COSID_RUN_DIR=$data make stop) >"$log.stop2" 2>&1
	rc=$?
	check 'make stop again: nothing to stop, exits 0' '[ $rc -eq 0 ] && grep -q "^run: no server running in $data$" "$log.stop2"'
	[ "$bad" -gt 0 ] || rm -rf "$dir"
	record run "$ok" "$bad"
}

# The Debian package (postgresql-15-cosid): built, installed and checked
# with installcheck by test/package/run.sh, which puts the from-source
# install back afterwards.  It replaces 15's cosid files while it runs, so
# it runs last, once; it needs root (apt, dpkg-buildpackage).
suite_package() {
	local log=$WORK/package.log rc ok bad
	if [ "$(id -u)" -ne 0 ]; then
		echo "package .. skipped: it needs root (apt-get, dpkg-buildpackage)" >"$log"
		cat "$log"
		check_skips package "$log"
		record package 0 "$UNEXPECTED_SKIPS" "$SKIPS"
		return
	fi
	bash "$REPO/test/package/run.sh" >"$log" 2>&1
	rc=$?
	sed -E 's/^([0-9]+ passed, [0-9]+ failed)$/(package) \1/' "$log"
	ok=$(sed -nE 's/^([0-9]+) passed, [0-9]+ failed$/\1/p' "$log" | tail -n1)
	bad=$(sed -nE 's/^[0-9]+ passed, ([0-9]+) failed$/\1/p' "$log" | tail -n1)
	ok=${ok:-0}
	bad=${bad:-0}
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	record package "$ok" "$bad"
}

# The suites asked for, in their order: architecture, unit, fuzz and docs first, once; then the
# per-version suites on every version; the package last.
once=()
per_version=()
last=()
for s in "${SUITES[@]}"; do
	case "$s" in
	unit | fuzz | docs) once+=("$s") ;;
	regress | isolation | tap | pgtap | clients) per_version+=("$s") ;;
	architecture | run | package) last+=("$s") ;;
	*)
		echo "test: no suite '$s' (suites: architecture unit fuzz docs regress isolation tap pgtap clients run package)" >&2
		exit 2
		;;
	esac
done

for s in "${once[@]}"; do
	echo "==== $s"
	"suite_$s"
done

if [ ${#per_version[@]} -gt 0 ]; then
	for v in "${VERSIONS[@]}"; do
		PREFIX=
		echo "==== pg$v: building and installing cosid"
		if ! bash "$REPO/scripts/pg.sh" install "$v" >"$WORK/build-pg$v.log" 2>&1; then
			cat "$WORK/build-pg$v.log"
			PREFIX=pg$v/
			record build 0 1
			echo "test: pg$v: cosid did not build or install; not run: ${per_version[*]}"
			continue
		fi
		cat "$WORK/build-pg$v.log"
		use_pg "$v" || { PREFIX=pg$v/; record build 0 1; continue; }
		PREFIX=pg$v/
		# each version gets its own copy of the test files and outputs (and of
		# README.md and docs/, whose marked blocks test/t/071_migrations.pl
		# runs and whose Cookbook python/readme_test.py reads, and of
		# src/slot.h, whose timing constants the lease tests read)
		VW=$WORK/pg$v
		mkdir -p "$VW"
		cp -r "$REPO/sql" "$REPO/expected" "$REPO/test" "$REPO/README.md" "$REPO/docs" "$VW/" && mkdir -p "$VW/src" && cp "$REPO/src/slot.h" "$VW/src/"
		[ "$(id -u)" -ne 0 ] || chown -R postgres:postgres "$VW"
		for s in "${per_version[@]}"; do
			echo "==== pg$v/$s ($("$PG_CONFIG" --version))"
			"suite_$s"
		done
	done
fi

PREFIX=
for s in "${last[@]}"; do
	echo "==== $s"
	"suite_$s"
done

[ ${#FAILED_SUITES[@]} -eq 0 ] || echo "failing suites: ${FAILED_SUITES[*]}"
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ]
