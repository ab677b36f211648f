#!/usr/bin/env bash
# On the offline NVIDIA GPU host: build ckt with the carried Lua packages, run the GPU tests,
# the kernel scripts on the GPU, the kernel benchmarks, JIT latency, and the LDS bank model
# against ncu's shared-memory wavefront counts; results (logs, JSON) land in $OUT.
set -u
out=${OUT:-/tmp/ckt-gpu-out}
mkdir -p "$out"
args=$(bash tools/offline-lua.sh unpack .deps) || exit 1
cmake -S . -B /tmp/ckt-build $args -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
cmake --build /tmp/ckt-build -j16 2>&1 | grep -E "error|warning" ;
lua=/tmp/ckt-build/ckt-lua
export CKT_CACHE_DIR=/tmp/ckt-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "== GPU tests (label gpu)"
(cd /tmp/ckt-build && ctest -L gpu --output-on-failure 2>&1 | tail -40) | tee "$out/gpu_tests.log"
echo "== scripts on the GPU (--target sm_90), script start to first result"
for s in copy transpose; do
  t0=$(date +%s%N); $lua --target sm_90 scripts/$s.lua > "$out/script_$s.log" 2>&1; rc=$?; t1=$(date +%s%N)
  echo "scripts/$s.lua: rc=$rc, $(( (t1 - t0) / 1000000 )) ms start to result; $(grep -E '^run on' "$out/script_$s.log")"
done | tee "$out/scripts.log"
echo "== JIT latency of the transpose on the GPU host"
$lua bench/jit_kernels.lua sm_90 2>&1 | tee "$out/jit_kernels.log"
echo "== kernel bandwidth vs device-to-device copy"
$lua bench/kernels.lua sm_90 "$out/kernels_h100.json" 2>&1 | tee "$out/kernels.log"
echo "== GEMM against cuBLAS (bench/gemm.lua; tests/gpu/gemm_on_gpu_host.sh runs it alone)"
CKT_BENCH_LIB=/tmp/ckt-build $lua bench/gemm.lua sm_90 "$out/gemm_h100.json" 2>&1 | tee "$out/gemm.log" | tail -40
echo "== LDS bank model vs ncu (transpose variants)"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
$lua bench/transpose_banks.lua sm_90 > "$out/bank_pred.txt" 2>&1
"$ncu" --csv --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum \
  $lua bench/transpose_banks.lua sm_90 > "$out/bank_ncu.csv" 2> "$out/bank_ncu.err"
python3 - "$out" <<'PY' | tee "$out/bank_compare.md"
import csv, sys, os
out = sys.argv[1]
pred = [l.split() for l in open(os.path.join(out, 'bank_pred.txt')) if l.startswith('BANK')]
rows = [r for r in csv.reader(l for l in open(os.path.join(out, 'bank_ncu.csv')) if l.startswith('"'))]
if not rows: print('no ncu rows:', open(os.path.join(out, 'bank_ncu.err')).read()[-2000:]); raise SystemExit(1)
hdr, rows = rows[0], rows[1:]
mi, vi, ii, ki = hdr.index('Metric Name'), hdr.index('Metric Value'), hdr.index('ID'), hdr.index('Kernel Name')
got = {}
for r in rows:
    key = 'ld' if r[mi].endswith('op_ld.sum') else 'st'
    got.setdefault(int(r[ii]), {})[key] = int(float(r[vi].replace(',', '')))
    got[int(r[ii])]['name'] = r[ki]
ids = sorted(got)
print('| kernel | predicted ld wavefronts | ncu ld | predicted st wavefronts | ncu st | match |')
print('|---|---|---|---|---|---|')
ok = 0
for p, i in zip(pred, ids):
    g = got[i]
    m = int(p[2]) == g.get('ld') and int(p[3]) == g.get('st')
    ok += m
    print(f"| {p[1]} | {p[2]} | {g.get('ld')} | {p[3]} | {g.get('st')} | {'yes' if m else 'NO'} |")
print(f'{ok} of {len(pred)} launches match')
PY
true
