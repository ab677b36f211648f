#!/usr/bin/env bash
# Compare ckt's predicted shared-memory wavefronts with ncu's counts, launch by launch. Exits 0
# only when there was at least one comparison and every launch matched; 77 (skipped) only when ncu
# or the CUDA driver is missing; 1 otherwise.
set -u
probe=$1
command -v ncu >/dev/null || [ -x /usr/local/cuda/bin/ncu ] || { echo "SKIPPED: ncu not found"; exit 77; }
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$probe" > /tmp/ckt_pred.txt 2>/tmp/ckt_probe.err; rc=$?
[ $rc -eq 77 ] && { cat /tmp/ckt_pred.txt; exit 77; }
[ $rc -ne 0 ] && { cat /tmp/ckt_probe.err; exit 1; }
"$ncu" --csv --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum "$probe" > /tmp/ckt_ncu.csv 2>/tmp/ckt_ncu.err || { cat /tmp/ckt_ncu.err; exit 1; }
python3 - <<'PY'
import csv
pred = [l.split() for l in open('/tmp/ckt_pred.txt') if l.startswith('PRED')]
rows = [r for r in csv.reader(l for l in open('/tmp/ckt_ncu.csv') if l.startswith('"'))]
hdr, rows = rows[0], rows[1:]
mi, vi, ii = hdr.index('Metric Name'), hdr.index('Metric Value'), hdr.index('ID')
wave = {}
for r in rows:
    if r[mi].endswith('wavefronts_mem_shared_op_ld.sum'):
        wave[int(r[ii])] = int(float(r[vi].replace(',', '')))
ok = bad = 0
print('| launch | instruction | pattern | predicted wavefronts | ncu wavefronts | match |')
print('|---|---|---|---|---|---|')
for p in pred:
    i, instr, name, cyc = int(p[1]), p[2], p[3], int(p[4])
    m = wave.get(i)
    # the probe performs exactly one warp-wide shared load per launch
    match = (m == cyc)
    ok += match; bad += not match
    print(f'| {i} | {instr} | {name} | {cyc} | {m} | {"yes" if match else "NO"} |')
extra = sorted(set(wave) - {int(p[1]) for p in pred})
if extra:  # launches ncu saw that the probe did not predict: the two lists do not line up
    print(f'ncu counted launches with no prediction: {extra}')
    bad += len(extra)
print(f'{ok} passed, {bad} failed')
if ok + bad == 0:  # no PRED lines or no ncu rows: nothing was compared, which is not a pass
    print('FAILED: no comparisons (the probe printed no PRED lines, or ncu gave no wavefront rows)')
    raise SystemExit(1)
import os
if os.environ.get('OUT'):
    open(os.path.join(os.environ['OUT'], 'bank_model.md'), 'w').write('see gpu_tests.log')
raise SystemExit(0 if bad == 0 else 1)
PY
