#!/usr/bin/env python3
"""Variants of the library's generated sm_90a GEMM source for the Hopper lab (lab.c).

  variants.py GEN_DEFAULT GEN_PERSISTENT OUTDIR [NAME,...]

GEN_DEFAULT / GEN_PERSISTENT: `k:source("sm_90a")` of gemm.build{target = "sm_90a", dtype = "f16"}
and of the same with persistent = true. Writes, into OUTDIR:
  a_default.cu          the default as generated (the reference output and timing)
  b_default_trace.cu    the default with %clock64 stamps (producer before / after its empty-barrier
                        wait and after its copies; consumer thread 0 after each full-barrier wait,
                        threads 0 and 128 before each release) in ckt_trace
  c_suspend_hint.cu     the default with the mbarrier waits' 10 ms suspend-time hint put back
  d_cluster.cu          clusters of 2 along M with TMA multicast of the shared B box (lab.c
                        launches it with a cluster dimension and a half-height B box)
  e_cluster_release.cu  the same with the remote release as mbarrier.arrive.release.cluster
  f_persistent_trace.cu the persistent kernel with per-tile stamps in ckt_ptrace
Each edit asserts that the text it edits is there: a change of the generator fails loudly here.
NAME,...: only those variants (e.g. a_default.cu,d_cluster.cu); a_default.cu is always first.
"""
import os
import re
import sys


def need(cond, what):
    if not cond:
        sys.exit("variants.py: the generated source no longer has " + what)


def barriers(s):
    full = re.search(r"/\* mbarrier set 0: (\d+) at LDS byte (\d+)", s)
    empty = re.search(r"/\* mbarrier set 1: (\d+) at LDS byte (\d+)", s)
    need(full and empty, "the two mbarrier sets (full, empty)")
    return int(full.group(1)), full.group(2), empty.group(2)


CLK = ('static __device__ __forceinline__ unsigned long long ckt_clk(void) '
       '{ unsigned long long t; asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)); return t; }\n')


def add_clock(s, decl):
    need('extern "C" __global__' in s, "the kernel's declaration")
    return s.replace('extern "C" __global__', CLK + decl + '\nextern "C" __global__', 1)


def trace(s):
    """ckt_trace[0..5][2048]: P after the empty wait, C after the full wait, R0/R1 releases (threads
    0 and 128), P0 before the empty wait, P2 after the copies; block 0 only."""
    S, full, empty = barriers(s)
    s = add_clock(s, "__device__ unsigned long long ckt_trace[6 * 2048];")
    out, seen = [], set()
    for line in s.split("\n"):
        if "ckt_mbar_wait(" in line and empty in line and "k0" in line:
            out.append("                if (bid_x == 0 && k0 < 2048) ckt_trace[3 * 2048 + k0] = ckt_clk();")
            out.append(line)
            out.append("                if (bid_x == 0 && k0 < 2048) ckt_trace[k0] = ckt_clk();")
            seen.add("P")
        elif "ckt_mbar_wait(" in line and full in line and "k1" in line:
            out.append(line)
            out.append("        if (bid_x == 0 && tid == 0 && k1 + 1 < 2048) ckt_trace[2048 + k1 + 1] = ckt_clk();")
            seen.add("C")
        elif "ckt_mbar_arrive(" in line and empty in line and "k1" in line:
            out.append("        if (bid_x == 0 && tid == 0 && k1 < 2048) ckt_trace[2 * 2048 + k1] = ckt_clk();")
            out.append("        if (bid_x == 0 && tid == 128 && k1 < 2048) ckt_trace[4 * 2048 + k1] = ckt_clk();")
            out.append(line)
            seen.add("R")
        elif "ckt_tma_load_2d(" in line and "ckt_tmap1" in line and "k0" in line:
            out.append(line)
            out.append("                    if (bid_x == 0 && k0 < 2048) ckt_trace[5 * 2048 + k0] = ckt_clk();")
            seen.add("P2")
        else:
            out.append(line)
    need(seen == {"P", "C", "R", "P2"}, "the producer's and consumers' waits, copies and releases")
    return "\n".join(out)


