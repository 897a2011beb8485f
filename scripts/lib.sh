# Shared by scripts/*.sh and bench/run.sh: which PostgreSQL versions the
# project uses, where each lives, and how to run a server as an unprivileged
# user (initdb refuses root).

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Our scripts run under our own make (make test, make deps, make run), which
# exports MAKELEVEL, MAKEFLAGS and the command line's variables.  A nested
# build of someone else's make must not see them: PostgreSQL's build makes its
# generated headers (utils/errcodes.h, ...) only when MAKELEVEL is 0, and
# MAKEFLAGS carries our -j, -s or PG=18 into makefiles that were not written
# for them.  So they are dropped here, for every script, and the builds of
# other projects (PostgreSQL, pglogical, the Debian package) run in
# clean_env's environment, which inherits nothing by accident.
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS MAKEFILES MAKE_TERMOUT MAKE_TERMERR

# clean_env COMMAND...: run COMMAND with only a plain PATH, HOME, the locale
# and TMPDIR of the caller, and whatever VAR=value words precede it.
clean_env() {
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="${HOME:-/root}" LANG=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}" "$@"
}

# The PostgreSQL major versions that make test covers, in order; the first is
# the default of make run and make bench.  Adding a version is adding a word:
# bookworm's own version comes from its packages, every other one is built by
# scripts/pg.sh from Debian's source package postgresql-N (suite sid).
COSID_PG_VERSIONS=${COSID_PG_VERSIONS:-"15 18"}
COSID_PG_DEBIAN=15
# Where scripts/pg.sh keeps downloaded sources and built servers (outside the
# clone, so that a new clone reuses them).
COSID_CACHE=${COSID_CACHE:-/var/cache/cosid}

# pg_config_of VERSION: that version's pg_config (which need not exist yet).
# COSID_PG_CONFIG_<VERSION> names another installation of it (a developer's
# private copy, so that two work trees do not install over each other's
# cosid; PostgreSQL's installations can be moved as a whole); scripts/pg.sh
# then builds no server for that version.
pg_config_of() {
	local own="COSID_PG_CONFIG_$1"
	if [ -n "${!own:-}" ]; then
		echo "${!own}"
	elif [ "$1" = "$COSID_PG_DEBIAN" ]; then
		echo "/usr/lib/postgresql/$1/bin/pg_config"
	else
		echo "$COSID_CACHE/pg$1/bin/pg_config"
	fi
}

# pg_versions: the versions to use, one a line: $PG (make test PG=18) when set,
# otherwise every one of COSID_PG_VERSIONS.  Fails for a version not listed.
pg_versions() {
	local v
	if [ -z "${PG:-}" ]; then
		for v in $COSID_PG_VERSIONS; do echo "$v"; done
		return 0
	fi
	for v in $PG; do
		if ! [[ " $COSID_PG_VERSIONS " == *" $v "* ]]; then
			echo "PG=$v is not one of COSID_PG_VERSIONS ($COSID_PG_VERSIONS)" >&2
			return 1
		fi
		echo "$v"
	done
}

# pg_default_version: the one version make run and make bench use.
pg_default_version() {
	local v
	v=$(pg_versions | head -n1) || return 1
	echo "$v"
}

# use_pg VERSION: point PG_VERSION, PG_CONFIG, PGBIN and PGXS_DIR (the root
# of the installed PGXS tree, holding src/test/regress/pg_regress) at it.
use_pg() {
	PG_VERSION=$1
	PG_CONFIG=$(pg_config_of "$1")
	if [ ! -x "$PG_CONFIG" ]; then
		echo "PostgreSQL $1 is not installed ($PG_CONFIG is missing): run 'make deps PG=$1'" >&2
		return 1
	fi
	PGBIN=$("$PG_CONFIG" --bindir)
	PGXS_DIR=$(cd "$(dirname "$("$PG_CONFIG" --pgxs)")/../.." && pwd)
}

# Scripts that use one version (run.sh, bench/run.sh) get the default one
# ($PG when given) set up here; test.sh switches with use_pg per version.
if [ -z "${COSID_LIB_NO_DEFAULT:-}" ]; then
	PG_VERSION=$(pg_default_version) || exit 2
	if [ -x "$(pg_config_of "$PG_VERSION")" ]; then
		use_pg "$PG_VERSION"
	fi
fi

# As root, servers and clients run as the postgres OS user; otherwise as us.
if [ "$(id -u)" -eq 0 ]; then
	PG_USER=postgres
	as_pg() { runuser -u postgres -- env PATH="$PGBIN:$PATH" "$@"; }
else
	PG_USER=$(id -un)
	as_pg() { env PATH="$PGBIN:$PATH" "$@"; }
fi

# A fresh directory the server user owns, under /tmp unless given.
pg_workdir() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/cosid-$1.XXXXXX")
	chmod 755 "$d"
	[ "$(id -u)" -ne 0 ] || chown postgres:postgres "$d"
	echo "$d"
}

# cluster_start DATADIR PORT [extra postgresql.conf lines...]: initdb (if
# needed) and start a server with cosid preloaded, socket in DATADIR.
cluster_start() {
	local data=$1 port=$2
	shift 2
	if [ ! -f "$data/PG_VERSION" ]; then
		as_pg initdb -D "$data" -A trust -U "$PG_USER" --no-sync >/dev/null
		{
			echo "shared_preload_libraries = 'cosid'"
			echo "port = $port"
			echo "listen_addresses = ''"
			echo "unix_socket_directories = '$data'"
			echo "fsync = off"
			for line in "$@"; do echo "$line"; done
		} >>"$data/postgresql.conf"
	fi
	as_pg pg_ctl -D "$data" -l "$data/server.log" -w -t 60 start >/dev/null
}

cluster_stop() {
	local data=$1
	[ -f "$data/postmaster.pid" ] || return 0
	as_pg pg_ctl -D "$data" -m fast -w stop >/dev/null || true
}

# psql against a cluster started by cluster_start.
cluster_psql() {
	local data=$1 port=$2
	shift 2
	as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$data" -p "$port" "$@"
}
