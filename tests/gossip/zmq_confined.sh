#!/usr/bin/env bash
# ZeroMQ stays inside gossip's transport: only the files below include <zmq.h>/<zmq.hpp>,
# and the transport's private headers are included only by gossip/'s .cpp files and by
# each other, so no public header brings ZeroMQ along, directly or through another one.
#   tests/gossip/zmq_confined.sh SOURCE_DIR    exits 1, naming each offending line
set -euo pipefail
cd "$1"
private='gossip/(zmq_bridge|io_loop|zap_handler|peer_identity)\.h'
# The exceptions outside the transport speak raw ZeroMQ on purpose (malformed frames).
allowed="^(gossip/[a-z_0-9]+\.cpp|$private|tests/gossip/test_transport\.cpp|tests/tools/flood_peer\.cpp):"
status=0
folders=()
for dir in kernels learners protocols gossip simulator actors cli examples bench tests; do
  [ -d "$dir" ] && folders+=("$dir")
done
includes=$(grep -rnE --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc' \
  '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]zmq(\.h|\.hpp|_addon\.hpp)[>"]' "${folders[@]}" || true)
if offending=$(grep -vE "$allowed" <<<"$includes" | grep .); then
  echo "ZeroMQ included outside the transport (see gossip/zmq_bridge.h):" >&2
  echo "$offending" >&2
  status=1
fi
users=$(grep -rnE --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc' \
  "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$private\"" "${folders[@]}" || true)
if offending=$(grep -vE "^(gossip/[a-z_0-9]+\.cpp|$private):" <<<"$users" | grep .); then
  echo "a transport-private header included outside gossip/'s .cpp files:" >&2
  echo "$offending" >&2
  status=1
fi
exit $status
