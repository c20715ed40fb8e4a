# Sourced by the test hooks: append_record FILE WORDS... appends one record line to FILE.
# A record is padded to RECORD_BYTES (the readers split on whitespace), so every record starts at a
# multiple of RECORD_BYTES and never straddles a page. That makes each record one write() that a
# SIGKILL cannot tear: the kernel checks for a fatal signal between the pages of a write, so a
# hook killed with its agent (PR_SET_PDEATHSIG) could otherwise leave half a line, and the next
# record would be glued to it.
RECORD_BYTES=256
append_record() {
  _file=$1
  shift
  _line="$*"
  if [ "${#_line}" -ge "$RECORD_BYTES" ]; then
    echo "record of ${#_line} bytes is longer than $((RECORD_BYTES - 1)): $_line" >&2
    exit 2
  fi
  printf "%-$((RECORD_BYTES - 1))s\n" "$_line" >>"$_file"
}
