# What the room checks' selftests share (tests/{gossip,learners,actors}/check_rooms_selftest.sh
# source it): a case is one line added to a fresh copy of the folder, and the check's verdict.
#   rooms_selftest SOURCE_DIR CHECK FOLDER...   CHECK (e.g. learners/check_rooms.sh) runs on a
#                                                copy of the FOLDERs in a temporary tree
#   case_ FILE LINE EXPECTED                     adds LINE to FILE; the check must fail with
#                                                EXPECTED in its output (EXPECTED empty: pass)
# A selftest may define fresh_extra, called after each copy (gossip's adds a cli/ file).
rooms_selftest() {
  root=$(realpath "$1")
  check=$2
  shift 2
  copied=("$@")
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}

fail() { echo "check_rooms selftest: $*" >&2; exit 1; }

fresh() {
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree"
  local folder
  for folder in "${copied[@]}"; do cp -r "$root/$folder" "$tmp/tree/"; done
  if declare -F fresh_extra >/dev/null; then fresh_extra; fi
}

case_() {
  fresh
  echo "$2" >>"$tmp/tree/$1"
  if out=$(bash "$root/$check" "$tmp/tree" 2>&1); then
    [ -z "$3" ] || fail "$1 + '$2' passed; expected: $3"
  else
    [ -n "$3" ] || fail "$1 + '$2' failed: $out"
    grep -qF -- "$3" <<<"$out" || fail "$1 + '$2': expected '$3' in: $out"
  fi
}
