#!/usr/bin/env bash
# Seeds the option-parser corpus with valid and near-valid option texts.
set -euo pipefail
out=$1
n=0
while IFS= read -r line; do
  # The first byte selects the parser (see fuzz_options.cpp).
  printf '0%s' "$line" >"$out/seed_$n"
  n=$((n + 1))
done <<'SEEDS'
x:1,3,224,224
input_ids:1,128;attention_mask:1,128
x:-1,3,224,224;y:1,10
a:1;b:2;c:3
x:
:1,2
x:1,,2
x:99999999999999999999
x:1,2;;y:3
 x : 1 , 2 
SEEDS
for size in 8G 512M 1 1024K 3T 0 -1 99999999999T; do
  printf '1%s' "$size" >"$out/seed_$n"
  n=$((n + 1))
done
