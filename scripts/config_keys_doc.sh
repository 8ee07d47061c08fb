#!/usr/bin/env bash
# The config reference's key table (docs/config.md) is `starling config --schema`, between its
# two marker comments, so that the schema (cli/config_schema.cpp) is the one place a key is
# written.
#   scripts/config_keys_doc.sh STARLING DOC           rewrites the table from the schema
#   scripts/config_keys_doc.sh STARLING DOC --check   exits 1, with the diff, when they differ
set -euo pipefail
starling=$1 doc=$2 mode=${3:-write}
begin='<!-- config-keys: begin'
end='<!-- config-keys: end'
if [ "$(grep -c -- "$begin" "$doc")" -ne 1 ] || [ "$(grep -c -- "$end" "$doc")" -ne 1 ]; then
  echo "$doc: expected one '$begin ...' and one '$end ...' line around the key table" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$starling" config --schema >"$tmp/table"
awk -v table="$tmp/table" -v begin="$begin" -v end="$end" '
  index($0, begin) == 1 { print; while ((getline line < table) > 0) print line; skip = 1; next }
  index($0, end) == 1 { skip = 0 }
  !skip { print }' "$doc" >"$tmp/doc"
if [ "$mode" = --check ]; then
  diff -u "$doc" "$tmp/doc" && exit 0
  echo "$doc: the config key table differs from \`starling config --schema\`; run \`make docs\`" >&2
  exit 1
fi
cp "$tmp/doc" "$doc"
