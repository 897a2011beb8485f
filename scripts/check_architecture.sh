#!/usr/bin/env bash
# Checks that ARCHITECTURE.md's module graph is the one the sources have,
# at the #include level and at link level, and that every symbol cosid
# exports is prefixed.
#
#   scripts/check_architecture.sh [REPO [OBJDIR]]
#
# The graph is the fenced block of ARCHITECTURE.md whose info string is
# "modules": one line per module of src/ (a file's name without .c or .h),
# "module -> the modules it uses", a "#" starting a comment.  The sources'
# graph has an edge a -> b when a.c or a.h has #include "b.h" (where src/b.h
# exists), and, with OBJDIR (the directory of a build's src/*.o, e.g.
# build/pg15/src, which scripts/test.sh passes), when a.o uses a symbol that
# b.o defines (nm): so a module that calls another through a header of a
# third is seen.  Left out of both, as ARCHITECTURE.md says, are the
# modules below everything: util and compat (checked to include no module of
# src/ but each other) and src/core/ (checked to include nothing outside itself:
# it is plain C without PostgreSQL).
#
# With OBJDIR it also checks that every symbol the objects define for the
# linker (src/*.o, src/core/*.o) starts with cosid_, so that none clashes
# with another library loaded into the same backend; the only others are
# PostgreSQL's entry points (_PG_init, Pg_magic_func, pg_finfo_*) and the SQL
# functions whose C names the released scripts (sql/cosid--1.0.sql to 1.3's)
# fixed: a server running those scripts' functions needs those symbols.
#
# ARCHITECTURE.md must fit on a screen, so that it is read and its diffs can
# be reviewed: at most DOC_MAX_BYTES (12,288) bytes and lines of at most
# DOC_MAX_COLUMNS (120) characters.  The detail goes into the comments of the
# files it describes.
#
# Fails (exit 1) naming every edge that is in one graph and not the other,
# every module of src/ the graph does not list, every line it cannot read,
# a cycle among the sources' modules (includes and links together), a
# symbol without the prefix, and an ARCHITECTURE.md over its size or width; prints "architecture: N modules, N edges, as
# ARCHITECTURE.md says" otherwise.  test.sh runs it as the suite
# "architecture".
set -uo pipefail

REPO=${1:-$(cd "$(dirname "$0")/.." && pwd)}
OBJDIR=${2:-}
DOC=$REPO/ARCHITECTURE.md
SRC=$REPO/src
BOTTOM=" util compat "
DOC_MAX_BYTES=12288
DOC_MAX_COLUMNS=120
problems=0

problem() {
	echo "architecture: $*" >&2
	problems=$((problems + 1))
}

[ -f "$DOC" ] || { echo "architecture: $DOC not found" >&2; exit 1; }

# ARCHITECTURE.md fits on a screen: its size, and each line's width in
# characters (UTF-8: an arrow is one).
doc_bytes=$(wc -c <"$DOC")
if [ "$doc_bytes" -gt "$DOC_MAX_BYTES" ]; then
	problem "ARCHITECTURE.md is $doc_bytes bytes, over $DOC_MAX_BYTES: it must fit on a screen; move the detail into the comments of the files it describes"
fi
doc_widest=0
while read -r n width; do
	[ "$width" -gt "$doc_widest" ] && doc_widest=$width
	if [ "$width" -gt "$DOC_MAX_COLUMNS" ]; then
		problem "ARCHITECTURE.md:$n is $width characters wide, over $DOC_MAX_COLUMNS: wrap it, or move the detail into the comments of the files it describes"
	fi
done < <(LC_ALL=C.UTF-8 bash -c 'n=0; while IFS= read -r l || [ -n "$l" ]; do n=$((n + 1)); echo "$n ${#l}"; done' <"$DOC")

# The modules of src/: every x of src/x.c and src/x.h.
mapfile -t MODULES < <(cd "$SRC" && ls ./*.c ./*.h | sed -E 's|^\./||; s/\.[ch]$//' | sort -u)
is_module() {
	local m
	for m in "${MODULES[@]}"; do [ "$m" = "$1" ] && return 0; done
	return 1
}

# The sources' edges, "a b" per line.
code_edges() {
	local f m d
	for f in "$SRC"/*.c "$SRC"/*.h; do
		m=$(basename "$f")
		m=${m%.*}
		sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"/]+)\.h".*/\1/p' "$f" |
			while read -r d; do
				[ "$d" != "$m" ] && [ -f "$SRC/$d.h" ] && echo "$m $d"
			done
	done | sort -u
}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The link-level edges, "a b" per line: a.o uses a symbol b.o defines.
link_edges() {
	local o m
	for o in "$OBJDIR"/*.o; do
		m=$(basename "$o" .o)
		nm -g --defined-only "$o" | awk -v m="$m" 'NF == 3 && $2 ~ /[TDBRCV]/ { print $3, m }'
	done | sort -k1,1 >"$WORK/defined"
	for o in "$OBJDIR"/*.o; do
		m=$(basename "$o" .o)
		nm -u "$o" | awk -v m="$m" '{ print $NF, m }'
	done | sort -k1,1 >"$WORK/used"
	join "$WORK/used" "$WORK/defined" | awk '$2 != $3 { print $2, $3 }' | sort -u
}

# The exported symbols without the prefix that may not have it.
unprefixed_symbols() {
	local sym
	nm -g --defined-only "$OBJDIR"/*.o "$OBJDIR"/core/*.o | awk 'NF == 3 && $2 ~ /[TDBRCV]/ { print $3 }' | sort -u >"$WORK/exported"
	while read -r sym; do
		case "$sym" in cosid_* | _PG_init | Pg_magic_func | pg_finfo_*) continue ;; esac
		# an SQL function of a released script, which names it (or is named so)
		if grep -qx "pg_finfo_$sym" "$WORK/exported" &&
			grep -qw "$sym" "$REPO"/sql/cosid--1.[0-3].sql "$REPO"/sql/cosid--1.[0-2]--1.[1-3].sql; then
			continue
		fi
		echo "$sym"
	done <"$WORK/exported"
}

# The document's edges, "a b" per line; the modules it lists into $WORK/listed.
awk -v doc="$DOC" -v listed="$WORK/listed" -v bad="$WORK/bad" '
	/^```modules[[:space:]]*$/ { inside = 1; found = 1; next }
	inside && /^```/ { inside = 0; next }
	!inside { next }
	{
		line = $0
		sub(/#.*/, "", line)
		if (line ~ /^[[:space:]]*$/)
			next
		if (line !~ /^[[:space:]]*[a-z_0-9]+[[:space:]]*->([[:space:]]+[a-z_0-9]+)*[[:space:]]*$/) {
			print doc ":" NR ": not \"module -> module ...\": " $0 > bad
			next
		}
		split(line, part, "->")
		gsub(/[[:space:]]/, "", part[1])
		print part[1] > listed
		n = split(part[2], deps, /[[:space:]]+/)
		for (i = 1; i <= n; i++)
			if (deps[i] != "")
				print part[1], deps[i]
	}
	END {
		if (!found)
			print doc ": no fenced block \"```modules\" (the module graph)" > bad
	}
