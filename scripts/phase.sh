#!/usr/bin/env bash
# Runs one phase of `make test` and says how long it took. The times gather in
# .build/test-phases.txt, which `make test` prints at its end: CI's total is to stay under
# about 50 minutes on a 2-core machine, and this says which phase grew.
set -uo pipefail
name=$1
shift
started=$(date +%s)
"$@"
status=$?
seconds=$(($(date +%s) - started))
mkdir -p .build
note=""
[ "$status" -ne 0 ] && note=" (failed)"
printf '%-14s %5d s%s\n' "$name" "$seconds" "$note" >>.build/test-phases.txt
echo "== $name: $seconds s$note"
exit "$status"
