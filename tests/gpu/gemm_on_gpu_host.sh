#!/usr/bin/env bash
# The library GEMM on the offline NVIDIA GPU host, in one call: build ckt (with the carried Lua
# packages) and the cuBLAS bench module, then bench/gemm.lua — GPU correctness (every dtype and
# major combination element by element against the double reference, cuBLAS too), TFLOP/s of the
# configurations against cuBLAS at 4096^3 and 8192^3 validated against cuBLAS — the bank model's
# shared-memory wavefronts against ncu's, and the JIT latency. Logs and JSON land in $OUT.
#   bash tests/gpu/gemm_on_gpu_host.sh [configs] [sizes] [majors]   (see bench/gemm.lua)
set -u
out=${OUT:-/tmp/ckt-gpu-out}
mkdir -p "$out"
if [ ! -x /tmp/ckt-build/ckt-lua ] || [ ! -f /tmp/ckt-build/ckt_cublas.so ]; then
  args=$(bash tools/offline-lua.sh unpack .deps) || exit 1
  cmake -S . -B /tmp/ckt-build $args -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
fi
cmake --build /tmp/ckt-build -j16 2>&1 | grep -E "error|warning" ;
lua=/tmp/ckt-build/ckt-lua
export CKT_CACHE_DIR=/tmp/ckt-cache CKT_BENCH_LIB=/tmp/ckt-build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "== GEMM: correctness and TFLOP/s against cuBLAS"
$lua bench/gemm.lua sm_90 "$out/gemm_h100.json" "${1:-default,128x256x32/256/3,256x128x32/256/3,128x128x32/128/4}" "${2:-4096,8192}" "${3:-kk,kn,mk,mn}" 2>&1 | tee "$out/gemm.log" | grep -v "^ckt vs\|^cuBLAS vs"
rc=${PIPESTATUS[0]}
echo "== LDS bank model vs ncu (library GEMM launches: ldmatrix reads, cp.async writes)"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
$lua bench/gemm_banks.lua sm_90 > "$out/gemm_bank_pred.txt" 2>&1
"$ncu" --csv --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum \
  $lua bench/gemm_banks.lua sm_90 > "$out/gemm_bank_ncu.csv" 2> "$out/gemm_bank_ncu.err"
python3 - "$out" <<'PY' | tee "$out/gemm_bank_compare.md"
import csv, sys, os
out = sys.argv[1]
pred = [l.split() for l in open(os.path.join(out, 'gemm_bank_pred.txt')) if l.startswith('BANK')]
rows = [r for r in csv.reader(l for l in open(os.path.join(out, 'gemm_bank_ncu.csv')) if l.startswith('"'))]
if not rows: print('no ncu rows:', open(os.path.join(out, 'gemm_bank_ncu.err')).read()[-2000:]); raise SystemExit(0)
hdr, rows = rows[0], rows[1:]
mi, vi, ii = hdr.index('Metric Name'), hdr.index('Metric Value'), hdr.index('ID')
got = {}
for r in rows:
    got.setdefault(int(r[ii]), {})['ld' if r[mi].endswith('op_ld.sum') else 'st'] = int(float(r[vi].replace(',', '')))
print('| launch | predicted read wavefronts | ncu ld | predicted copy-in wavefronts | ncu st (cp.async may count elsewhere) |')
print('|---|---|---|---|---|')
for p, i in zip(pred, sorted(got)):
    print(f"| {p[1]} | {p[2]} | {got[i].get('ld')} | {p[3]} | {got[i].get('st')} |")
PY
echo "== JIT latency (cold NVRTC compile, cache hit)"
$lua bench/jit_kernels.lua sm_90 2>&1 | tail -8 | tee "$out/jit_gemm.log"
exit $rc
