#!/usr/bin/env bash
# Starts every peer of a topology config on its own host over SSH: the host of each
# [[peer]]'s endpoint (tcp://HOST:PORT) runs `starling peer --config CONFIG --id ID`.
# Every line of output is prefixed with [peer ID@HOST]; Ctrl-C (or one peer failing) stops
# them all. Exits 0 when every peer finished, 1 when one failed or was interrupted, 2 on
# bad arguments.
#
#   scripts/launch-ssh.sh CONFIG [PEER ARGS...]      e.g. --set run.epochs=2
#
# Every host needs the starling binary and the config at the same path (a shared file
# system, or a copy), and key-based SSH login (BatchMode: no password prompts).
#   STARLING_BIN   starling on the hosts (default: starling on their PATH)
#   STARLING_DIR   working directory on the hosts (default: this directory)
#   STARLING_SSH   the remote-shell command, run as `$STARLING_SSH HOST COMMAND`
#                  (default: ssh -tt -o BatchMode=yes; -tt so that closing the connection
#                  hangs up the remote peer). Tests set a stand-in that runs COMMAND here.
set -uo pipefail

usage() {
  sed -n '7,8p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

[ $# -ge 1 ] || usage
case $1 in -h | --help) usage ;; esac
config=$(realpath -e -- "$1" 2>/dev/null) || { echo "launch-ssh.sh: no config at '$1'" >&2; exit 2; }
shift
read -r -a remote_shell <<<"${STARLING_SSH:-ssh -tt -o BatchMode=yes}"
bin=${STARLING_BIN:-starling}
dir=${STARLING_DIR:-$PWD}

# "ID HOST" for every [[peer]] of the config, in order.
peers_of() {
  awk '
    /^[[:space:]]*\[\[peer\]\]/ { if (inpeer && host != "") print id, host; inpeer = 1; id = ""; host = ""; next }
    /^[[:space:]]*\[/ { if (inpeer && host != "") print id, host; inpeer = 0; next }
    inpeer && /^[[:space:]]*id[[:space:]]*=/ { sub(/^[^=]*=[[:space:]]*/, ""); sub(/[[:space:]]*(#.*)?$/, ""); id = $0 }
    inpeer && /^[[:space:]]*endpoint[[:space:]]*=/ {
      match($0, /tcp:\/\/[^"]*/); ep = substr($0, RSTART + 6, RLENGTH - 6)
      sub(/:[0-9*]+$/, "", ep); gsub(/^\[|\]$/, "", ep); host = ep
    }
    END { if (inpeer && host != "") print id, host }
  ' "$1"
}

mapfile -t peers < <(peers_of "$config")
[ ${#peers[@]} -ge 1 ] || { echo "launch-ssh.sh: $config lists no [[peer]] with a tcp:// endpoint" >&2; exit 2; }

extra=""
for arg in "$@"; do extra+=" $(printf '%q' "$arg")"; done

pids=()
labels=()
stop_all() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
}
trap 'echo "launch-ssh.sh: interrupted: stopping every peer" >&2; stop_all; interrupted=1' INT TERM
interrupted=0

for entry in "${peers[@]}"; do
  read -r id host <<<"$entry"
  command="cd $(printf '%q' "$dir") && exec $bin peer --config $(printf '%q' "$config") --id $id$extra"
  label="[peer $id@$host]"
  "${remote_shell[@]}" "$host" "$command" </dev/null > >(sed -u "s|^|$label |") 2>&1 &
  pids+=($!)
  labels+=("$label")
done
echo "launch-ssh.sh: started ${#pids[@]} peers of $config" >&2

status=0
declare -A finished=()
while [ ${#finished[@]} -lt ${#pids[@]} ]; do
  for pid in "${pids[@]}"; do
    [ -n "${finished[$pid]:-}" ] && continue
    kill -0 "$pid" 2>/dev/null && continue
    wait "$pid"
    code=$?
    finished[$pid]=$code
    if [ "$code" -ne 0 ] && [ "$status" -eq 0 ] && [ "$interrupted" -eq 0 ]; then
      echo "launch-ssh.sh: a peer failed (exit $code); stopping the others" >&2
      status=1
      stop_all
    fi
  done
  sleep 0.2
done
wait  # the output filters
[ "$interrupted" -eq 1 ] && status=1
[ "$status" -eq 0 ] && echo "launch-ssh.sh: all ${#pids[@]} peers done" >&2
exit "$status"
