#!/usr/bin/env bash
# Runs each fuzzer (built by `make fuzz`) for a bounded time from its seed corpus. A crash,
# trap, memory error or hang fails the run; the input is saved in Fuzz/crashes/ and printed in base64
# (so that a CI log holds it), to become a regression test.
#
# The fuzzers run side by side, as many at once as there are cores: each is one thread, so
# each still has a core for its whole time, and on CI's two cores the phase takes two of the
# time rather than three.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
bin=.build-fuzz/debug
cores=$(nproc 2>/dev/null || echo 1)
targets=(json service engine)
mkdir -p Fuzz/crashes

name_of() {
    case $1 in json) echo FuzzJSON ;; service) echo FuzzService ;; engine) echo FuzzEngine ;; esac
}

# One fuzzer; its exit status is the run's.
fuzz_one() {
    local target=$1 name work
    name=$(name_of "$target")
    # Inputs found on the way go to a working corpus, not the committed seeds.
    work=.build-fuzz/corpus/$target
    mkdir -p "$work"
    # Leak checks are off: Swift keeps the case of an enum whose cases hold class references in
    # the pointer's spare bits, which LeakSanitizer cannot see through (it reported a session
    # held in the store as leaked).
    ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no "$bin/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 -detect_leaks=0 \
        -print_final_stats=1 -artifact_prefix="Fuzz/crashes/$target-" "$work" "Fuzz/corpus/$target" > "$work.log" 2>&1
}

declare -A pids
running=0
for target in "${targets[@]}"; do
    if [ "$running" -ge "$cores" ]; then
        wait -n
        running=$((running - 1))
    fi
    echo "== $(name_of "$target"): $seconds s"
    fuzz_one "$target" &
    pids[$target]=$!
    running=$((running + 1))
done

status=0
for target in "${targets[@]}"; do
    work=.build-fuzz/corpus/$target
    echo "== $(name_of "$target")"
    # `wait` on a job already reaped by `wait -n` still gives its status in bash 5.1+.
    if ! wait "${pids[$target]}"; then
        status=1
        grep -E "Fatal error|ERROR|SUMMARY|Test unit written" "$work.log" | head -20
        for input in Fuzz/crashes/$target-*; do
            [ -f "$input" ] && echo "input $input (base64): $(head -c 4096 "$input" | base64 -w0)"
        done
    fi
    grep -E "^stat::number_of_executed_units|^Done" "$work.log" | head -2
done
if [ $status -ne 0 ]; then echo "fuzz: FAILED (inputs in Fuzz/crashes/)"; else echo "fuzz: no crash"; fi
exit $status
