#!/usr/bin/env bash
# cli/ reaches gossip/ only through the job library, and the kinds of data and of model are
# told apart by name only in the task registry.
#   job/check_boundary.sh SOURCE_DIR    exits 1, naming each offending line
# Rules:
#   - no file of cli/ includes a gossip/ header (job/ has what cli/ needs of it);
#   - in cli/, actors/, gossip/ and job/, a test of the kind by name (== "text", "gpt",
#     kGptKind, is_language_model(), a ModelKind's language_model flag) sits in
#     job/task_kind.cpp alone, and there are at most 6 of them.
set -euo pipefail
cd "$1"
status=0
fail() { echo "$1" >&2; status=1; }
sources=(--include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc')

if hits=$(grep -rnE "${sources[@]}" '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]gossip/' cli | grep .); then
  fail "cli/ includes gossip/ (ask job/ instead):"$'\n'"$hits"
fi

registry=job/task_kind.cpp
kind_re='(==|!=)[[:space:]]*"(text|gpt)"|"(text|gpt)"[[:space:]]*(==|!=)|is_language_model[[:space:]]*\(|(==|!=)[[:space:]]*kGptKind|kGptKind[[:space:]]*(==|!=)|(->|\.)language_model\b'
folders=()
for dir in cli actors gossip job; do
  [ -d "$dir" ] && folders+=("$dir")
done
tests=$(grep -rnE "${sources[@]}" "$kind_re" "${folders[@]}" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' || true)
if outside=$(grep -v "^${registry}:" <<<"$tests" | grep .); then
  fail "the kind of data or model tested by name outside ${registry}:"$'\n'"$outside"
fi
count=$(grep -c . <<<"$tests" || true)
if [ "$count" -gt 6 ]; then
  fail "$count tests of the kind by name (at most 6):"$'\n'"$tests"
fi
exit $status
