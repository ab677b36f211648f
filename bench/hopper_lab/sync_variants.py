# The mma.sync GEMM's lab variants (LAB_ARCH=sm_90 lab): from the library's generated sm_90 source
# (128 x 128 x 32 tiles: two 16-wide K steps a slice),
#   b_sync_carried.cu: the barrier of slice k0 + 1 moves between slice k0's two K steps, and slice
#     k0 + 1's step-0 fragments are loaded right after it, under slice k0's step-1 MMAs: the
#     fragments carried into the next iteration (before, each slice began with its barrier and then
#     waited for its first fragments with no MMA in flight).
# Plain text edits, each asserting the text it edits is there.
#   python3 bench/hopper_lab/sync_variants.py GENERATED.cu OUT.cu
import sys
s = open(sys.argv[1]).read()
L = s.split('\n')
def idx(pred, start=0):
    for i in range(start, len(L)):
        if pred(L[i]): return i
    raise SystemExit('not found')
loop = idx(lambda l: l.strip().startswith('for (ckt_i64 k0 = 0; k0 < ((ckt_i64)K + 31) / 32; ++k0) {'))
assert 'CKT_CP_WAIT(2)' in L[loop + 1] and '__syncthreads()' in L[loop + 2]
commit = idx(lambda l: 'CKT_CP_COMMIT();' in l, loop)
s0 = commit + 1
assert L[s0].strip().startswith('w16_0 = 0;'), L[s0]
s1 = idx(lambda l: l.strip().startswith('w18_0 = 0;'), s0)
m0 = idx(lambda l: 'blockwise_gemm: r6 += r17 x r18' in l, s1)
m1 = idx(lambda l: 'blockwise_gemm: r6 += r19 x r20' in l, m0)
end = idx(lambda l: 'CKT_CP_WAIT(0);' in l, m1)
assert L[end - 1] == '    }', repr(L[end - 1])
copies = L[loop + 3:commit + 1]
step0, step1, mma0, mma1 = L[s0:s1], L[s1:m0], L[m0:m1], L[m1:end - 1]
assert sum('(k0 % 4)' in l for l in step0) == 4
step0_next = [l.replace('(k0 % 4)', '(ckt_k0n % 4)') for l in step0]
new = L[:loop] + [
    '    CKT_CP_WAIT(2); /* slice 0 landed */', '    __syncthreads();',
    '    { /* slice 0, step 0: carried into the loop */', '    const ckt_i64 k0 = 0;'] + step0 + ['    }',
    L[loop]] + copies + step1 + mma0 + [
    '        CKT_CP_WAIT(2); /* slice k0 + 1 landed; every thread done with slice k0 */',
    '        __syncthreads();',
    '        { /* slice k0 + 1, step 0, loaded under slice k0 step 1 */', '        const ckt_i64 ckt_k0n = k0 + 1;'] + step0_next + ['        }'] + mma1 + ['    }'] + L[end:]
open(sys.argv[2], 'w').write('\n'.join(new))
