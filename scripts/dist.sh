#!/usr/bin/env bash
# make dist: the PGXN release archive cosid-<version>.zip, written to the top of
# the project (or $COSID_DIST_DIR).  It is `git archive` of HEAD under the
# prefix cosid-<version>/, so uncommitted changes are not in it.  The
# META.json inside the archive is checked against the PGXN Meta Spec 1.0.0
# and against cosid.control (test/package/pgxn_meta.pl); an archive that
# fails is removed.  Upload the result at https://manager.pgxn.org/.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
OUT=${COSID_DIST_DIR:-$REPO}

git rev-parse --verify -q HEAD >/dev/null || { echo "dist: no commit to archive" >&2; exit 1; }
# the version is the one HEAD's META.json declares
version=$(git show HEAD:META.json | perl -MJSON::PP -0777 -ne 'print JSON::PP->new->decode($_)->{version}')
name=cosid-$version
zip=$OUT/$name.zip

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "dist: note: the work tree has uncommitted changes; the archive holds HEAD ($(git rev-parse --short HEAD)) only"
fi

mkdir -p "$OUT"
rm -f "$zip"
git archive --format=zip --prefix="$name/" -o "$zip" HEAD

# Unpack the archive as a PGXN client would and check what it holds.
check=$(mktemp -d "${TMPDIR:-/tmp}/cosid-dist.XXXXXX")
trap 'rm -rf "$check"' EXIT
perl -MIO::Uncompress::Unzip=:all -MFile::Path=make_path -MFile::Basename=dirname -e '
	my ($zip, $dir) = @ARGV;
	my %tops;
	my $u = IO::Uncompress::Unzip->new($zip) or die "dist: cannot read $zip: $UnzipError\n";
	for (my $s = 1; $s > 0; $s = $u->nextStream) {
		my $name = $u->getHeaderInfo->{Name};
		die "dist: unsafe path in archive: $name\n" if $name =~ m{^/|(^|/)\.\.(/|$)};
		$tops{(split m{/}, $name)[0]} = 1;
		next if $name =~ m{/$};
		make_path(dirname("$dir/$name"));
		open my $fh, ">:raw", "$dir/$name" or die "$dir/$name: $!\n";
		my $buf;
		print $fh $buf while $u->read($buf) > 0;
		close $fh;
	}
	die "dist: the archive must hold exactly one top directory, not: @{[sort keys %tops]}\n"
		unless keys %tops == 1;
' "$zip" "$check"

if [ ! -f "$check/$name/META.json" ] ||
	! perl "$REPO/test/package/pgxn_meta.pl" --control "$check/$name/cosid.control" "$check/$name/META.json" |
	sed "s|$check/||g"; then
	echo "dist: $name.zip does not pass the PGXN Meta Spec check; removed" >&2
	rm -f "$zip"
	exit 1
fi
for f in LICENSE README.md Makefile cosid.control $(git ls-tree --name-only HEAD docs/ | grep '\.md$'); do
	[ -f "$check/$name/$f" ] || { echo "dist: $f missing from the archive; removed" >&2; rm -f "$zip"; exit 1; }
done

echo "dist: wrote $zip ($(wc -c <"$zip") bytes, $(find "$check/$name" -type f | wc -l) files, from $(git rev-parse --short HEAD))"
