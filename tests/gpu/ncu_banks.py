"""The LDS bank model's predicted shared-memory wavefronts (the BANK lines a bench script prints)
next to ncu's counts of the same launches, as a markdown table.
  python3 ncu_banks.py gemm|transpose PREFIX   (reads PREFIX_pred.txt, PREFIX_ncu.csv, PREFIX_ncu.err)
gemm: the library GEMM's launches (cp.async copies may count outside the st metric, so no verdict);
transpose: the transpose variants, each row judged, then how many match."""
import csv
import sys


def read(prefix):
    pred = [l.split() for l in open(prefix + '_pred.txt') if l.startswith('BANK')]
    rows = [r for r in csv.reader(l for l in open(prefix + '_ncu.csv') if l.startswith('"'))]
    if not rows:
        return pred, None
    hdr, rows = rows[0], rows[1:]
    mi, vi, ii = hdr.index('Metric Name'), hdr.index('Metric Value'), hdr.index('ID')
    got = {}
    for r in rows:
        got.setdefault(int(r[ii]), {})['ld' if r[mi].endswith('op_ld.sum') else 'st'] = int(float(r[vi].replace(',', '')))
    return pred, got


def gemm(pred, got):
    print('| launch | predicted read wavefronts | ncu ld | predicted copy-in wavefronts | ncu st (cp.async may count elsewhere) |')
    print('|---|---|---|---|---|')
    for p, i in zip(pred, sorted(got)):
        print(f"| {p[1]} | {p[2]} | {got[i].get('ld')} | {p[3]} | {got[i].get('st')} |")


def transpose(pred, got):
    print('| kernel | predicted ld wavefronts | ncu ld | predicted st wavefronts | ncu st | match |')
    print('|---|---|---|---|---|---|')
    ok = 0
    for p, i in zip(pred, sorted(got)):
        g = got[i]
        m = int(p[2]) == g.get('ld') and int(p[3]) == g.get('st')
        ok += m
        print(f"| {p[1]} | {p[2]} | {g.get('ld')} | {p[3]} | {g.get('st')} | {'yes' if m else 'NO'} |")
    print(f'{ok} of {len(pred)} launches match')


def main():
    mode, prefix = sys.argv[1], sys.argv[2]
    pred, got = read(prefix)
    if got is None:
        print('no ncu rows:', open(prefix + '_ncu.err').read()[-2000:])
        return 0 if mode == 'gemm' else 1
    (gemm if mode == 'gemm' else transpose)(pred, got)
    return 0


if __name__ == '__main__':
    sys.exit(main())
