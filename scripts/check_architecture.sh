#!/usr/bin/env bash
# Checks that ARCHITECTURE.md's module graph is the one the sources have.
#
#   scripts/check_architecture.sh [REPO]
#
# The graph is the fenced block of ARCHITECTURE.md whose info string is
# "modules": one line per module of src/ (a file's name without .c or .h),
# "module -> the modules it includes", a "#" starting a comment.  The
# sources' graph is derived from the #include "x.h" lines of src/*.c and
# src/*.h, where src/x.h exists: module a includes module b when a.c or a.h
# has #include "b.h".  Left out of both, as ARCHITECTURE.md says, are the
# modules below everything: util and compat (checked to include no module of
# src/ but each other) and src/core/ (checked to include nothing outside itself:
# it is plain C without PostgreSQL).
#
# Fails (exit 1) naming every edge that is in one graph and not the other,
# every module of src/ the graph does not list, every line it cannot read,
# and a cycle among the sources' modules; prints "architecture: N modules, N edges, as ARCHITECTURE.md says"
# otherwise.  test.sh runs it as the suite "architecture".
set -uo pipefail

REPO=${1:-$(cd "$(dirname "$0")/.." && pwd)}
DOC=$REPO/ARCHITECTURE.md
SRC=$REPO/src
BOTTOM=" util compat "
problems=0

problem() {
	echo "architecture: $*" >&2
	problems=$((problems + 1))
}

[ -f "$DOC" ] || { echo "architecture: $DOC not found" >&2; exit 1; }

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

# The document's edges, "a b" per line; the modules it lists into $WORK/listed.
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
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

code_edges | awk -v bottom="$BOTTOM" '{ if (index(bottom, " " $2 " ") == 0) print }' >"$WORK/code"

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
	problem "src/'s modules include each other in a cycle: $(sed -nE 's/^tsort: //p' "$WORK/loop" | grep -v 'input contains a loop' | sort -u | tr '\n' ' ')"
fi

# The edges.
while read -r a b; do
	problem "src/$a includes $b.h, but ARCHITECTURE.md's graph has no edge $a -> $b: add it (or drop the include)"
done < <(comm -23 "$WORK/code" "$WORK/doc")
while read -r a b; do
	problem "ARCHITECTURE.md's graph has $a -> $b, but src/$a.* does not include $b.h: drop the edge (or include what it uses)"
done < <(comm -13 "$WORK/code" "$WORK/doc")

if [ "$problems" -gt 0 ]; then
	echo "architecture: $problems problem(s): ARCHITECTURE.md's module graph and src/'s #include lines differ" >&2
	exit 1
fi
echo "architecture: $(sort -u "$WORK/listed" | wc -l) modules, $(wc -l <"$WORK/doc") edges, as ARCHITECTURE.md says"
