#!/usr/bin/env bash
# Install what cosid needs to build, run and test on Debian bookworm, and only
# what is missing.  Needs root (CI runs as root); as another user it names
# what to install and fails.
set -euo pipefail

packages=(
	# build and run
	make gcc postgresql-15 postgresql-server-dev-15 postgresql-client-15
	# C unit tests and fuzzing
	libcmocka-dev clang libclang-rt-14-dev
	# TAP (PostgreSQL::Test::Cluster), a faked clock, pgTAP
	libipc-run-perl faketime postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all packages present"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
