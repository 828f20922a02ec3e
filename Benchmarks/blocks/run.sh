#!/usr/bin/env bash
# A two-stage JSON reader beside ByteJSON's one-pass scanner, on the 100,000-movie body.
# First stage one alone: 64-byte blocks classified into six bitmasks in pure Swift (three
# spellings) and in C with SSE2 (prints MB/s and checksums, which must agree). Then a whole
# two-stage reader (two-stage/: structural positions, then a walk over them with ByteJSON's
# hashing), built twice: for any x86-64 (SSE2, as the service is built) and for Haswell and later
# (AVX2 and a carry-less multiply). Each checks its items equal the scanner's, then prints times
# in turns. The question it answers: does a two-stage reader read faster than the scanner?
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -c "
import json, sys
sys.path.insert(0, 'Benchmarks/load')
from bodies import movies
open(sys.argv[1], 'w').write(json.dumps(movies(100_000), separators=(',', ':')))
" "$work/movies.json"
echo "== 64-byte block classification, $(wc -c < "$work/movies.json") bytes"
swiftc -O -enable-experimental-feature BuiltinModule Benchmarks/blocks/classify.swift -o "$work/classify-swift"
cc -O2 Benchmarks/blocks/classify.c -o "$work/classify-c"
"$work/classify-swift" "$work/movies.json"
"$work/classify-c" "$work/movies.json"
echo "== two-stage reader against the one-pass scanner (items, hashes and ids)"
sources=(Sources/ByteJSON/*.swift Benchmarks/blocks/two-stage/*.swift)
swiftc -O -wmo -enable-experimental-feature BuiltinModule -module-name TwoStage "${sources[@]}" -o "$work/two-stage"
echo "-- built for any x86-64 (SSE2)"
"$work/two-stage" "$work/movies.json"
if grep -qw avx2 /proc/cpuinfo && grep -qw pclmulqdq /proc/cpuinfo; then
    swiftc -O -wmo -enable-experimental-feature BuiltinModule -target-cpu haswell -D WIDE -module-name TwoStage "${sources[@]}" -o "$work/two-stage-wide"
    echo "-- built for Haswell and later (AVX2, carry-less multiply), the scanner too"
    "$work/two-stage-wide" "$work/movies.json"
fi
