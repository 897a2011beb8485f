#!/usr/bin/env bash
# The "package" suite: cosid as a Debian user gets it.
#
#   test/package/run.sh
#
# As root on Debian bookworm: checks META.json against the PGXN Meta Spec,
# installs the build dependencies that debian/control names (apt), builds
# postgresql-15-cosid with dpkg-buildpackage in a scratch copy of the tree
# (nothing is built in the work tree), installs the .deb with apt-get, starts
# a scratch server with cosid preloaded as the postgres user and runs
# `make installcheck` (the pg_regress and isolation suites) against what the
# package installed: twice on its temporary instances, once against that
# server.  dpkg-buildpackage itself runs them too (debian/rules).  Then it
# removes the package and puts back any cosid
# files that were there before and belonged to no package (a `make install`
# from source), so the machine is left as it was found.
#
# Ends with "N passed, N failed"; exits non-zero on any failure.  The scratch
# directory (build log, server log, regression.diffs) is kept on failure or
# with COSID_KEEP=1.  COSID_PKG_PORT sets the server's port (default 54361).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PGV=15
PGBIN=/usr/lib/postgresql/$PGV/bin
PKG=postgresql-$PGV-cosid
PORT=${COSID_PKG_PORT:-54361}

if [ "$(id -u)" -ne 0 ]; then
	echo "package: must run as root (it installs packages with apt and dpkg)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# an outer make's flags (make test PG=18 -j2) must not reach the package
# build: lib.sh drops them, and the build runs in its clean_env
COSID_LIB_NO_DEFAULT=1
. "$REPO/scripts/lib.sh"
unset PG_CONFIG

PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok: $*"; }
not_ok() { FAILED=$((FAILED + 1)); echo "FAILED: $*"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cosid-package.XXXXXX")
chmod 755 "$WORK"
SRC=$WORK/cosid
DATA=$WORK/data
INSTALLED=0      # we installed the package and must remove it
BACKUP=          # tarball of cosid files that make install had put there

as_pg() { runuser -u postgres -- env PATH="$PGBIN:$PATH" "$@"; }

cleanup() {
	if [ -f "$DATA/postmaster.pid" ]; then
		as_pg pg_ctl -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	if [ "$INSTALLED" = 1 ]; then
		if apt-get remove -y -qq "$PKG" >"$WORK/remove.log" 2>&1; then
			echo "package: removed $PKG"
		else
			cat "$WORK/remove.log"
			echo "package: could not remove $PKG" >&2
		fi
	fi
	if [ -n "$BACKUP" ]; then
		tar -xpf "$BACKUP" -C / && echo "package: put back the cosid files installed from source"
	fi
	if [ "${COSID_KEEP:-0}" = 1 ] || [ "$FAILED" -gt 0 ]; then
		echo "package: outputs kept in $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
	exit
}

# 1. META.json: the PGXN Meta Spec 1.0.0 and cosid.control
if perl "$REPO/test/package/pgxn_meta.pl" --root "$REPO" --control "$REPO/cosid.control" "$REPO/META.json"; then
	ok "META.json validates"
else
	not_ok "META.json validates"
fi

# 2. a scratch copy of the tree: tracked and untracked files, none ignored
#    (no objects, no cosid.so, no tmp/)
mkdir -p "$SRC"
if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$REPO" && git ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf -) | tar -xf - -C "$SRC"
else
	cp -a "$REPO/." "$SRC/"
	rm -rf "$SRC/tmp" "$SRC/build"
	find "$SRC" \( -name '*.o' -o -name '*.so' -o -name '*.bc' \) -delete
fi

# 3. build dependencies, as debian/control lists them
if ! command -v dpkg-checkbuilddeps >/dev/null; then
	apt-get update -qq && apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null
fi
if ! (cd "$SRC" && dpkg-checkbuilddeps >/dev/null 2>&1); then
	echo "package: installing the build dependencies (apt-get build-dep)"
	apt-get update -qq
	(cd "$SRC" && apt-get build-dep -y -qq --no-install-recommends ./ >"$WORK/build-dep.log" 2>&1) ||
		{ cat "$WORK/build-dep.log"; not_ok "build dependencies"; finish; }
fi

# 4. the package, as Debian builds it (its tests are ours to run, below)
echo "package: dpkg-buildpackage -us -uc -b (log: build.log)"
start=$(date +%s)
if (cd "$SRC" && clean_env DEBIAN_FRONTEND=noninteractive dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1; then
	ok "dpkg-buildpackage ($(($(date +%s) - start)) s)"
else
	tail -n 40 "$WORK/build.log"
	not_ok "dpkg-buildpackage"
	finish
fi
version=$(cd "$SRC" && dpkg-parsechangelog -S Version)
deb=$WORK/${PKG}_${version}_$(dpkg --print-architecture).deb
if [ -f "$deb" ]; then
	ok "built $(basename "$deb")"
else
	ls "$WORK"
	not_ok "no $(basename "$deb")"
	finish
fi

# 5. install it; keep aside what a `make install` from source left in the
#    same places (dpkg overwrites such files, and removing the package would
#    delete them)
pre=$(dpkg-query -W -f='${db:Status-Status}' "$PKG" 2>/dev/null || true)
if [ "$pre" != installed ]; then
	dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||' >"$WORK/files"
	: >"$WORK/unowned"
	while read -r f; do
		[ -e "/$f" ] && ! dpkg -S "/$f" >/dev/null 2>&1 && echo "$f" >>"$WORK/unowned"
	done <"$WORK/files"
	if [ -s "$WORK/unowned" ]; then
		BACKUP=$WORK/from-source.tar
		tar -cpf "$BACKUP" -C / -T "$WORK/unowned"
		echo "package: set aside $(wc -l <"$WORK/unowned") cosid files installed from source"
	fi
fi
if apt-get install -y -qq "$deb" >"$WORK/install.log" 2>&1; then
	[ "$pre" = installed ] || INSTALLED=1
	ok "apt-get install ./$(basename "$deb")"
else
	cat "$WORK/install.log"
	not_ok "apt-get install ./$(basename "$deb")"
	finish
fi
libdir=$("$PGBIN/pg_config" --pkglibdir)
sharedir=$("$PGBIN/pg_config" --sharedir)
owner_so=$(dpkg -S "$libdir/cosid.so" 2>/dev/null | cut -d: -f1)
owner_ctl=$(dpkg -S "$sharedir/extension/cosid.control" 2>/dev/null | cut -d: -f1)
if [ "$owner_so" = "$PKG" ] && [ "$owner_ctl" = "$PKG" ]; then
	ok "$PKG owns $libdir/cosid.so and $sharedir/extension/cosid.control"
else
	not_ok "the package installed elsewhere than make install does ($owner_so, $owner_ctl)"
fi

# 6. a scratch server with cosid preloaded, as the postgres user
chown -R postgres:postgres "$WORK"
as_pg initdb -D "$DATA" -A trust -U postgres --no-sync >"$WORK/initdb.log" 2>&1 ||
	{ cat "$WORK/initdb.log"; not_ok "initdb"; finish; }
cat >>"$DATA/postgresql.conf" <<CONF
shared_preload_libraries = 'cosid'
port = $PORT
listen_addresses = ''
unix_socket_directories = '$DATA'
fsync = off
CONF
if as_pg pg_ctl -D "$DATA" -l "$DATA/server.log" -w -t 60 start >/dev/null; then
	ok "server started with the packaged cosid preloaded"
else
	tail -n 30 "$DATA/server.log"
	not_ok "server start"
	finish
fi
export PGHOST=$DATA PGPORT=$PORT PGUSER=postgres
pg_psql() { as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# README's "A first generator", verbatim, in a database of its own
readme_sql=$(awk '/^#+ A first generator/ {f = 1} f && /^```sql/ {g = 1; next} g && /^```/ {exit} g' "$SRC/README.md")
want_version=$(sed -nE "s/^\s*default_version\s*=\s*'([^']*)'.*/\1/p" "$SRC/cosid.control")
if [ -z "$readme_sql" ]; then
	not_ok "README.md has no sql block under \"## A first generator\""
elif got=$(pg_psql -d postgres -c "CREATE DATABASE cosid_readme" 2>&1 &&
	echo "$readme_sql" | pg_psql -d cosid_readme -F ' ' -f - 2>&1 &&
	pg_psql -d cosid_readme -c "SELECT extversion FROM pg_extension WHERE extname = 'cosid'" 2>&1); then
	echo "$got" | sed 's/^/  /'
	# two ids from INSERT ... RETURNING, two unpacked rows of slot 0, then the version
	if [ "$(echo "$got" | tail -n1)" = "$want_version" ] &&
		[ "$(echo "$got" | grep -cE '^(tea|cake) .* 0 [0-9]+$')" = 2 ]; then
		ok "README's first generator works; CREATE EXTENSION cosid gives version $want_version"
	else
		not_ok "README's first generator (want two unpacked ids of slot 0, extension version $want_version)"
	fi
else
	echo "$got"
	not_ok "README's first generator"
fi
pg_psql -d postgres -c "DROP DATABASE IF EXISTS cosid_readme" >/dev/null 2>&1

# 7. the regression suite against the installed package, in the scratch copy
#    (pg_regress and isolation; nothing is built there): make installcheck on
#    temporary servers of its own, twice in a row (it must leave nothing that
#    stops a second run), then against the running scratch server
installcheck() {
	local key=$1 name=$2 log=$WORK/installcheck-$1.log rc good bad
	shift 2
	echo "package: make installcheck $* ($name)"
	as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
		make -C "$SRC" installcheck PG_CONFIG="$PGBIN/pg_config" "$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	# pg_regress lines: "test x ... ok" up to PostgreSQL 15, "ok 1 - x" from 16 on
	good=$(grep -cE '\.\.\. ok|^ok [0-9]+ ' "$log")
	bad=$(grep -cE '\.\.\. (FAILED|failed)|^not ok [0-9]+ ' "$log")
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ] || bad=1
	if [ "$rc" -ne 0 ]; then
		find "$SRC" -name regression.diffs -exec cat {} +
	fi
	PASSED=$((PASSED + good))
	FAILED=$((FAILED + bad))
	echo "== installcheck ($name): $good passed, $bad failed"
}
installcheck temp1 "temporary instance, first run"
installcheck temp2 "temporary instance, second run"
if grep -qE '^### PostgreSQL [0-9]+ installcheck ###' "$WORK/build.log" &&
	grep -qE '^(ok [0-9]+ |test .* \.\.\. ok)' "$WORK/build.log" &&
	! grep -qE '^not ok [0-9]+ |\.\.\. FAILED' "$WORK/build.log"; then
	ok "dpkg-buildpackage ran make installcheck on pg_buildext's temporary cluster"
else
	not_ok "dpkg-buildpackage did not run the regression suites (debian/rules override_dh_pgxs_test)"
fi
installcheck existing "the running scratch server" EXISTING_SERVER=1

as_pg pg_ctl -D "$DATA" -m fast -w stop >/dev/null || true
finish
