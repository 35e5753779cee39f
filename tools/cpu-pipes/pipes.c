/* Reciprocal throughput of single AVX-512 instructions on this CPU: twelve independent
 * register chains of one instruction in an inline-assembly loop (nothing else in the
 * loop but the counter), timed with the time-stamp counter. Prints time-stamp-counter
 * ticks per instruction and, with the core clock given as argv[1] in GHz and the TSC
 * rate as argv[2] (defaults: no conversion), core cycles per instruction.
 *
 *   tools/cpu-pipes/run.sh            # builds with the system's gcc and runs
 *
 * Used for docs/perf.md's notes on which pipe bounds the transcendental loops. */
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

/* Twelve independent chains: instruction `a` on registers 0, 2, ..., 10 and `b` on
 * 1, 3, ..., 11 (the same instruction twice for a single-instruction row), each reading
 * register `src` as its other operand. */
#define CHAINS(a, b, src)                                                               \
    "1:\n" a " " src ", %%zmm0, %%zmm0\n" b " " src ", %%zmm1, %%zmm1\n" a " " src       \
    ", %%zmm2, %%zmm2\n" b " " src ", %%zmm3, %%zmm3\n" a " " src ", %%zmm4, %%zmm4\n" b \
    " " src ", %%zmm5, %%zmm5\n" a " " src ", %%zmm6, %%zmm6\n" b " " src                \
    ", %%zmm7, %%zmm7\n" a " " src ", %%zmm8, %%zmm8\n" b " " src ", %%zmm9, %%zmm9\n" a \
    " " src ", %%zmm10, %%zmm10\n" b " " src ", %%zmm11, %%zmm11\n"                      \
    "dec %0\njnz 1b\n"

#define ITERS 10000000L
#define RUN(name, a, b, src)                                                            \
    do {                                                                                \
        long n = ITERS;                                                                 \
        unsigned long long t0 = __rdtsc();                                              \
        __asm__ volatile(CHAINS(a, b, src) : "+r"(n)::"cc", "xmm0", "xmm1", "xmm2", "xmm3",     \
                         "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",        \
                         "xmm11");                                                      \
        double t = (double)(__rdtsc() - t0) / (ITERS * 12.0);                           \
        if (scale > 0)                                                                  \
            printf("%-22s %5.2f TSC ticks  %5.2f core cycles\n", name, t, t * scale);   \
        else                                                                            \
            printf("%-22s %5.2f TSC ticks\n", name, t);                                 \
    } while (0)

int main(int argc, char **argv) {
    double scale = argc > 2 ? atof(argv[1]) / atof(argv[2]) : 0.0;
    float one = 1.0f;
    /* Every chain starts at 1.0. zmm15 = 1.0: division and multiplication by it keep
     * the chains at 1.0, adds and fused multiply-adds grow them (exactly, finite for
     * these iteration counts). zmm14 = 0.0: `vscalefps` by 2^0 keeps its chains at 1.0
     * (by 1.0 they would double into infinity). The integer rows do not care. */
    __asm__ volatile("vbroadcastss %0, %%zmm15\n"
                     "vpxord %%zmm14, %%zmm14, %%zmm14\n"
                     "vmovaps %%zmm15, %%zmm0\nvmovaps %%zmm15, %%zmm1\n"
                     "vmovaps %%zmm15, %%zmm2\nvmovaps %%zmm15, %%zmm3\n"
                     "vmovaps %%zmm15, %%zmm4\nvmovaps %%zmm15, %%zmm5\n"
                     "vmovaps %%zmm15, %%zmm6\nvmovaps %%zmm15, %%zmm7\n"
                     "vmovaps %%zmm15, %%zmm8\nvmovaps %%zmm15, %%zmm9\n"
                     "vmovaps %%zmm15, %%zmm10\nvmovaps %%zmm15, %%zmm11\n" ::"m"(one)
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                       "xmm8", "xmm9", "xmm10", "xmm11", "xmm14", "xmm15");
    RUN("vaddps zmm", "vaddps", "vaddps", "%%zmm15");
    RUN("vmulps zmm", "vmulps", "vmulps", "%%zmm15");
    RUN("vfmadd231ps zmm", "vfmadd231ps", "vfmadd231ps", "%%zmm15");
    RUN("vdivps zmm", "vdivps", "vdivps", "%%zmm15");
    RUN("vscalefps zmm", "vscalefps", "vscalefps", "%%zmm14");
    RUN("vpermilps zmm (var)", "vpermilps", "vpermilps", "%%zmm15");
    RUN("vpaddd zmm", "vpaddd", "vpaddd", "%%zmm15");
    RUN("vpandd zmm", "vpandd", "vpandd", "%%zmm15");
    /* Mixed: both kinds in flight at once (per instruction of either kind). */
    RUN("vaddps + vfmadd231ps", "vaddps", "vfmadd231ps", "%%zmm15");
    RUN("vaddps + vmulps", "vaddps", "vmulps", "%%zmm15");
    return 0;
}
