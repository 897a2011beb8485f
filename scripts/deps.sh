#!/usr/bin/env bash
# Install what cosid needs to build, run and test on Debian bookworm, and only
# what is missing, then the PostgreSQL versions that bookworm does not ship
# (scripts/pg.sh builds them once into /var/cache/cosid).
#
#   scripts/deps.sh             every suite's needs (make test), for $PG, else
#                               every one of COSID_PG_VERSIONS
#   scripts/deps.sh --run       only what building and running cosid needs,
#                               for the first of those (make run): make, gcc,
#                               the server and its headers; a version bookworm
#                               lacks adds what building it from source needs
#   scripts/deps.sh --default   everything, for the first version (make bench)
#
# Needs root (CI runs as root); as another user it names what to install and
# fails.
set -euo pipefail
COSID_LIB_NO_DEFAULT=1
. "$(dirname "$0")/lib.sh"

lean=0
if [ "${1:-}" = --default ] || [ "${1:-}" = --run ]; then
	[ "$1" = --default ] || lean=1
	versions=("$(pg_default_version)") || exit 2
else
	mapfile -t versions < <(pg_versions)
	[ ${#versions[@]} -gt 0 ] || exit 2
fi

# build and run (bookworm's PostgreSQL)
run_packages=(make gcc postgresql-"$COSID_PG_DEBIAN" postgresql-server-dev-"$COSID_PG_DEBIAN"
	postgresql-client-"$COSID_PG_DEBIAN")
packages=(
	"${run_packages[@]}"
	# (bookworm's pgTAP also serves the other versions)
	# C unit tests and fuzzing
	libcmocka-dev clang libclang-rt-14-dev
	# TAP (PostgreSQL::Test::Cluster), a faked clock, pgTAP
	libipc-run-perl faketime postgresql-"$COSID_PG_DEBIAN"-pgtap libtap-parser-sourcehandler-pgtap-perl
	# the client tests (test/clients): Python and Java drivers, ORM and migrations
	python3-psycopg python3-psycopg2 python3-sqlalchemy python3-alembic python3-asyncpg python3-django
	libpostgresql-jdbc-java openjdk-17-jdk-headless libhibernate3-java libjavassist-java libslf4j-java
	# Go (pgx v4, GOPATH mode) and Rust (tokio-postgres, cargo offline on Debian's crates)
	golang-go golang-github-jackc-pgx-v4-dev
	cargo rustc librust-tokio-postgres-dev librust-postgres-types-dev librust-uuid-dev librust-tokio-dev
	librust-tokio-macros-dev librust-futures-util-dev librust-bytes-dev
	# active-active replication (test/t/070_pglogical.pl; scripts/pg.sh builds it for the others)
	postgresql-"$COSID_PG_DEBIAN"-pglogical
	# the nemesis (test/t/095_nemesis.pl: network namespaces, dropped packets) and
	# the fleet benchmark through PgBouncer (bench/fleet.sh)
	iproute2 nftables util-linux pgbouncer
	# HA managers (test/t/076_patroni.pl with one etcd, 077_pg_auto_failover.pl: its
	# monitor extension exists for bookworm's PostgreSQL only)
	patroni python3-etcd etcd-server postgresql-"$COSID_PG_DEBIAN"-auto-failover pg-auto-failover-cli
)
# Node.js and npm for the client tests: Debian's, unless the machine has its own
# (NodeSource's nodejs brings npm and conflicts with Debian's npm package)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	packages+=(nodejs npm)
fi
[ "$lean" -eq 0 ] || packages=("${run_packages[@]}")
# (make run PG=18 builds that server: it adds what building from source needs)
for v in "${versions[@]}"; do
	if [ "$v" != "$COSID_PG_DEBIAN" ]; then
		# to build PostgreSQL from source (scripts/pg.sh)
		packages+=(libc6-dev bison flex perl libreadline-dev zlib1g-dev libssl-dev debian-archive-keyring)
		break
	fi
done

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all packages present"
elif [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
else
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ "$lean" -eq 1 ]; then
	bash "$REPO/scripts/pg.sh" server-only "${versions[@]}"
	exit 0
fi
bash "$REPO/scripts/pg.sh" server "${versions[@]}"
# the npm packages of the client tests (pg, ulid, knex, typeorm, sequelize,
# drizzle-orm, drizzle-kit, pg-promise), once per package-lock.json
bash "$REPO/test/clients/node/install.sh" "$COSID_CACHE/node-clients"
