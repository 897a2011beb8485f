# Shared by scripts/*.sh and bench/run.sh: where PostgreSQL lives and how to
# run a server as an unprivileged user (initdb refuses root).

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
PGXS_DIR=$(cd "$(dirname "$("$PG_CONFIG" --pgxs)")/../.." && pwd)

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