def suspend_hint(s):
    old = 'mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"\n                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");'
    need(old in s, "the prelude's try_wait")
    return s.replace(old, 'mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3; selp.u32 %0, 1, 0, p; }"\n'
                     '                 : "=r"(done) : "r"(bar), "r"(parity), "r"(0x989680u) : "memory");')


def cluster(s, release_cluster):
    """Clusters of 2 CTAs along M: grouped order puts tiles (tm, tn) and (tm + 1, tn) on blocks 2i
    and 2i + 1, which share B's box. Each CTA copies half of it (128 rows at rank x 128) with
    .multicast::cluster into both CTAs' stage; the full barriers expect the same bytes as before.
    A stage is released in both CTAs (lane r of each warp arrives on CTA r: 16 arrivals); the
    producer waits for the last releases before it exits, so no remote arrival reaches an exited
    CTA; a cluster barrier replaces the block barrier after the mbarriers' initialization."""
    S, full, empty = barriers(s)
    init = "ckt_mbar_init(ckt_smem_addr(ckt_lds) + %s + 8 * ckt_i, 256);" % empty
    need(init in s, "the empty barriers' 256 arrivals")
    s = s.replace(init, "ckt_mbar_init(ckt_smem_addr(ckt_lds) + %s + 8 * ckt_i, 16);" % empty)
    sync = "    __syncthreads(); /* every thread sees the initialized mbarriers */"
    need(sync in s, "the barrier after the mbarriers' initialization")
    s = s.replace(sync, '    asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");\n'
                  '    ckt_u32 rank; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));')
    m = re.search(r"ckt_tma_load_2d\((ckt_smem_addr\(ckt_lds\) \+ \d+ \+ \(ckt_u32\)\(\(k0 % \d+\) \* (\d+)\) \* 2), &ckt_tmap1, \(int\)\((\w+)\), \(int\)\((\w+)\), ckt_bar\);", s)
    need(m, "the copy of B's box")
    half_bytes = int(m.group(2))  # elements a stage of B = 256 rows x 64: half of it in bytes
    s = s.replace(m.group(0), 'asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"\n'
                  '                                 :: "r"(' + m.group(1) + ' + rank * ' + str(half_bytes) + 'u), "l"(&ckt_tmap1), "r"((int)' + m.group(3) +
                  '), "r"((int)' + m.group(4) + ' + (int)rank * 128), "r"(ckt_bar), "h"((unsigned short)3) : "memory");')
    tail = "            }\n        }\n        return; /* the producer warp is done: what follows is the block's threads' */"
    need(tail in s, "the end of the producer's loop")
    s = s.replace(tail, "            }\n            for (ckt_i64 k0 = (K + 63) / 64; k0 < (K + 63) / 64 + %d; ++k0)\n"
                  "                ckt_mbar_wait(ckt_smem_addr(ckt_lds) + %s + 8 * (ckt_u32)(k0 %% %d), (ckt_u32)(((k0 / %d) + 1) %% 2));\n"
                  "        }\n        return; /* the producer warp is done: what follows is the block's threads' */" % (S, empty, S, S))
    rel = re.search(r"ckt_mbar_arrive\((ckt_smem_addr\(ckt_lds\) \+ %s \+ 8 \* \(ckt_u32\)\(\(k1 \+ \d+\) %% \d+\))\);" % empty, s)
    need(rel, "the consumers' release")
    s = s.replace(rel.group(0), "ckt_rel(%s, tid);" % rel.group(1))
    drain = 'asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); /* at most 0 groups of MMAs in flight */'
    need(drain in s, "the final wgmma wait")
    s = s.replace(drain, drain + "\n    if ((K + 63) / 64 >= 1) ckt_rel(ckt_smem_addr(ckt_lds) + %s + 8 * (ckt_u32)(((K + 63) / 64 - 1) %% %d), tid);" % (empty, S))
    arrive = ("mbarrier.arrive.release.cluster.shared::cluster.b64" if release_cluster else "mbarrier.arrive.shared::cluster.b64")
    fn = ('CKT_FN void ckt_rel(ckt_u32 bar, int tid)\n{\n    if ((tid & 31) < 2)\n'
          '        asm volatile("{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %0, %1; ' + arrive + ' _, [ra]; }" :: "r"(bar), "r"((ckt_u32)(tid & 31)) : "memory");\n}\n')
    return s.replace('extern "C" __global__', fn + 'extern "C" __global__', 1)


