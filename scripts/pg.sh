#!/usr/bin/env bash
# PostgreSQL servers and cosid builds for every version the project tests.
#
#   scripts/pg.sh server [VERSION ...]   make sure that PostgreSQL is installed
#   scripts/pg.sh install [VERSION ...]  build cosid against it and install it
#
# VERSION defaults to $PG, else every one of COSID_PG_VERSIONS (scripts/lib.sh);
# --default instead of versions: only the first of those (make run, make bench).
#
# server: bookworm's own version (COSID_PG_DEBIAN) comes from its packages
# (scripts/deps.sh installs them).  Any other version N is built from Debian's
# source package postgresql-N of suite sid: this script installs an apt
# sources file of its own (deb-src, sid), fetches the package's upstream
# tarball into $COSID_CACHE/src and builds and installs the server, its
# clients, pg_regress, the isolation tester and the TAP modules into
# $COSID_CACHE/pgN.  A stamp ($COSID_CACHE/pgN.stamp) names the tarball and
# the configure options: while both are unchanged later runs reuse the build;
# a new tarball in sid (or other options) rebuilds it.  pgTAP is SQL only:
# bookworm's postgresql-15-pgtap files are copied into that server's
# extension directory.  Needs root the first time (apt, /var/cache).
#
# install: cosid is built in a copy of its sources per version,
# build/pgN/ in the clone (so that objects of one version never end up in
# another's build, nor in the tree a user builds with make), with -Werror,
# and installed with that version's pg_config.
set -euo pipefail
COSID_LIB_NO_DEFAULT=1
. "$(dirname "$0")/lib.sh"

SOURCES_FILE=/etc/apt/sources.list.d/cosid-src.sources
SOURCES_TEXT='# Written by cosid'"'"'s scripts/pg.sh: Debian'"'"'s source packages of
# PostgreSQL versions that bookworm does not ship (apt-get source only).
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'

# What the suites need and nothing more (no ICU, LLVM or docs), and OpenSSL:
# without it pg_strong_random() reads /dev/urandom on every call, which makes
# gen_random_uuid() and uuidv7() several times slower than in a packaged
# server and skews make bench.  COSID_PG_CONFIGURE_EXTRA adds options (e.g.
# --enable-cassert); a change of options rebuilds.
CONFIGURE_OPTS=(--enable-tap-tests --without-icu --with-readline --with-zlib --with-openssl
	${COSID_PG_CONFIGURE_EXTRA:-})

log() { echo "pg: $*"; }
die() {
	echo "pg: $*" >&2
	exit 1
}

need_root() {
	[ "$(id -u)" -eq 0 ] || die "$1 needs root (apt-get and $COSID_CACHE); run as root, or: sudo make deps PG=${PG:-}"
}

# The sources file, written only when missing or different.  Returns 0 when
# it was (re)written.
write_sources() {
	if [ -f "$SOURCES_FILE" ] && [ "$(cat "$SOURCES_FILE")" = "$SOURCES_TEXT" ]; then
		return 1
	fi
	log "writing $SOURCES_FILE (deb-src, Debian sid)"
	printf '%s\n' "$SOURCES_TEXT" >"$SOURCES_FILE"
	return 0
}

# Refresh the index of our sources file only (the other lists are left alone).
update_index() {
	apt-get update -qq -o Dir::Etc::sourcelist="$SOURCES_FILE" -o Dir::Etc::sourceparts=- \
		-o APT::Get::List-Cleanup=0
}

# The upstream tarball of postgresql-N that the local index knows, e.g.
# postgresql-18_18.1.orig.tar.bz2 (empty when unknown).
orig_tarball() {
	apt-cache showsrc "postgresql-$1" 2>/dev/null |
		sed -nE "s/^ [0-9a-f]{32} [0-9]+ (postgresql-$1_[^ ]+\.orig\.tar\.(gz|bz2|xz))$/\1/p" | sort -V | tail -n1
}

stamp_text() { echo "$1 ${CONFIGURE_OPTS[*]}"; }

server_built() {
	local v=$1 stamp=$COSID_CACHE/pg$1.stamp
	[ -f "$stamp" ] && [ -x "$(pg_config_of "$v")" ] && [ "$(cat "$stamp")" = "$(stamp_text "$2")" ]
}

