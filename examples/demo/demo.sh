#!/usr/bin/env bash
# make demo: a walk through palace's lifecycle on the embedded demo data.
# Everything happens in a temporary PALACE_HOME and a temporary git checkout;
# nothing outside them is touched.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
palace_bin=${PALACE_BIN:-$root/bin/palace}
work=$(mktemp -d "${TMPDIR:-/tmp}/palace-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

export PALACE_HOME="$work/home"
export NO_COLOR=${NO_COLOR:-}
unset PALACE_MODE

repo="$work/widgets"
mkdir -p "$repo/store"
git -C "$repo" init -q -b main
git -C "$repo" remote add origin git@github.com:acme/widgets.git
printf 'package store\n\n// Open opens the widgets database.\nfunc Open(path string) {}\n' >"$repo/store/db.go"
cd "$repo"

bold='' plain=''
if [ -t 1 ] && [ -z "$NO_COLOR" ]; then bold=$(printf '\033[1m') plain=$(printf '\033[0m'); fi
step=0
say() { step=$((step + 1)); printf '\n%s%d. %s%s\n' "$bold" "$step" "$*" "$plain"; }
# show prints a command line the way a person would type it.
show() {
  local out='$ palace' a
  for a in "$@"; do
    case "$a" in
      *[!A-Za-z0-9_./:=,@+-]*) out+=" '${a//\'/\'\\\'\'}'" ;;
      *) out+=" $a" ;;
    esac
  done
  printf '%s\n' "$out"
}
run() { show "$@"; "$palace_bin" "$@"; }
# try runs a command that is expected to exit non-zero (a "no").
try() { show "$@"; set +e; "$palace_bin" "$@"; code=$?; set -e; printf '(exit %d)\n' "$code"; }
id_of() { sed -n 's/.*"id": "\([a-z]*_[0-9a-z]*\)".*/\1/p' | head -n 1; }

say "A fresh palace for the widgets repository ($repo)"
run init

say "Import the raw evidence the team has collected (validated, then committed in batches)"
run record --jsonl "$here/seed.jsonl"
run evidence list --field storage --limit 5

locked=$("$palace_bin" evidence list --field storage --format json | tr -d '\n' | grep -o '"id": "ev_[0-9a-z]*", *"content": "go test ./store' | id_of)
wal=$("$palace_bin" evidence list --field storage --format json | tr -d '\n' | grep -o '"id": "ev_[0-9a-z]*", *"content": "Switching the store to WAL' | id_of)
immediate=$("$palace_bin" evidence list --field storage --format json | tr -d '\n' | grep -o '"id": "ev_[0-9a-z]*", *"content": "A deferred transaction' | id_of)

say "An agent records what it just verified (agent mode: evidence is fine)"
printf '$ PALACE_MODE=agent palace record --content "…" --field storage\n'
verified=$(PALACE_MODE=agent "$palace_bin" record --format json --field storage --source-ref "ci://build/4901#store" \
  --content "Re-ran the store tests 200 times with WAL + BEGIN IMMEDIATE: 0 lock errors" | id_of)
echo "recorded $verified"

say "Distill a candidate card from the supporting evidence"
card=$("$palace_bin" distill --format json --tier qi --field storage \
  --statement "Open SQLite in WAL mode with a busy timeout, and start write transactions with BEGIN IMMEDIATE" \
  --content "Parallel test binaries and the CLI share palace.db. WAL lets readers and the writer proceed together; BEGIN IMMEDIATE avoids the read-then-write upgrade that busy_timeout cannot rescue." \
  --supporting "$locked,$wal" --scope-path 'store/**' --scope-lang go --trigger-pattern 'sql\.Open|BeginTx' --intent storage | id_of)
run card show "$card"

say "Ask the gate: denied, and it says what is missing"
try gate "$card"

say "Link the verification evidence"
run card link "$card" --role verification --evidence "$verified"

say "Ask the gate again: allowed"
run gate "$card"

say "An agent may not promote (mode is audit, not a sandbox: the refusal is exit 3)"
printf '$ PALACE_MODE=agent palace --mode human promote %s --reason "looks good"\n' "$card"
set +e; PALACE_MODE=agent "$palace_bin" --mode human promote "$card" --reason "looks good"; code=$?; set -e
printf '(exit %d)\n' "$code"

say "A human promotes it through the gate"
run promote "$card" --reason "verified by 200 clean runs" --reviewer alice

say "Every change is an event, stamped with the policy hash that allowed it"
run card events "$card"

say "A second card: the team's method for wrapping errors"
style=$("$palace_bin" evidence list --field errors --format json | tr -d '\n' | grep -o '"id": "ev_[0-9a-z]*", *"content": "Handlers in api' | id_of)
panic=$("$palace_bin" evidence list --field errors --format json | tr -d '\n' | grep -o '"id": "ev_[0-9a-z]*", *"content": "A panic in' | id_of)
card2=$("$palace_bin" distill --format json --tier shu --field errors \
  --statement "Wrap errors with the operation and its subject: fmt.Errorf(\"open store %s: %w\", path, err)" \
  --supporting "$style" --verification "$panic" --intent errors | id_of)
run promote "$card2" --reason "team convention" --reviewer alice
run card list

say "What an agent gets at task start: a bounded, cited context pack"
echo "The instruction comes first; the WAL card fits this file, field and query, so it is inlined with"
echo "its citations; the errors card applies everywhere but is not about this request, so it stays out (--explain says why)."
echo "--explain appends the why-trace (not part of the pack); --dry-run records no injection events."
run context "sqlite busy timeout" --file store/db.go --field storage --intent storage \
  --instruction "Answer in at most ten lines." --budget 1800 --explain --dry-run

say "A brief over the same selection: key facts, cited evidence, what is still open"
run brief "sqlite busy timeout" --file store/db.go --field storage --intent storage

say "A counterexample after promotion contests the card: the next pack shows it as a reference with a warning"
nfs=$("$palace_bin" record --format json --field storage --source-ref "ci://build/5120#nfs" \
  --content "On an NFS mount the store tests still hit database is locked with WAL" | id_of)
run card link "$card" --role counterexample --evidence "$nfs" --note "fails on NFS"
run context "sqlite busy timeout" --file store/db.go --field storage --intent storage --budget 1800 --dry-run

say "A human resolves it with newer verification (the gate decides): the card is back in its lane"
again=$("$palace_bin" record --format json --field storage --source-ref "ci://build/5133#local" \
  --content "NFS is unsupported (documented); on local disks 500 runs with WAL + BEGIN IMMEDIATE: 0 lock errors" | id_of)
run resolve "$card" --verification "$again" --reason "NFS is out of scope; verified again on local disks"
run context "sqlite busy timeout" --file store/db.go --field storage --intent storage --budget 900 --dry-run

printf '\nDone. The demo palace lived in %s and is removed on exit.\n' "$work"
