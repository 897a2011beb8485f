#!/usr/bin/env bash
# npm ci of the client tests' packages (package-lock.json) into DIR/node_modules,
# once per version of package.json and package-lock.json; npm's download cache
# is DIR/../npm-cache, so a new lock file downloads only what is new.
#
#   test/clients/node/install.sh DIR     (scripts/test.sh: $COSID_CACHE/node-clients)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
sum=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
[ -f "$dir/$sum.stamp" ] && [ -d "$dir/node_modules" ] && exit 0
rm -rf "$dir/node_modules" "$dir"/*.stamp
cp "$here/package.json" "$here/package-lock.json" "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --prefer-offline --cache "$dir/../npm-cache")
touch "$dir/$sum.stamp"