# Copy bookworm's pgTAP (SQL only) into the server's extension directory.
install_pgtap() {
	local v=$1 ext
	ext="$("$(pg_config_of "$v")" --sharedir)/extension"
	if ! ls /usr/share/postgresql/"$COSID_PG_DEBIAN"/extension/pgtap*.sql >/dev/null 2>&1; then
		log "postgresql-$COSID_PG_DEBIAN-pgtap is not installed: pgTAP is missing from PostgreSQL $v"
		return 0
	fi
	if [ ! -w "$ext" ]; then
		return 0
	fi
	cp -u /usr/share/postgresql/"$COSID_PG_DEBIAN"/extension/pgtap.control \
		/usr/share/postgresql/"$COSID_PG_DEBIAN"/extension/pgtap--*.sql "$ext/"
}

# server VERSION: bookworm's version is a package (deps.sh); others are built.
server() {
	local v=$1 tarball stamp build t0 own="COSID_PG_CONFIG_$1"
	if [ "$v" = "$COSID_PG_DEBIAN" ] || [ -n "${!own:-}" ]; then
		[ -x "$(pg_config_of "$v")" ] || die "PostgreSQL $v is not installed: run scripts/deps.sh"
		return 0
	fi
	stamp=$COSID_CACHE/pg$v.stamp
	if [ "$(id -u)" -ne 0 ]; then
		# without root: whatever is built is used as it is
		[ -x "$(pg_config_of "$v")" ] || need_root "building PostgreSQL $v"
		return 0
	fi
	write_sources || true
	mkdir -p "$COSID_CACHE/src"
	# Refresh our index to notice a new tarball; without network a server
	# already built is good enough.
	if ! update_index; then
		if [ -x "$(pg_config_of "$v")" ]; then
			log "could not refresh the index of $SOURCES_FILE; using PostgreSQL $v as built"
			install_pgtap "$v"
			return 0
		fi
		die "apt-get update of $SOURCES_FILE failed"
	fi
	tarball=$(orig_tarball "$v")
	[ -n "$tarball" ] || die "Debian sid has no source package postgresql-$v (apt-cache showsrc postgresql-$v)"
	if server_built "$v" "$tarball"; then
		install_pgtap "$v"
		return 0
	fi

	exec 9>"$COSID_CACHE/pg$v.lock"
	flock 9
	if server_built "$v" "$tarball"; then # built by another run meanwhile
		install_pgtap "$v"
		return 0
	fi
	t0=$(date +%s)
	if [ ! -f "$COSID_CACHE/src/$tarball" ]; then
		log "downloading the source package postgresql-$v ($tarball)"
		# (as root apt warns that the download is not sandboxed: harmless)
		(cd "$COSID_CACHE/src" && apt-get source -qq --download-only "postgresql-$v") ||
			die "apt-get source --download-only postgresql-$v failed"
		[ -f "$COSID_CACHE/src/$tarball" ] || die "apt-get source did not fetch $tarball"
	fi
	build=$COSID_CACHE/build/pg$v
	log "building PostgreSQL $v from $tarball into $COSID_CACHE/pg$v (a few minutes, once)"
	rm -rf "$build" "$COSID_CACHE/pg$v" "$stamp"
	mkdir -p "$build"
	tar -xf "$COSID_CACHE/src/$tarball" -C "$build" --strip-components=1
	(
		cd "$build"
		clean_env ./configure --prefix="$COSID_CACHE/pg$v" "${CONFIGURE_OPTS[@]}" >configure.log 2>&1 ||
			{ tail -n 30 configure.log; exit 1; }
		# the server, clients, pg_regress, the isolation tester, TAP modules
		clean_env make -j"$(nproc)" -s >make.log 2>&1 || { tail -n 60 make.log; exit 1; }
		clean_env make -s install >install.log 2>&1 || { tail -n 30 install.log; exit 1; }
	) || die "building PostgreSQL $v failed (kept in $build)"
	stamp_text "$tarball" >"$stamp"
	rm -rf "$build"
	# older tarballs and Debian's packaging files are not needed
	find "$COSID_CACHE/src" -maxdepth 1 -type f -name "postgresql-${v}_*" ! -name "$tarball" -delete
	install_pgtap "$v"
	log "PostgreSQL $v built in $(($(date +%s) - t0)) s: $("$(pg_config_of "$v")" --version)"
}