' "$DOC" | sort -u >"$WORK/doc"
touch "$WORK/listed" "$WORK/bad"
while read -r line; do problem "$line"; done <"$WORK/bad"

{
	code_edges
	if [ -n "$OBJDIR" ]; then
		if ! ls "$OBJDIR"/*.o >/dev/null 2>&1; then
			problem "no objects in $OBJDIR: build cosid first (scripts/pg.sh install)"
		else
			link_edges | tee "$WORK/link"
		fi
	fi
} | sort -u | awk -v bottom="$BOTTOM" '{ if (index(bottom, " " $1 " ") == 0 && index(bottom, " " $2 " ") == 0) print }' >"$WORK/code"
touch "$WORK/link"
if [ -n "$OBJDIR" ] && ls "$OBJDIR"/*.o >/dev/null 2>&1; then
	while read -r sym; do
		problem "the symbol $sym of cosid.so lacks the prefix cosid_ (it can clash with another library in the same backend): rename it, or make it static"
	done < <(unprefixed_symbols)
fi

# util and compat: below everything.
code_edges | while read -r a b; do
	case "$BOTTOM" in *" $a "*) case "$BOTTOM" in *" $b "*) ;; *) echo "$a $b" ;; esac ;; esac
done >"$WORK/upward"
while read -r a b; do
	problem "src/$a includes $b.h, but $a is below every module (it may include only PostgreSQL's headers, src/core/ and util or compat)"
done <"$WORK/upward"

# src/core/: nothing outside it.
for f in "$SRC"/core/*.c "$SRC"/core/*.h; do
	sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/p' "$f" | while read -r d; do
		[ -f "$SRC/core/$d" ] || [ -f "$SRC/core/${d#core/}" ] || echo "src/core/$(basename "$f") includes \"$d\", which is not in src/core/ (core has no PostgreSQL or src/ header)"
	done
done >"$WORK/core"
while read -r line; do problem "$line"; done <"$WORK/core"

# Every module listed, and only modules.
for m in "${MODULES[@]}"; do
	case "$BOTTOM" in *" $m "*) continue ;; esac
	grep -qxF "$m" "$WORK/listed" || problem "module $m (src/$m.*) is missing from the graph in ARCHITECTURE.md: add a line \"$m -> ...\""
done
while read -r a b; do
	is_module "$a" || problem "ARCHITECTURE.md's graph names $a, which is not a module of src/"
	is_module "$b" || problem "ARCHITECTURE.md's graph names $b, which is not a module of src/"
done <"$WORK/doc"

# No cycle (ARCHITECTURE.md says there is none): tsort names the modules of a loop.
if ! tsort "$WORK/code" >/dev/null 2>"$WORK/loop"; then
	problem "src/'s modules use each other in a cycle: $(sed -nE 's/^tsort: //p' "$WORK/loop" | grep -v 'input contains a loop' | sort -u | tr '\n' ' ')"
fi

# The edges.
while read -r a b; do
	if grep -qx "$a $b" "$WORK/link"; then
		problem "src/$a.o uses symbols of src/$b.o, but ARCHITECTURE.md's graph has no edge $a -> $b: add it (or stop using them)"
	else
		problem "src/$a includes $b.h, but ARCHITECTURE.md's graph has no edge $a -> $b: add it (or drop the include)"
	fi
done < <(comm -23 "$WORK/code" "$WORK/doc")
while read -r a b; do
	problem "ARCHITECTURE.md's graph has $a -> $b, but src/$a.* neither includes $b.h nor uses its symbols: drop the edge"
done < <(comm -13 "$WORK/code" "$WORK/doc")

if [ "$problems" -gt 0 ]; then
	echo "architecture: $problems problem(s): ARCHITECTURE.md and src/ differ, or ARCHITECTURE.md does not fit on a screen" >&2
	exit 1
fi
echo "architecture: $(sort -u "$WORK/listed" | wc -l) modules, $(wc -l <"$WORK/doc") edges ($(grep -vcE " (util|compat)$" "$WORK/link") of them at link level), as ARCHITECTURE.md says; no cycle${OBJDIR:+, every exported symbol prefixed}; ARCHITECTURE.md $doc_bytes bytes, lines of at most $doc_widest characters"
