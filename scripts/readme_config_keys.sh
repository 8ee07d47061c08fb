#!/usr/bin/env bash
# The README's "Config keys" table is `starling config --schema`, between its two marker
# comments, so that the schema (cli/config_schema.cpp) is the one place a key is written.
#   scripts/readme_config_keys.sh STARLING README           rewrites the table from the schema
#   scripts/readme_config_keys.sh STARLING README --check   exits 1, with the diff, when they differ
set -euo pipefail
starling=$1 readme=$2 mode=${3:-write}
begin='<!-- config-keys: begin'
end='<!-- config-keys: end'
if [ "$(grep -c -- "$begin" "$readme")" -ne 1 ] || [ "$(grep -c -- "$end" "$readme")" -ne 1 ]; then
  echo "$readme: expected one '$begin ...' and one '$end ...' line around the key table" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$starling" config --schema >"$tmp/table"
awk -v table="$tmp/table" -v begin="$begin" -v end="$end" '
  index($0, begin) == 1 { print; while ((getline line < table) > 0) print line; skip = 1; next }
  index($0, end) == 1 { skip = 0 }
  !skip { print }' "$readme" >"$tmp/readme"
if [ "$mode" = --check ]; then
  diff -u "$readme" "$tmp/readme" && exit 0
  echo "$readme: the config key table differs from \`starling config --schema\`; run \`make readme\`" >&2
  exit 1
fi
cp "$tmp/readme" "$readme"