# pglogical VERSION: pglogical for test/t/070_pglogical.pl.  bookworm's
# version has it as a package (postgresql-N-pglogical, scripts/deps.sh); into
# a version built here it is built with PGXS from the upstream tarball of
# Debian's source package pglogical (sid, the same sources file), kept in
# $COSID_CACHE/src, and installed into $COSID_CACHE/pgN, again only when the
# tarball or the server's build changed (stamp $COSID_CACHE/pgN-pglogical.stamp).
# It is optional: a failure is reported and the test skips without it.
pglogical() {
	local v=$1 pgc stamp want tarball build t0
	[ "$v" != "$COSID_PG_DEBIAN" ] || return 0
	[ "$(id -u)" -eq 0 ] || return 0
	pgc=$(pg_config_of "$v")
	stamp=$COSID_CACHE/pg$v-pglogical.stamp
	tarball=$(apt-cache showsrc pglogical 2>/dev/null |
		sed -nE 's/^ [0-9a-f]{32} [0-9]+ (pglogical_[^ ]+\.orig\.tar\.(gz|bz2|xz))$/\1/p' | sort -V | tail -n1) || true
	if [ -z "$tarball" ]; then
		log "Debian sid has no source package pglogical: PostgreSQL $v goes without (070_pglogical skips)"
		return 0
	fi
	want="$tarball $(cat "$COSID_CACHE/pg$v.stamp" 2>/dev/null)"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$("$pgc" --pkglibdir)/pglogical.so" ]; then
		return 0
	fi
	exec 9>"$COSID_CACHE/pg$v.lock"
	flock 9
	t0=$(date +%s)
	if [ ! -f "$COSID_CACHE/src/$tarball" ]; then
		log "downloading the source package pglogical ($tarball)"
		(cd "$COSID_CACHE/src" && apt-get source -qq --download-only pglogical) >/dev/null 2>&1 || true
		if [ ! -f "$COSID_CACHE/src/$tarball" ]; then
			log "could not download $tarball: PostgreSQL $v goes without pglogical (070_pglogical skips)"
			return 0
		fi
	fi
	build=$COSID_CACHE/build/pglogical-pg$v
	rm -rf "$build" "$stamp"
	mkdir -p "$build"
	tar -xf "$COSID_CACHE/src/$tarball" -C "$build" --strip-components=1
	if ! (cd "$build" && clean_env make -s -j"$(nproc)" USE_PGXS=1 PG_CONFIG="$pgc" >make.log 2>&1 &&
		clean_env make -s USE_PGXS=1 PG_CONFIG="$pgc" install >>make.log 2>&1); then
		tail -n 30 "$build/make.log"
		log "building pglogical for PostgreSQL $v failed (kept in $build): 070_pglogical skips there"
		return 0
	fi
	echo "$want" >"$stamp"
	rm -rf "$build"
	find "$COSID_CACHE/src" -maxdepth 1 -type f -name 'pglogical_*' ! -name "$tarball" -delete
	log "pglogical built from $tarball and installed into PostgreSQL $v in $(($(date +%s) - t0)) s"
}

