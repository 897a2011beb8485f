#!/usr/bin/env bash
# Hibernate 3.6 against cosid (TAP): compiles CosidHibernateTest.java with javac
# against Debian's Hibernate (libhibernate3-java, its dependencies) and pgjdbc
# and runs it; no Maven.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cp=
for jar in hibernate-core hibernate-commons-annotations geronimo-jpa_2.0_spec geronimo-jta-1.2-spec antlr \
	dom4j commons-collections3 javassist slf4j-api slf4j-nop postgresql; do
	cp=$cp${cp:+:}/usr/share/java/$jar.jar
done
classes=$(mktemp -d "${TMPDIR:-/tmp}/cosid-hibernate.XXXXXX")
trap 'rm -rf "$classes"' EXIT
if ! javac -nowarn -d "$classes" -cp "$cp" "$here/CosidHibernateTest.java" >"$classes/javac.log" 2>&1; then
	sed 's/^/# /' "$classes/javac.log"
	echo "not ok 1 - CosidHibernateTest.java compiles"
	echo "1..1"
	exit 1
fi
java -cp "$cp:$classes" CosidHibernateTest
