#!/bin/sh
# Round trip through the built `nodehook state` commands on a seeded state file.
# usage: state_cli_test.sh NODEHOOK_BINARY STATE_SEED_BINARY
set -eu
nodehook=$1
seed=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
file=$dir/state.db
fail() { echo "FAILED: $*" >&2; exit 1; }

"$seed" seed "$file" node-a

out=$("$nodehook" state list --state-file "$file" --node-name node-a)
echo "$out"
echo "$out" | head -1 | grep -q '^RESOURCE  *OBJECT  *UID  *HANDLER  *OUTCOME  *RETRIES  *NEXT ATTEMPT  *MESSAGE$' || fail "list header"
echo "$out" | grep -q 'demo/alpha  *u-alpha  *-  *handled  *0  *-  *handled .* ago' || fail "handled row"
echo "$out" | grep -q 'demo/beta  *u-beta  *create  *failed  *3  *in .*  *exited 1: disk busy' || fail "failing row"

# What hooks printed is shown escaped, never sent raw to the terminal.
shown=$("$nodehook" state show u-gamma --state-file "$file" --node-name node-a)
echo "$shown" | grep -qF 'exited 1: \x1b[2J\x1b]0;owned\x07 \u009b31m gone' || fail "escaped message in show"
"$nodehook" state list --state-file "$file" --node-name node-a | grep -qF '\x1b[2J' || fail "escaped message in list"
if "$nodehook" state list --state-file "$file" --node-name node-a | grep -q "$(printf '\033')"; then fail "raw ESC in list"; fi

# Environment instead of flags, JSON for scripts.
json=$(NODE_NAME=node-a NODEHOOK_STATE_FILE="$file" "$nodehook" state list --json)
echo "$json" | grep -q '"uid":"u-beta","handled":false' || fail "list --json"

# Another node's view of the same file is empty.
"$nodehook" state list --state-file "$file" --node-name node-b | grep -q '(no objects)' || fail "other node"

# Retry one handler: due now, and a request waits for the agent.
"$nodehook" state --state-file "$file" --node-name node-a retry u-beta create \
  | grep -q '^retry requested: handler create of demo/beta (u-beta) is due now' || fail "retry output"
"$nodehook" state show u-beta --json --state-file "$file" --node-name node-a \
  | grep -Eq '"handler":"create","outcome":"failed","retries":3,"next_attempt_ms":[0-9]+,"next_attempt_ms_relative":"(now|[0-9]+s ago)"' \
  || fail "retry made create due"
[ "$("$seed" take "$file" node-a)" = "u-beta create" ] || fail "retry request for the agent"

# A permanent failure has no next attempt; a retry revives it for one more run and says so.
"$nodehook" state list --state-file "$file" --node-name node-a \
  | grep -q 'demo/delta  *u-delta  *create  *permanent_failure  *3  *-  *exited 1: disk busy' || fail "permanent row"
"$nodehook" state retry demo/delta --state-file "$file" --node-name node-a >"$dir/out"
cat "$dir/out"
grep -q '^retry requested: handler create of demo/delta (u-delta) had given up after 3 failed attempts; it runs once more now' \
  "$dir/out" || fail "revival output"
"$nodehook" state show demo/delta --state-file "$file" --node-name node-a | grep -q 'outcome: *retry_requested' \
  || fail "revived outcome"
[ "$("$seed" take "$file" node-a)" = "u-delta *" ] || fail "revival request for the agent"

# Retrying what is not pending fails with a message.
if "$nodehook" state retry u-alpha --state-file "$file" --node-name node-a 2>"$dir/err"; then fail "retry of nothing"; fi
grep -q 'nothing to retry' "$dir/err" || fail "retry of nothing message"

# Forget, then the object is unknown.
"$nodehook" state forget u-beta --state-file "$file" --node-name node-a | grep -q '^forgot demo/beta (u-beta)' || fail "forget"
set +e
"$nodehook" state show u-beta --state-file "$file" --node-name node-a 2>"$dir/err"
code=$?
set -e
[ "$code" = 1 ] || fail "show after forget exit $code"
grep -q 'node node-a has no state for uid or object u-beta' "$dir/err" || fail "show after forget message"

# A record the agent cannot read (edited by hand): show says so and how to clear it; forget does.
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("UPDATE objects SET last_object = '"'garbage'"' WHERE uid = '"'u-alpha'"'"); db.commit()' "$file"
set +e
"$nodehook" state show u-alpha --state-file "$file" --node-name node-a 2>"$dir/err"; code=$?
set -e
[ "$code" = 1 ] && grep -q 'last_object is not a JSON object' "$dir/err" && grep -q 'nodehook state forget u-alpha' "$dir/err" ||
  fail "show of an unreadable record"
"$nodehook" state forget u-alpha --state-file "$file" --node-name node-a | grep -q '^forgot u-alpha (its record could not be read)' ||
  fail "forget of an unreadable record"
if "$nodehook" state list --state-file "$file" --node-name node-a | grep -q u-alpha; then fail "u-alpha after forget"; fi

# No file: an error, and no file is created. No node: a usage error.
set +e
"$nodehook" state list --state-file "$dir/missing.db" --node-name node-a 2>"$dir/err"; code=$?
set -e
[ "$code" = 1 ] && grep -q "no state file at $dir/missing.db" "$dir/err" && [ ! -e "$dir/missing.db" ] || fail "missing file"
# No node name: the file's only node; with two nodes in the file, a usage error naming them.
env -u NODE_NAME "$nodehook" state show demo/gamma --state-file "$file" | grep -q '^uid: *u-gamma' || fail "node from file"
"$seed" seed "$file" node-b
set +e
env -u NODE_NAME "$nodehook" state list --state-file "$file" 2>"$dir/err"; code=$?
set -e
[ "$code" = 2 ] && grep -q 'holds several nodes.* (node-a, node-b): pass --node-name' "$dir/err" || fail "two nodes"
echo "state CLI round trip passed"
