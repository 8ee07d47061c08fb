#!/usr/bin/env bash
# Usage: n_peers_config.sh BASE.toml N PORT0 > OUT.toml
# Writes BASE.toml with its [[peer]] entries replaced by N peers on loopback, ids 0..N-1 on
# ports PORT0..PORT0+N-1 (a job of any size from a shipped config, for scale tests).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 BASE.toml N PORT0" >&2; exit 2; }
base=$1 n=$2 port0=$3
[[ $n =~ ^[0-9]+$ && $port0 =~ ^[0-9]+$ ]] || { echo "$0: N and PORT0 must be integers" >&2; exit 2; }
# Everything before the first [[peer]] (the peer list is the config's last part).
awk '/^\[\[peer\]\]/ { exit } { print }' "$base"
for ((i = 0; i < n; i++)); do
  printf '[[peer]]\nid = %d\nendpoint = "tcp://127.0.0.1:%d"\n\n' "$i" $((port0 + i))
done
