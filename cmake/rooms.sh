# The loop the room checks share (gossip/, learners/ and actors/check_rooms.sh source it).
#   check_room_includes FOLDER [WORD]
# Reads every #include "FOLDER/..." line of FOLDER's .h, .cpp and .in files and calls the
# sourcing script's room_of FILE (sets room) for the file and for what it includes, and its
# allowed_rooms ROOM (sets allowed, the rooms ROOM may include, space-separated); each include
# of a room not allowed goes to its fail as "FILE:LINE: WORD R includes TARGET (WORD T)".
# WORD names what the folder's parts are called ("room" unless given).
check_room_includes() {
  local folder=$1 word=${2:-room} file line text target from
  while IFS=: read -r file line text; do
    [[ "$text" =~ \"($folder/[^\"]+)\" ]] || continue
    target=${BASH_REMATCH[1]}
    room_of "$file"
    from=$room
    room_of "$target"
    allowed_rooms "$from"
    [[ " $allowed " == *" $room "* ]] || fail "$file:$line: $word $from includes $target ($word $room)"
  done < <(grep -rnE --include='*.h' --include='*.cpp' --include='*.in' \
             "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$folder/[^\"]+\"" "$folder" | sort -t: -k1,1 -k2,2n)
}