def persistent_trace(s):
    """ckt_ptrace[4][4096], block 0: [0][g] producer after the empty wait of slice g, [1][g]
    consumer thread 0 after the full wait, [2][t] / [3][t] tile t's epilogue start / end."""
    S, full, empty = barriers(s)
    s = add_clock(s, "__device__ unsigned long long ckt_ptrace[4][4096];")
    nk = "((K + 63) / 64)"
    out, seen = [], set()
    lines = s.split("\n")
    for i, line in enumerate(lines):
        out.append(line)
        if "ckt_mbar_wait(" in line and empty in line and "k1" in line and "k0" in line:
            out.append("                    if (bid_x == 0 && k0 * %s + k1 < 4096) ckt_ptrace[0][k0 * %s + k1] = ckt_clk();" % (nk, nk))
            seen.add("P")
        elif "ckt_mbar_wait(" in line and full in line and "k3" in line:
            out.append("            if (bid_x == 0 && tid == 0 && k2 * %s + k3 + 1 < 4096) ckt_ptrace[1][k2 * %s + k3 + 1] = ckt_clk();" % (nk, nk))
            seen.add("C")
        elif "ckt_mbar_wait(" in line and full in line and "k2" in line:
            out.append("            if (bid_x == 0 && tid == 0 && k2 * %s < 4096) ckt_ptrace[1][k2 * %s] = ckt_clk();" % (nk, nk))
            seen.add("C0")
    s = "\n".join(out)
    ep = re.search(r"\n(        w\d+_0 = ckt_floordiv\(bid_x \+ \(k2 \* nblk_x\))", s)
    need(ep, "the persistent epilogue's first window origin")
    s = s.replace(ep.group(0), "\n        if (bid_x == 0 && tid == 0 && k2 < 4096) ckt_ptrace[2][k2] = ckt_clk();" + ep.group(0), 1)
    end = "\n    }\n}"
    need(s.rstrip().endswith("}") and end in s, "the end of the tile loop")
    k = s.rindex(end)
    s = s[:k] + "\n        if (bid_x == 0 && tid == 0 && k2 < 4096) ckt_ptrace[3][k2] = ckt_clk();" + s[k:]
    need(seen == {"P", "C", "C0"}, "the persistent kernel's waits")
    return s


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    gen, pers, outdir = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
    os.makedirs(outdir, exist_ok=True)
    variants = {"a_default.cu": lambda: gen, "b_default_trace.cu": lambda: trace(gen),
                "c_suspend_hint.cu": lambda: suspend_hint(gen), "d_cluster.cu": lambda: cluster(gen, False),
                "e_cluster_release.cu": lambda: cluster(gen, True),
                "f_persistent_trace.cu": lambda: persistent_trace(pers)}
    names = sorted(set(sys.argv[4].split(",")) | {"a_default.cu"}) if len(sys.argv) == 5 else sorted(variants)
    for name in names:
        need(name in variants, "a variant named " + name)
        with open(os.path.join(outdir, name), "w") as f:
            f.write(variants[name]())
    print(" ".join(names))


if __name__ == "__main__":
    main()
