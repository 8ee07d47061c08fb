#!/usr/bin/env bash
# learners/'s rooms include only downward, and learners/ only what lies below it.
#   learners/check_rooms.sh SOURCE_DIR    exits 1, naming each offending line
# Rules (a file may include, of learners/, only these rooms; its own room included):
#   checkpoints/   checkpoints/
#   models/        models/      (models/, layers/ and layer_rows/ are one room)
#   optimizers/    optimizers/, models/, checkpoints/
#   data/          data/, models/, checkpoints/
#   tasks/         tasks/, data/, optimizers/, models/, checkpoints/
#   replicas/      every room
# Every file of learners/ but this script and CMakeLists.txt is in a room. learners/ includes nothing of the project but learners/, kernels/ and platform/; and a
# room's CMake library links no room above it (learners/CMakeLists.txt's LINKS lines).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cmake/rooms.sh"
cd "$1"
status=0
fail() { echo "$1" >&2; status=1; }

room_of() {  # sets room: learners/<room>/... -> room; layers/ and layer_rows/ are models
  case "$1" in
    learners/layers/* | learners/layer_rows/*) room=models ;;
    learners/*/*) room=${1#learners/}; room=${room%%/*} ;;
    *) room=none ;;
  esac
}

allowed_rooms() {  # sets allowed: the rooms room $1 may include
  case "$1" in
    checkpoints) allowed="checkpoints" ;;
    models) allowed="models" ;;
    optimizers) allowed="optimizers models checkpoints" ;;
    data) allowed="data models checkpoints" ;;
    tasks) allowed="tasks data optimizers models checkpoints" ;;
    replicas) allowed="replicas tasks data optimizers models checkpoints" ;;
    *) allowed="" ;;
  esac
}

sources=(--include='*.h' --include='*.cpp' --include='*.in')
check_room_includes learners

if hits=$(find learners -maxdepth 1 -type f ! -name CMakeLists.txt ! -name check_rooms.sh | grep .); then
  fail "files in learners/ outside its rooms (checkpoints, models, optimizers, data, tasks, replicas):"$'\n'"$hits"
fi

if hits=$(grep -rnE "${sources[@]}" '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' learners |
    grep -vE '#[[:space:]]*include[[:space:]]*"(learners|kernels|platform)/' | grep .); then
  fail "learners/ includes a folder above it (only learners/, kernels/ and platform/ are below):"$'\n'"$hits"
fi

# Each learners_room(NAME ... LINKS ...) call links only the rooms NAME may include.
while read -r line from linked; do
  allowed_rooms "$from"
  [[ " $allowed " == *" $linked "* ]] || fail "learners/CMakeLists.txt:$line: room $from links room $linked"
done < <(perl -0ne 'while (/learners_room\((\w+)([^()]*)\)/g) {
    my ($name, $body, $at) = ($1, $2, $-[0]);
    my $line = 1 + (substr($_, 0, $at) =~ tr/\n//);
    print "$line $name $1\n" while $body =~ /starling_learners_(\w+)/g; }' learners/CMakeLists.txt)
exit $status
