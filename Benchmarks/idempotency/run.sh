#!/usr/bin/env bash
# Idempotency-Keys under their memory bound (keys.py): 100,000 keyed writes to the real binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 Benchmarks/idempotency/keys.py "${1:-.build/release/livedelta}"
