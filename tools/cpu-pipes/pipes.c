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

#define CHAINS(op)                                                                      \
    "1:\n" op " %%zmm15, %%zmm0, %%zmm0\n" op " %%zmm15, %%zmm1, %%zmm1\n" op           \
    " %%zmm15, %%zmm2, %%zmm2\n" op " %%zmm15, %%zmm3, %%zmm3\n" op                    \
    " %%zmm15, %%zmm4, %%zmm4\n" op " %%zmm15, %%zmm5, %%zmm5\n" op                    \
    " %%zmm15, %%zmm6, %%zmm6\n" op " %%zmm15, %%zmm7, %%zmm7\n" op                    \
    " %%zmm15, %%zmm8, %%zmm8\n" op " %%zmm15, %%zmm9, %%zmm9\n" op                    \
    " %%zmm15, %%zmm10, %%zmm10\n" op " %%zmm15, %%zmm11, %%zmm11\n"                   \
    "dec %0\njnz 1b\n"

#define ITERS 10000000L
#define RUN(name, op)                                                                   \
    do {                                                                                \
        long n = ITERS;                                                                 \
        unsigned long long t0 = __rdtsc();                                              \
        __asm__ volatile(CHAINS(op) : "+r"(n)::"cc", "xmm0", "xmm1", "xmm2", "xmm3",     \
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
    /* Every chain starts at 1.0 and steps by 1.0: no special values on the way. */
    __asm__ volatile("vbroadcastss %0, %%zmm15\n"
                     "vmovaps %%zmm15, %%zmm0\nvmovaps %%zmm15, %%zmm1\n"
                     "vmovaps %%zmm15, %%zmm2\nvmovaps %%zmm15, %%zmm3\n"
                     "vmovaps %%zmm15, %%zmm4\nvmovaps %%zmm15, %%zmm5\n"
                     "vmovaps %%zmm15, %%zmm6\nvmovaps %%zmm15, %%zmm7\n"
                     "vmovaps %%zmm15, %%zmm8\nvmovaps %%zmm15, %%zmm9\n"
                     "vmovaps %%zmm15, %%zmm10\nvmovaps %%zmm15, %%zmm11\n" ::"m"(one)
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                       "xmm8", "xmm9", "xmm10", "xmm11", "xmm15");
    RUN("vaddps zmm", "vaddps");
    RUN("vmulps zmm", "vmulps");
    RUN("vfmadd231ps zmm", "vfmadd231ps");
    RUN("vdivps zmm", "vdivps");
    RUN("vscalefps zmm", "vscalefps");
    RUN("vpermilps zmm (var)", "vpermilps");
    RUN("vpaddd zmm", "vpaddd");
    RUN("vpandd zmm", "vpandd");
    return 0;
}
