#!/usr/bin/env bash
# pgjdbc against cosid (TAP): compiles CosidJdbcTest.java with javac against
# Debian's pgjdbc (libpostgresql-jdbc-java) and runs it; no Maven.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jar=/usr/share/java/postgresql.jar
classes=$(mktemp -d "${TMPDIR:-/tmp}/cosid-jdbc.XXXXXX")
trap 'rm -rf "$classes"' EXIT
if ! javac -nowarn -d "$classes" -cp "$jar" "$here/CosidJdbcTest.java" >"$classes/javac.log" 2>&1; then
	sed 's/^/# /' "$classes/javac.log"
	echo "not ok 1 - CosidJdbcTest.java compiles"
	echo "1..1"
	exit 1
fi
exec java -cp "$jar:$classes" CosidJdbcTest
