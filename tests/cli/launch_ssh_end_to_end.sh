#!/usr/bin/env bash
# scripts/launch-ssh.sh with a stand-in for ssh that runs the command here (no SSH server is
# needed): it reads the hosts from the config, starts `starling peer --id` for each with the
# extra arguments, prefixes their output with [peer ID@HOST], fails when a peer fails, and
# stops every peer on Ctrl-C. Also with real ssh to localhost when a key login works.
set -euo pipefail
starling=$(realpath "$1")
src=$(realpath "$2")
base=$((12000 + ($$ % 20000)))
source "$(dirname "$0")/peers_config.sh"

printf '#!/usr/bin/env bash\nhost=$1; shift\necho "fake ssh to $host" >&2\nexec bash -c "$1"\n' >"$tmp/fake-ssh"
chmod +x "$tmp/fake-ssh"
export STARLING_SSH="$tmp/fake-ssh" STARLING_BIN="$starling" STARLING_DIR="$tmp"

peers_config "$tmp/ar.toml" allreduce $base $((base + 1))
timeout 120 "$src/scripts/launch-ssh.sh" "$tmp/ar.toml" --set run.epochs=1 >"$tmp/ar.log" 2>&1 \
  || { cat "$tmp/ar.log"; fail "launch-ssh.sh failed"; }
grep -q '^\[peer 0@127.0.0.1\] fake ssh to 127.0.0.1' "$tmp/ar.log" || { cat "$tmp/ar.log"; fail "no prefixed peer 0"; }
grep -q '^\[peer 1@127.0.0.1\] .*done: test_accuracy' "$tmp/ar.log" || { cat "$tmp/ar.log"; fail "peer 1 did not finish"; }
[ -e "$tmp/out/e2e-peer0.summary.json" ] && [ -e "$tmp/out/e2e-peer1.summary.json" ] || fail "peer summaries missing"

# A bad override makes every peer exit 2: the script fails.
set +e
timeout 60 "$src/scripts/launch-ssh.sh" "$tmp/ar.toml" --set optimizer.batch=0 >"$tmp/bad.log" 2>&1
code=$?
set -e
[ "$code" -eq 1 ] || { cat "$tmp/bad.log"; fail "exit $code for failing peers, expected 1"; }
"$src/scripts/launch-ssh.sh" "$tmp/missing.toml" 2>/dev/null && fail "a missing config did not fail"

# Ctrl-C stops every peer: a long run, interrupted after the peers started. (Job control
# on, or a background job would start with SIGINT ignored, as no terminal user's would.)
peers_config "$tmp/long.toml" allreduce $((base + 2)) $((base + 3))
set -m
"$src/scripts/launch-ssh.sh" "$tmp/long.toml" --set run.epochs=1000 >"$tmp/long.log" 2>&1 &
launcher=$!
set +m
for _ in $(seq 50); do grep -q 'epoch' "$tmp/long.log" 2>/dev/null && break; sleep 0.2; done
kill -INT "$launcher"
for _ in $(seq 100); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
kill -0 "$launcher" 2>/dev/null && fail "launch-ssh.sh still running 10 s after Ctrl-C"
set +e
wait "$launcher"
code=$?
set -e
[ "$code" -ne 0 ] || fail "an interrupted launch exited 0"
sleep 0.5
if pgrep -f -- "$tmp/long.toml" >/dev/null; then fail "peers still running after Ctrl-C"; fi

# Real ssh to localhost, where a key login is set up.
if command -v ssh >/dev/null && ssh -o BatchMode=yes -o ConnectTimeout=3 localhost true 2>/dev/null; then
  unset STARLING_SSH
  peers_config "$tmp/ssh.toml" allreduce $((base + 4)) $((base + 5))
  timeout 120 "$src/scripts/launch-ssh.sh" "$tmp/ssh.toml" --set run.epochs=1 >"$tmp/ssh.log" 2>&1 \
    || { cat "$tmp/ssh.log"; fail "launch-ssh.sh over real ssh failed"; }
  echo "launch-ssh over ssh to localhost: ok"
else
  echo "no key login to localhost over ssh: tested with the stand-in only"
fi
echo "launch-ssh end-to-end: ok"
