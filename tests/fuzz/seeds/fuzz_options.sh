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
# One seed per line below: "SELECTOR TEXT", TEXT with \n escapes (printf %b).
while IFS=' ' read -r selector text; do
  printf '%s%b' "$selector" "$text" >"$out/seed_$n"
  n=$((n + 1))
done <<'SEEDS'
2 fast|step|0.9
2 fast1|loss|1.05
2 fast|step
2 fast1|loss|1.5
2 fast|step|0.2
2 fast|step|0.90000000000000002
2 fast|loss|1e308
2 fast|step|nan
2 FAST|STEP|0.9
3 allow_mix_precision\n
3 \nmixed_float16
3 must_keep_origin_dtype\n\nfast|step|0.9
3 \norigin\nfast1|loss|1.05
3 force_fp16\nfp16
3 allow_fp32_to_bf16\n\nfast1|step|0.5
4 {"black-list": {"to-add": ["MatMul"]}}
4 {"white-list": {"to-add": ["Conv", "Gemm"], "to-remove": ["MatMul"]}}
4 {"gray-list": {"to-add": ["Softmax"]}, "black-list": {"to-remove": ["Exp"]}}
4 {"black-list": {"to-add": ["NotAnOp"]}}
4 {"black-list": {"to-add": ["Add"]}, "white-list": {"to-add": ["Add"]}}
4 []
5 conv1\nconv2\n# comment\n\n  relu_1  \nconv1\n
5 /model/encoder/layer.0/MatMul\n
6 fast|step|0.9\n8999\n10000\n1
6 fast|step|0.9\n9000\n10000
6 fast|step|0.2\n0\n1\n100
6 fast1|loss|1.05\n1.21\n1.1
6 fast1|loss|1.1\n0\n1.1
6 fast|step|0.9\n-1\n9223372036854775807\n9223372036854775807
6 fast1|loss|1.5\n1e308\n1e308
7 [cache]\ndir = "/tmp/cache"\nmax_size = "10G"\n
7 accelerate_train_mode = "fast|step|0.9"\nprecision_mode = "allow_mix_precision"\ncolor = "auto"\n
7 precision_mode_v2 = "mixed_bfloat16"\nmodify_mixlist = "mix.json"\n[cache]\ndisable = true\n
7 [cache]\nmax_size = 99999999999999999999\n
7 10GiB
SEEDS
