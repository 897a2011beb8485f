#!/usr/bin/env bash
# Builds the tokio-postgres test program into DIR/cosid-tokio-postgres with
# cargo offline against Debian's crates (librust-tokio-postgres-dev and the
# others in /usr/share/cargo/registry, as .cargo/config.toml says), with the
# cargo and rustc on PATH (Debian's, or rustup's).  Once per version of the
# sources, of cargo and rustc and of the registry; cargo's target directory
# DIR/target is kept, so a change rebuilds only what changed.
#
#   test/clients/rust/build.sh DIR     (scripts/test.sh: $COSID_CACHE/rust-clients)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
sum=$({
	cat "$here/Cargo.toml" "$here/.cargo/config.toml" "$here/src/main.rs"
	cargo --version
	rustc --version
	ls /usr/share/cargo/registry
} | sha256sum | cut -c1-16)
[ -f "$dir/$sum.stamp" ] && [ -x "$dir/cosid-tokio-postgres" ] && exit 0
rm -f "$dir/cosid-tokio-postgres" "$dir"/*.stamp
# a copy to build in: the lock file cargo writes (its format depends on
# cargo's version) stays out of the checkout and is made afresh
rm -rf "$dir/src"
mkdir -p "$dir/src/src" "$dir/src/.cargo"
cp "$here/Cargo.toml" "$dir/src/"
cp "$here/.cargo/config.toml" "$dir/src/.cargo/"
cp "$here/src/main.rs" "$dir/src/src/"
(cd "$dir/src" && cargo build --offline --quiet --target-dir "$dir/target")
cp "$dir/target/debug/cosid-tokio-postgres" "$dir/"
touch "$dir/$sum.stamp"
