#!/usr/bin/env bash
# check_docs.py fails on each kind of wrong name and is not fooled by prose.
#   check_docs_selftest.sh STARLING SOURCE_DIR
set -euo pipefail
starling=$(realpath "$1")
root=$(realpath "$2")
check="$(dirname "$(realpath "$0")")/check_docs.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_docs selftest: $*" >&2; exit 1; }

# Every kind of name, right, and prose that only looks like names.
cat >"$tmp/good.md" <<'EOF'
# A page

## Second heading: with `code`

Run `starling train --config configs/fmnist-mlp.toml --set optimizer.lr=0.1`, then
`make test`; see `gossip/`, `scripts/faults.sh`, `torch_ddp.py`, `exchange.mode = "gossip"`,
`[security] curve = true`, [the heading](#second-heading-with-code) and [the
page](good.md#a-page). Prose is never a name: make believe, the starling trian, starling
nothing, optimizer.nothing, gossip/no_such_file.h, [a link in code is text](`nowhere.md`).

```
starling launch --config configs/fmnist-mlp-4peers-allreduce.toml --netns
/usr/bin/python3 bench/many_peers.py --starling build/cli/starling --peers 8
```
EOF
out=$(/usr/bin/python3 "$check" --starling "$starling" --root "$root" --doc "$tmp/good.md") \
  || fail "a right page failed: $out"
echo "$out" | grep -q "0 missing" || fail "unexpected output: $out"

# One wrong name per page, and the message each must give.
expect() {  # NAME MESSAGE TEXT
  printf '# Page\n\n%s\n' "$3" >"$tmp/$1.md"
  if out=$(/usr/bin/python3 "$check" --starling "$starling" --root "$root" --doc "$tmp/$1.md"); then
    fail "$1: passed, but it names something that does not exist: $3"
  fi
  echo "$out" | grep -qF -- "$2" || fail "$1: expected '$2' in: $out"
}
expect link "link to \`missing.md\`: no such file" 'See [it](missing.md).'
expect anchor "no heading \`#nowhere\`" 'See [it](#nowhere).'
expect path "\`gossip/no_such_file.h\`: no such file" 'In `gossip/no_such_file.h`.'
expect braces "\`gossip/peer_exchange.hpp\`: no such file" 'In `gossip/peer_exchange.{h,hpp}`.'
expect fenced_path "\`scripts/no_such.sh\`: no such file" $'```\nscripts/no_such.sh up 2\n```'
expect name "\`no_such_file.cpp\`: no file of that name" 'See `no_such_file.cpp`.'
expect key "\`optimizer.no_such_key\`: no such config key" 'Set `optimizer.no_such_key = 1`.'
expect set_key "\`exchange.nope\`: no such config key" 'Run with `--set exchange.nope=2`.'
expect section_key "\`security.nope\`: no such config key" 'With `[security] nope = true`.'
expect command "\`starling trian\`: no such subcommand" 'Run `starling trian`.'
expect option "\`starling train --no-such-option\`: no such option" 'Run `starling train --no-such-option`.'
expect fenced_command "\`starling simulat\`: no such subcommand" $'```\n$ starling simulat --peers 4\n```'
expect target "\`make no-such-target\`: no such target" 'Run `make no-such-target`.'
echo "check_docs selftest: ok"
