#!/usr/bin/env bash
# Stage one of a two-stage JSON reader, measured alone on the 100,000-movie body: 64-byte blocks
# classified into six bitmasks in pure Swift (three spellings) and in C with SSE2. The question it
# answers: can pure Swift classify blocks faster than the present scanner reads whole values?
# Prints MB/s and checksums (all four must agree); asserts nothing.
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