# citus VERSION: Citus for the Citus tests (test/t/081_citus_tables.pl, the
# Citus row of make bench).  No Debian package source has it, so it is built
# from a vendored tarball, citus-*.tar.gz in $COSID_VENDOR (default: the
# directory shared/vendor beside the clone, $REPO/../shared/vendor), with
# PGXS against a server built here (Citus builds against PostgreSQL 16-18;
# bookworm's 15 goes without) and installed into $COSID_CACHE/pgN.  The stamp
# $COSID_CACHE/pgN-citus.stamp names the tarball's sha256, the configure
# options and the server's own stamp: it is rebuilt only when one of them
# changes.  Optional like pglogical: without the tarball, or when the build
# fails, it says why and the Citus tests skip.
CITUS_CONFIGURE_OPTS=(--without-lz4 --without-zstd)
citus() {
	local v=$1 pgc stamp want tarball sum build t0 vendor=${COSID_VENDOR:-$REPO/../shared/vendor}
	[ "$v" != "$COSID_PG_DEBIAN" ] || return 0
	[ "$v" -ge 16 ] || return 0
	[ "$(id -u)" -eq 0 ] || return 0
	pgc=$(pg_config_of "$v")
	stamp=$COSID_CACHE/pg$v-citus.stamp
	tarball=$(ls "$vendor"/citus-*.tar.gz 2>/dev/null | sort -V | tail -n1) || true
	if [ -z "$tarball" ]; then
		log "no Citus tarball (citus-*.tar.gz) in $vendor (COSID_VENDOR): PostgreSQL $v goes without Citus (the Citus tests skip)"
		return 0
	fi
	sum=$(sha256sum "$tarball" | cut -d' ' -f1)
	want="$(basename "$tarball") $sum ${CITUS_CONFIGURE_OPTS[*]} $(cat "$COSID_CACHE/pg$v.stamp" 2>/dev/null)"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$("$pgc" --pkglibdir)/citus.so" ]; then
		return 0
	fi
	exec 9>"$COSID_CACHE/pg$v.lock"
	flock 9
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$("$pgc" --pkglibdir)/citus.so" ]; then
		return 0
	fi
	t0=$(date +%s)
	build=$COSID_CACHE/build/citus-pg$v
	rm -rf "$build" "$stamp"
	mkdir -p "$build"
	tar -xzf "$tarball" -C "$build" --strip-components=1
	log "building Citus from $(basename "$tarball") for PostgreSQL $v (about a minute, once)"
	if ! (cd "$build" && clean_env ./configure PG_CONFIG="$pgc" "${CITUS_CONFIGURE_OPTS[@]}" >configure.log 2>&1 &&
		clean_env make -s -j"$(nproc)" >make.log 2>&1 &&
		clean_env make -s install >>make.log 2>&1); then
		tail -n 30 "$build/configure.log" "$build/make.log" 2>/dev/null
		log "building Citus for PostgreSQL $v failed (kept in $build): the Citus tests skip there"
		return 0
	fi
	echo "$want" >"$stamp"
	rm -rf "$build"
	log "Citus built from $(basename "$tarball") and installed into PostgreSQL $v in $(($(date +%s) - t0)) s"
}

# cosid_install VERSION: build cosid against that version in build/pgN and install.
cosid_install() {
	local v=$1 dst=$REPO/build/pg$1 pgc f id
	pgc=$(pg_config_of "$v")
	[ -x "$pgc" ] || die "PostgreSQL $v is not installed: run 'make deps PG=$v'"
	mkdir -p "$dst"
	# Mirror the files the build reads, keeping their times (so that make
	# rebuilds only what changed), and drop what the tree no longer has.
	# Objects of a build in the tree itself (a plain make, against whatever
	# pg_config that found) are never copied: they may be another version's.
	(cd "$REPO" && tar -cf - --exclude='*.o' --exclude='*.bc' --exclude='*.so' --exclude='*.a' \
		Makefile cosid.control src sql) | (cd "$dst" && tar -xf -)
	while IFS= read -r f; do
		case "$f" in
		*.o | *.bc) [ -e "$REPO/${f%.*}.c" ] || rm -f "$dst/$f" ;;
		*) [ -e "$REPO/$f" ] || rm -f "$dst/$f" ;;
		esac
	done < <(cd "$dst" && find src sql -type f)
	# objects built against another build of the server: start over
	id="$pgc $("$pgc" --version) $("$pgc" --configure)"
	if [ "$(cat "$dst/.pg_build" 2>/dev/null)" != "$id" ]; then
		make -C "$dst" -s PG_CONFIG="$pgc" clean >/dev/null
		echo "$id" >"$dst/.pg_build"
	fi
	log "building cosid against $("$pgc" --version) in build/pg$v"
	make -C "$dst" -s -j"$(nproc)" PG_CONFIG="$pgc" COSID_WERROR=1 all
	make -C "$dst" -s PG_CONFIG="$pgc" install
}

cmd=${1:-}
[ $# -eq 0 ] || shift
if [ "${1:-}" = --default ]; then
	versions=("$(pg_default_version)") || exit 2
else
	versions=("$@")
	[ ${#versions[@]} -gt 0 ] || mapfile -t versions < <(pg_versions)
	[ ${#versions[@]} -gt 0 ] || exit 2
fi
case "$cmd" in
server)
	for v in "${versions[@]}"; do
		server "$v"
		pglogical "$v"
		citus "$v"
	done
	;;
server-only)
	# make run: the server alone, without the test suites' pglogical and Citus
	for v in "${versions[@]}"; do server "$v"; done
	;;
install)
	for v in "${versions[@]}"; do cosid_install "$v"; done
	;;
*)
	echo "usage: $0 server|server-only|install [VERSION ...]" >&2
	exit 2
	;;
esac
