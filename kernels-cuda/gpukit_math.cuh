// gpukit_math.cuh: gpukit's portable transcendental functions in CUDA.
//
//   gk_exp, gk_log, gk_tanh, gk_sigmoid, gk_erf   (float and double overloads)
//   gk_silu, gk_softplus                          (composites of gpukit_core::numeric)
//   gk_pow                                        (math/pow.rs; float and double)
//
// A line-by-line mirror of crates/gpukit-core/src/math.rs: the same constants (written
// here as exact hexadecimal literals of the values the Rust decimal literals round to;
// the decimal is in the comment), the same evaluation order, an fma exactly where the
// Rust code writes mul_add and two roundings everywhere else (sources are compiled with
// --fmad=false), the same special-case branches and the same bit manipulations. float
// functions compute in float only, double functions in double only.
//
// Self-contained: include it from a .cu file (after or without gpukit.cuh), or from host
// C++ with GK_HOST_SHIM defined (kernels-cuda/math_host_check.cpp, compiled with
// -ffp-contract=off and no fast math, checks every function against the Rust one bit
// for bit; crates/gpukit-cuda/tests/math_host.rs runs it).
#pragma once

#if defined(GK_HOST_SHIM)
#include <cmath>
#include <cstdint>
#include <cstring>
#define GK_MATH_FN static inline
GK_MATH_FN float gk_m_fma(float a, float b, float c) { return std::fmaf(a, b, c); }
GK_MATH_FN double gk_m_fma(double a, double b, double c) { return std::fma(a, b, c); }
GK_MATH_FN unsigned gk_m_bits(float x) {
    unsigned u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
GK_MATH_FN unsigned long long gk_m_bits(double x) {
    unsigned long long u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
GK_MATH_FN float gk_m_f32(unsigned u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}
GK_MATH_FN double gk_m_f64(unsigned long long u) {
    double x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}
#else
#define GK_MATH_FN __device__ __forceinline__
GK_MATH_FN float gk_m_fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
GK_MATH_FN double gk_m_fma(double a, double b, double c) { return __fma_rn(a, b, c); }
GK_MATH_FN unsigned gk_m_bits(float x) { return __float_as_uint(x); }
GK_MATH_FN unsigned long long gk_m_bits(double x) {
    return (unsigned long long)__double_as_longlong(x);
}
GK_MATH_FN float gk_m_f32(unsigned u) { return __uint_as_float(u); }
GK_MATH_FN double gk_m_f64(unsigned long long u) { return __longlong_as_double((long long)u); }
#endif

// ---------------------------------------------------------------------------------
// Small helpers (math.rs: horner_*, pow2i_*, scale_*, two_sum_*, with_sign_of_*).
// ---------------------------------------------------------------------------------

// Horner c0 + x*(c1 + x*(c2 + ...)): acc = c[n-1]; acc = fma(acc, x, c[i]) for
// i = n-2 down to 0, every step one fma. All coefficients must have the type of x (a
// mixed call does not deduce: a missing `f` suffix is a compile error).
template <class R> GK_MATH_FN R gk_m_horner(R, R c) { return c; }
template <class R, class... Cs> GK_MATH_FN R gk_m_horner(R x, R c0, Cs... cs) {
    return gk_m_fma(gk_m_horner(x, cs...), x, c0);
}

// 2^k for -126 <= k <= 127 / -1022 <= k <= 1023, built from the bit pattern.
GK_MATH_FN float gk_m_pow2i_f32(int k) { return gk_m_f32((unsigned)(k + 127) << 23); }
GK_MATH_FN double gk_m_pow2i_f64(int k) {
    return gk_m_f64((unsigned long long)(k + 1023) << 52);
}

// y * 2^k with a single rounding (only when subnormal) and correct overflow.
GK_MATH_FN float gk_m_scale(float y, int k) {
    if (k > 127) {
        return (y * gk_m_pow2i_f32(k - 1)) * 2.0f;
    } else if (k < -126) {
        return (y * gk_m_pow2i_f32(k + 64)) * gk_m_pow2i_f32(-64);
    } else {
        return y * gk_m_pow2i_f32(k);
    }
}
GK_MATH_FN double gk_m_scale(double y, int k) {
    if (k > 1023) {
        return (y * gk_m_pow2i_f64(k - 1)) * 2.0;
    } else if (k < -1022) {
        return (y * gk_m_pow2i_f64(k + 512)) * gk_m_pow2i_f64(-512);
    } else {
        return y * gk_m_pow2i_f64(k);
    }
}

// Knuth TwoSum: s = fl(a + b), a + b = s + e exactly.
template <class R> GK_MATH_FN void gk_m_two_sum(R a, R b, R& s, R& e) {
    s = a + b;
    const R bb = s - a;
    const R aa = s - bb;
    e = (a - aa) + (b - bb);
}

// copysign(m, x) for m >= 0, via the bits.
GK_MATH_FN float gk_m_with_sign_of(float m, float x) {
    return gk_m_f32(gk_m_bits(m) | (gk_m_bits(x) & 0x80000000u));
}
GK_MATH_FN double gk_m_with_sign_of(double m, double x) {
    return gk_m_f64(gk_m_bits(m) | (gk_m_bits(x) & 0x8000000000000000ull));
}

GK_MATH_FN bool gk_m_isnan(float x) { return x != x; }
GK_MATH_FN bool gk_m_isnan(double x) { return x != x; }

// ---------------------------------------------------------------------------------
// Constants (math.rs names; decimal = the Rust literal).
// ---------------------------------------------------------------------------------

#define GK_M_MAGIC_F32 0x1.8p+23f               // 12582912.0
#define GK_M_MAGIC_F64 0x1.8p+52                // 6755399441055744.0
#define GK_M_LOG2E_F32 0x1.715476p+0f           // LOG2_E, 0x3fb8aa3b
#define GK_M_LOG2E_F64 0x1.71547652b82fep+0     // LOG2_E, 0x3ff71547652b82fe
#define GK_M_LN2_HI_F32 0x1.62e43p-1f           // LN_2, 0x3f317218
#define GK_M_LN2_LO_F32 -0x1.05c61p-29f         // -1.9046542e-09
#define GK_M_LN2_HI_F64 0x1.62e42fefa39efp-1    // LN_2, 0x3fe62e42fefa39ef
#define GK_M_LN2_LO_F64 0x1.abc9e3b39803fp-56   // 2.3190468138462996e-17
#define GK_M_SQRT_HALF_BITS_F32 0x3f3504f3u
#define GK_M_SQRT_HALF_BITS_F64 0x3fe6a09e667f3bcdull

// ---------------------------------------------------------------------------------
// exp kernels: exp(x + xl) = 2^k * (hi + lo).
// ---------------------------------------------------------------------------------

GK_MATH_FN void gk_m_exp_kernel(float x, float xl, int& k, float& hi, float& lo) {
    const float t = gk_m_fma(x, GK_M_LOG2E_F32, GK_M_MAGIC_F32);
    const float kf = t - GK_M_MAGIC_F32;
    k = (int)kf;
    const float r_hi = gk_m_fma(-kf, GK_M_LN2_HI_F32, x);
    const float r_lo = gk_m_fma(-kf, GK_M_LN2_LO_F32, xl);
    float r, r_err;
    gk_m_two_sum(r_hi, r_lo, r, r_err);
    const float r2 = r * r;
    // EXP_F32: 4.9999994e-01, 1.666652e-01, 4.1668408e-02, 8.368919e-03, 1.3814181e-03
    const float q = gk_m_horner(r, 0x1.fffffcp-2f, 0x1.55549p-3f, 0x1.5558fcp-5f,
                                0x1.123b94p-7f, 0x1.6a2166p-10f);
    const float p = gk_m_fma(r2, q, gk_m_fma(r_err, r, r_err));
    const float s = 1.0f + r;
    const float e = (1.0f - s) + r;
    const float t2 = e + p;
    hi = s + t2;
    lo = (s - hi) + t2;
}

GK_MATH_FN void gk_m_exp_kernel(double x, double xl, int& k, double& hi, double& lo) {
    const double t = gk_m_fma(x, GK_M_LOG2E_F64, GK_M_MAGIC_F64);
    const double kf = t - GK_M_MAGIC_F64;
    k = (int)kf;
    const double r_hi = gk_m_fma(-kf, GK_M_LN2_HI_F64, x);
    const double r_lo = gk_m_fma(-kf, GK_M_LN2_LO_F64, xl);
    double r, r_err;
    gk_m_two_sum(r_hi, r_lo, r, r_err);
    const double r2 = r * r;
    const double q = gk_m_horner(r,
                                 0x1p-1,                  // 0.5
                                 0x1.555555555555cp-3,    // 0.16666666666666685
                                 0x1.55555555555p-5,      // 0.041666666666666075
                                 0x1.111111110eb85p-7,    // 0.008333333333316659
                                 0x1.6c16c16c30dfcp-10,   // 0.0013888888889120867
                                 0x1.a01a01b3d3c4ap-13,   // 0.00019841269897333459
                                 0x1.a01a0134bc1b8p-16,   // 2.480158692014383e-05
                                 0x1.71ddef470b661p-19,   // 2.7557233895001537e-06
                                 0x1.27e5b6675240dp-22,   // 2.755758487694327e-07
                                 0x1.af6d69cb4b18p-26,    // 2.5112379548377275e-08
                                 0x1.1e3c27d344e2ep-29);  // 2.0826336017154413e-09
    const double p = gk_m_fma(r2, q, gk_m_fma(r_err, r, r_err));
    const double s = 1.0 + r;
    const double e = (1.0 - s) + r;
    const double t2 = e + p;
    hi = s + t2;
    lo = (s - hi) + t2;
}

// ---------------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------------

GK_MATH_FN float gk_exp(float x) {
    if (gk_m_isnan(x)) return x;
    if (x > 0x1.62e42ep+6f) return gk_m_f32(0x7f800000u);  // 0x42b17217
    if (x < -0x1.9fe368p+6f) return 0.0f;                // 0xc2cff1b4
    int k;
    float hi, lo;
    gk_m_exp_kernel(x, 0.0f, k, hi, lo);
    return gk_m_scale(hi + lo, k);
}

GK_MATH_FN double gk_exp(double x) {
    if (gk_m_isnan(x)) return x;
    if (x > 0x1.62e42fefa39efp+9) return gk_m_f64(0x7ff0000000000000ull);  // 0x40862e42fefa39ef
    if (x < -0x1.74910d52d3051p+9) return 0.0;                             // 0xc0874910d52d3051
    int k;
    double hi, lo;
    gk_m_exp_kernel(x, 0.0, k, hi, lo);
    return gk_m_scale(hi + lo, k);
}

// ---------------------------------------------------------------------------------
// log
// ---------------------------------------------------------------------------------

GK_MATH_FN float gk_log(float x) {
    if (gk_m_isnan(x)) return x;
    if (x < 0.0f) return gk_m_f32(0x7fc00000u);
    if (x == 0.0f) return gk_m_f32(0xff800000u);
    if (x == gk_m_f32(0x7f800000u)) return x;
    unsigned ix = gk_m_bits(x);
    int kadj = 0;
    if (ix < 0x00800000u) {
        ix = gk_m_bits(x * 33554432.0f);  // 2^25, exact
        kadj = -25;
    }
    ix += 0x3f800000u - GK_M_SQRT_HALF_BITS_F32;
    const int k = (int)(ix >> 23) - 127 + kadj;
    const float m = gk_m_f32((ix & 0x007fffffu) + GK_M_SQRT_HALF_BITS_F32);
    const float f = m - 1.0f;
    const float s = f / (2.0f + f);
    const float z = s * s;
    // LOG_F32: 6.666667e-01, 3.9999455e-01, 2.8596687e-01, 2.2449134e-01
    const float r = z * gk_m_horner(z, 0x1.555556p-1f, 0x1.99982cp-2f, 0x1.24d48p-2f,
                                    0x1.cbc21ep-3f);
    const float hfsq = 0.5f * f * f;
    const float kf = (float)k;
    const float w = gk_m_fma(s, hfsq + r, kf * GK_M_LN2_LO_F32);
    const float v = hfsq - w;
    return gk_m_fma(kf, GK_M_LN2_HI_F32, f - v);
}

GK_MATH_FN double gk_log(double x) {
    if (gk_m_isnan(x)) return x;
    if (x < 0.0) return gk_m_f64(0x7ff8000000000000ull);
    if (x == 0.0) return gk_m_f64(0xfff0000000000000ull);
    if (x == gk_m_f64(0x7ff0000000000000ull)) return x;
    unsigned long long ix = gk_m_bits(x);
    int kadj = 0;
    if (ix < 0x0010000000000000ull) {
        ix = gk_m_bits(x * 18014398509481984.0);  // 2^54, exact
        kadj = -54;
    }
    ix += 0x3ff0000000000000ull - GK_M_SQRT_HALF_BITS_F64;
    const int k = (int)(ix >> 52) - 1023 + kadj;
    const double m = gk_m_f64((ix & 0x000fffffffffffffull) + GK_M_SQRT_HALF_BITS_F64);
    const double f = m - 1.0;
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double r = z * gk_m_horner(z,
                                     0x1.5555555555558p-1,   // 0.666666666666667
                                     0x1.999999999279p-2,    // 0.39999999999837943
                                     0x1.24924935909cfp-2,   // 0.2857142867034356
                                     0x1.c71c58665c025p-3,   // 0.2222220331418622
                                     0x1.74659adccdabcp-3,   // 0.18183442102755076
                                     0x1.39a45c3e9d73p-3,    // 0.15314552370153356
                                     0x1.2f5902597337dp-3);  // 0.1481189902828212
    const double hfsq = 0.5 * f * f;
    const double kf = (double)k;
    const double w = gk_m_fma(s, hfsq + r, kf * GK_M_LN2_LO_F64);
    const double v = hfsq - w;
    return gk_m_fma(kf, GK_M_LN2_HI_F64, f - v);
}

// ---------------------------------------------------------------------------------
// tanh
// ---------------------------------------------------------------------------------

GK_MATH_FN float gk_tanh(float x) {
    if (gk_m_isnan(x)) return x;
    const float a = gk_m_f32(gk_m_bits(x) & 0x7fffffffu);
    if (a < 0.5625f) {
        if (a == 0.0f) return x;
        const float z = x * x;
        // TANH_F32: -3.3333334e-01, 1.3333496e-01, -5.399916e-02, 2.2072058e-02,
        //           -9.3202125e-03, 3.4215571e-03
        const float p = gk_m_horner(z, -0x1.555556p-2f, 0x1.1111ecp-3f, -0x1.ba5c72p-5f,
                                    0x1.69a0ecp-6f, -0x1.31679cp-7f, 0x1.c07868p-9f);
        return gk_m_fma(x * z, p, x);
    }
    if (a >= 9.5f) return gk_m_with_sign_of(1.0f, x);
    int k;
    float hi, lo;
    gk_m_exp_kernel(2.0f * a, 0.0f, k, hi, lo);
    const float sc = gk_m_pow2i_f32(k);
    const float eh = hi * sc;
    const float el = lo * sc;
    const float dh = eh + 1.0f;
    const float dl = ((eh - dh) + 1.0f) + el;
    const float qh = 2.0f / dh;
    const float rr = gk_m_fma(-qh, dh, 2.0f) - qh * dl;
    const float ql = rr / dh;
    const float yh = 1.0f - qh;
    const float yl = ((1.0f - yh) - qh) - ql;
    return gk_m_with_sign_of(yh + yl, x);
}

GK_MATH_FN double gk_tanh(double x) {
    if (gk_m_isnan(x)) return x;
    const double a = gk_m_f64(gk_m_bits(x) & 0x7fffffffffffffffull);
    if (a < 0.5625) {
        if (a == 0.0) return x;
        const double z = x * x;
        const double p = gk_m_horner(z,
                                     -0x1.5555555555555p-2,   // -0.3333333333333333
                                     0x1.111111111110ep-3,    // 0.13333333333333325
                                     -0x1.ba1ba1ba1aa88p-5,   // -0.0539682539682263
                                     0x1.664f488206a73p-6,    // 0.021869488533506187
                                     -0x1.226e352558ea9p-7,   // -0.00886323542608321
                                     0x1.d6d3beb9ce11ep-9,    // 0.0035921259231167643
                                     -0x1.7da1b0412dbedp-10,  // -0.0014558090045235742
                                     0x1.353e4512111b7p-11,   // 0.0005898346737543335
                                     -0x1.f37b3fd6219f3p-13,  // -0.00023817131176802307
                                     0x1.89554ee48e322p-14,   // 9.377795101607166e-05
                                     -0x1.11a8d8866bffp-15,   // -3.262276100046691e-05
                                     0x1.e3e320425be85p-18);  // 7.210481330552033e-06
        return gk_m_fma(x * z, p, x);
    }
    if (a >= 22.0) return gk_m_with_sign_of(1.0, x);
    int k;
    double hi, lo;
    gk_m_exp_kernel(2.0 * a, 0.0, k, hi, lo);
    const double sc = gk_m_pow2i_f64(k);
    const double eh = hi * sc;
    const double el = lo * sc;
    const double dh = eh + 1.0;
    const double dl = ((eh - dh) + 1.0) + el;
    const double qh = 2.0 / dh;
    const double rr = gk_m_fma(-qh, dh, 2.0) - qh * dl;
    const double ql = rr / dh;
    const double yh = 1.0 - qh;
    const double yl = ((1.0 - yh) - qh) - ql;
    return gk_m_with_sign_of(yh + yl, x);
}

// ---------------------------------------------------------------------------------
// sigmoid
// ---------------------------------------------------------------------------------

GK_MATH_FN float gk_sigmoid(float x) {
    if (gk_m_isnan(x)) return x;
    if (x > 18.0f) return 1.0f;
    if (x < -24.0f) return gk_exp(x);
    const float a = gk_m_f32(gk_m_bits(x) & 0x7fffffffu);
    int k;
    float hi, lo;
    gk_m_exp_kernel(-a, 0.0f, k, hi, lo);
    const float sc = gk_m_pow2i_f32(k);
    const float eh = hi * sc;
    const float el = lo * sc;
    const float dh = 1.0f + eh;
    const float dl = ((1.0f - dh) + eh) + el;
    float nh, nl;
    if (x >= 0.0f) {
        nh = 1.0f;
        nl = 0.0f;
    } else {
        nh = eh;
        nl = el;
    }
    const float y0 = nh / dh;
    const float rr = gk_m_fma(-y0, dh, nh) + (nl - y0 * dl);
    return y0 + rr / dh;
}

GK_MATH_FN double gk_sigmoid(double x) {
    if (gk_m_isnan(x)) return x;
    if (x > 40.0) return 1.0;
    if (x < -45.0) return gk_exp(x);
    const double a = gk_m_f64(gk_m_bits(x) & 0x7fffffffffffffffull);
    int k;
    double hi, lo;
    gk_m_exp_kernel(-a, 0.0, k, hi, lo);
    const double sc = gk_m_pow2i_f64(k);
    const double eh = hi * sc;
    const double el = lo * sc;
    const double dh = 1.0 + eh;
    const double dl = ((1.0 - dh) + eh) + el;
    double nh, nl;
    if (x >= 0.0) {
        nh = 1.0;
        nl = 0.0;
    } else {
        nh = eh;
        nl = el;
    }
    const double y0 = nh / dh;
    const double rr = gk_m_fma(-y0, dh, nh) + (nl - y0 * dl);
    return y0 + rr / dh;
}

// ---------------------------------------------------------------------------------
// erf
// ---------------------------------------------------------------------------------

GK_MATH_FN float gk_erf(float x) {
    if (gk_m_isnan(x)) return x;
    const float a = gk_m_f32(gk_m_bits(x) & 0x7fffffffu);
    if (a < 0.875f) {
        const float z = x * x;
        // ERF_F32: 1.2837917e-01, -3.761263e-01, 1.1283623e-01, -2.6855364e-02,
        //          5.190942e-03, -8.02644e-04, 7.867855e-05
        return gk_m_fma(x,
                        gk_m_horner(z, 0x1.06eba8p-3f, -0x1.81274p-2f, 0x1.ce2d5cp-4f,
                                    -0x1.b7ff9p-6f, 0x1.54318ep-8f, -0x1.a4d10ep-11f,
                                    0x1.4a0074p-14f),
                        x);
    }
    if (a >= 4.0f) return gk_m_with_sign_of(1.0f, x);
    float r;
    if (a < 1.5f) {
        // ERFC_F32_0: 3.8130406e-01, -2.2278225e-01, 1.167513e-01, -5.6077503e-02,
        //             2.5038023e-02, -1.08308885e-02, 4.4855936e-03
        r = gk_m_horner(a - 1.1875f, 0x1.867492p-2f, -0x1.c8421p-3f, 0x1.de369cp-4f,
                        -0x1.cb630cp-5f, 0x1.9a3914p-6f, -0x1.62e814p-7f, 0x1.25f7c6p-8f);
    } else if (a < 2.5f) {
        // ERFC_F32_1: 2.5539568e-01, -1.0679681e-01, 4.180249e-02, -1.5449556e-02,
        //             5.441049e-03, -1.9176528e-03, 6.092204e-04
        r = gk_m_horner(a - 2.0f, 0x1.058672p-2f, -0x1.b57092p-4f, 0x1.56722cp-5f,
                        -0x1.fa4044p-7f, 0x1.6495a8p-8f, -0x1.f6b38p-10f, 0x1.3f682ep-11f);
    } else {
        // ERFC_F32_2: 1.6633566e-01, -4.718985e-02, 1.2927355e-02, -3.501702e-03,
        //             9.330823e-04, -1.3475954e-04
        r = gk_m_horner(a - 3.25f, 0x1.54a7cap-3f, -0x1.82944ap-5f, 0x1.a79a84p-7f,
                        -0x1.caf9ap-9f, 0x1.e9343p-11f, -0x1.1a9c7ap-13f);
    }
    const float x2h = a * a;
    const float x2l = gk_m_fma(a, a, -x2h);
    int k;
    float hi, lo;
    gk_m_exp_kernel(-x2h, -x2l, k, hi, lo);
    const float sc = gk_m_pow2i_f32(k);
    const float eh = hi * sc;
    const float el = lo * sc;
    const float qh = eh * r;
    const float ql = gk_m_fma(eh, r, -qh) + el * r;
    const float yh = 1.0f - qh;
    const float yl = ((1.0f - yh) - qh) - ql;
    return gk_m_with_sign_of(yh + yl, x);
}

GK_MATH_FN double gk_erf(double x) {
    if (gk_m_isnan(x)) return x;
    const double a = gk_m_f64(gk_m_bits(x) & 0x7fffffffffffffffull);
    if (a < 0.875) {
        const double z = x * x;
        return gk_m_fma(x,
                        gk_m_horner(z,
                                    0x1.06eba8214db69p-3,    // 0.1283791670955126
                                    -0x1.812746b0379e4p-2,   // -0.37612638903183737
                                    0x1.ce2f21a042991p-4,    // 0.11283791670954303
                                    -0x1.b82ce3127abacp-6,   // -0.026866170644932616
                                    0x1.565bcd0bae951p-8,    // 0.005223977622956192
                                    -0x1.c02db35e6724cp-11,  // -0.000854832683944881
                                    0x1.f9a30f2eee56fp-14,   // 0.00012055324326256331
                                    -0x1.f4d00d004cbf4p-17,  // -1.492538149303576e-05
                                    0x1.b9c055ba5c021p-20,   // 1.6456518624162545e-06
                                    -0x1.5dca5265dece2p-23,  // -1.628838106024303e-07
                                    0x1.e517c6de82467p-27,   // 1.4118060884438384e-08
                                    -0x1.dbd1ff07be07fp-31), // -8.655120795132252e-10
                        x);
    }
    if (a >= 6.0) return gk_m_with_sign_of(1.0, x);
    double r;
    if (a < 1.5) {
        r = gk_m_horner(a - 1.1875,
                        0x1.8674923c605e1p-2,    // 0.3813040589667179
                        -0x1.c841f18283f7ap-3,   // -0.22278202704955757
                        0x1.de35ab5b880c5p-4,    // 0.11675040184536829
                        -0x1.cb858a0b1dd65p-5,   // -0.056093949905455166
                        0x1.9abcc2c9dcaa1p-6,    // 0.025069418166320138
                        -0x1.5908bd6b9dcc1p-7,   // -0.01052960633317779
                        0x1.127f6dc29e967p-8,    // 0.0041885035485570215
                        -0x1.a01de52556936p-10,  // -0.0015873595342186914
                        0x1.2ded1b774f61ap-11,   // 0.0005758785254454419
                        -0x1.a5103298e6974p-13,  // -0.0002007786140694846
                        0x1.1b13ad27ab496p-14,   // 6.749078294872516e-05
                        -0x1.6ffb562da2cffp-16,  // -2.1933423502801423e-05
                        0x1.cf8e02445790ap-18,   // 6.9075036360484626e-06
                        -0x1.1b62824836534p-19,  // -2.1113812956717694e-06
                        0x1.51487405d12abp-21,   // 6.282385818031708e-07
                        -0x1.94123d9855bb2p-23,  // -1.8816033954080176e-07
                        0x1.c68134f104a6ap-25);  // 5.29113125606479e-08
    } else if (a < 2.5) {
        r = gk_m_horner(a - 2.0,
                        0x1.058671b52c779p-2,    // 0.2553956763105059
                        -0x1.b57034efd3f59p-4,   // -0.10679646185348925
                        0x1.5672b9ea115d1p-5,    // 0.04180275260345535
                        -0x1.fa9d3ac9599dfp-7,   // -0.015460637764317773
                        0x1.6490721aa90f3p-8,    // 0.005440738542038514
                        -0x1.e028e8a42c21bp-10,  // -0.0018316642754535653
                        0x1.369ff643360f2p-11,   // 0.0005924698856701034
                        -0x1.838220532413p-13,   // -0.00018477835928765998
                        0x1.d37e559a8a2eep-15,   // 5.5729567254586085e-05
                        -0x1.115dc7427b591p-16,  // -1.6293902499178002e-05
                        0x1.3619b7aec0d4ep-18,   // 4.62085692621028e-06
                        -0x1.57169489e9eaep-20,  // -1.278103157956454e-06
                        0x1.88ee0bbb73225p-22,   // 3.6594445493030827e-07
                        -0x1.9a4545d5f47c8p-24); // -9.552356713897515e-08
    } else if (a < 3.5) {
        r = gk_m_horner(a - 3.0,
                        0x1.6e9827d229ceap-3,    // 0.1790011511813881
                        -0x1.bd6ae4d14b228p-5,   // -0.054372260007174156
                        0x1.043fe1a9b16a6p-6,    // 0.01588437116040233
                        -0x1.259061ba80492p-8,   // -0.004479431018354367
                        0x1.409cc2803a9b4p-10,   // 0.0012230390275883409
                        -0x1.53dec9a5a477p-12,   // -0.00032412554205862084
                        0x1.5e7407348a652p-14,   // 8.355456231670083e-05
                        -0x1.60255859ced19p-16,  // -2.098953004934815e-05
                        0x1.59273d1a1c35dp-18,   // 5.143184603637781e-06
                        -0x1.4aeaa6c7e8172p-20,  // -1.232760427051583e-06
                        0x1.42ee0e130426dp-22,   // 3.0075190798985003e-07
                        -0x1.27ae17bd86063p-24); // -6.8843376298582e-08
    } else if (a < 4.5) {
        r = gk_m_horner(a - 4.0,
                        0x1.18932bf08de42p-3,    // 0.13699945762503957
                        -0x1.09492270b05cbp-5,   // -0.032383506074903666
                        0x1.e9412fa1f996fp-8,    // 0.0074654332438285195
                        -0x1.b8b64a95b62bap-10,  // -0.0016811831496196653
                        0x1.8457c688c910fp-12,   // 0.000370352624076157
                        -0x1.4f18f1726e2fp-14,   // -7.989345411986057e-05
                        0x1.1b95b2fc8f067p-16,   // 1.690296902466561e-05
                        -0x1.e22649d1f4059p-19,  // -3.59229418565175e-06
                        0x1.88b5c56cce424p-21);  // 7.314794579833193e-07
    } else {
        r = gk_m_horner(a - 5.25,
                        0x1.b096facf2462dp-4,    // 0.10561273548435031
                        -0x1.3e9827261b97ap-6,   // -0.019445455771739152
                        0x1.cdeaedaf8b163p-9,    // 0.0035241522926040976
                        -0x1.49bf69c6fc8eap-11,  // -0.0006289438396136747
                        0x1.d02469b60a307p-14,   // 0.00011066013289052707
                        -0x1.4b8b5069b1cb4p-16,  // -1.976157401520065e-05
                        0x1.c559ec89a2cd8p-19);  // 3.3777301425334852e-06
    }
    const double x2h = a * a;
    const double x2l = gk_m_fma(a, a, -x2h);
    int k;
    double hi, lo;
    gk_m_exp_kernel(-x2h, -x2l, k, hi, lo);
    const double sc = gk_m_pow2i_f64(k);
    const double eh = hi * sc;
    const double el = lo * sc;
    const double qh = eh * r;
    const double ql = gk_m_fma(eh, r, -qh) + el * r;
    const double yh = 1.0 - qh;
    const double yl = ((1.0 - yh) - qh) - ql;
    return gk_m_with_sign_of(yh + yl, x);
}

// ---------------------------------------------------------------------------------
// Composites (gpukit_core::numeric::{silu, softplus}): built from the functions above,
// in the same order.
// ---------------------------------------------------------------------------------

// silu(x) = x * sigmoid(x), one rounding; -inf gives -0 (the limit).
GK_MATH_FN float gk_silu(float x) {
    if (x == gk_m_f32(0xff800000u)) return -0.0f;
    return x * gk_sigmoid(x);
}

GK_MATH_FN double gk_silu(double x) {
    if (x == gk_m_f64(0xfff0000000000000ull)) return -0.0;
    return x * gk_sigmoid(x);
}

// softplus(x) = log(1 + exp(x)) without overflow: u = exp(-|x|), w = 1 + u,
// l = log1p(u) by Goldberg's method (u when w == 1, else log(w) * (u / (w - 1))),
// x + l for x > 0, else l. NaN passes through.
GK_MATH_FN float gk_softplus(float x) {
    if (gk_m_isnan(x)) return x;
    const float u = gk_exp(-gk_m_f32(gk_m_bits(x) & 0x7fffffffu));
    const float w = 1.0f + u;
    const float l = (w == 1.0f) ? u : gk_log(w) * (u / (w - 1.0f));
    return (x > 0.0f) ? x + l : l;
}

GK_MATH_FN double gk_softplus(double x) {
    if (gk_m_isnan(x)) return x;
    const double u = gk_exp(-gk_m_f64(gk_m_bits(x) & 0x7fffffffffffffffull));
    const double w = 1.0 + u;
    const double l = (w == 1.0) ? u : gk_log(w) * (u / (w - 1.0));
    return (x > 0.0) ? x + l : l;
}

// ---------------------------------------------------------------------------------
// pow (math/pow.rs): exp(y * log|x|) with log|x| as a pair (hi, lo) and the product
// formed exactly, then the exp kernel with a low part; C99 special values.
// ---------------------------------------------------------------------------------

#define GK_M_POW_C3_HI_F32 0x1.555556p-1f             // 0.6666667
#define GK_M_POW_C3_LO_F32 -0x1.555556p-26f           // -1.9868216e-8
#define GK_M_POW_C3_HI_F64 0x1.5555555555555p-1      // 0.6666666666666666
#define GK_M_POW_C3_LO_F64 0x1.5555555555555p-55     // 3.700743415417188e-17

// The exponent's class: 0 not an integer (or infinite), 1 odd integer, 2 even integer.
GK_MATH_FN int gk_m_pow_class(float y) {
    const unsigned bits = gk_m_bits(y) & 0x7fffffffu;
    const int e = (int)(bits >> 23) - 127;
    if (e >= 128) return 0;
    if (e < 0) return 0;
    if (e > 23) return 2;
    const int frac_bits = 23 - e;
    const unsigned mant = bits & 0x007fffffu;
    if (frac_bits > 0 && (mant & ((1u << frac_bits) - 1u)) != 0u) return 0;
    return (e == 0 || ((mant >> frac_bits) & 1u) == 1u) ? 1 : 2;
}
GK_MATH_FN int gk_m_pow_class(double y) {
    const unsigned long long bits = gk_m_bits(y) & 0x7fffffffffffffffull;
    const int e = (int)(bits >> 52) - 1023;
    if (e >= 1024) return 0;
    if (e < 0) return 0;
    if (e > 52) return 2;
    const int frac_bits = 52 - e;
    const unsigned long long mant = bits & 0x000fffffffffffffull;
    if (frac_bits > 0 && (mant & ((1ull << frac_bits) - 1ull)) != 0ull) return 0;
    return (e == 0 || ((mant >> frac_bits) & 1ull) == 1ull) ? 1 : 2;
}

// log(ax) for finite ax > 0 as a pair (lh, ll): x = 2^k m, s = f / (2 + f) as a pair,
// log m = 2s + s^3 (2/3 + z Q(z)), z = s^2, Q the Taylor series of 2 atanh.
GK_MATH_FN void gk_m_log_dw(float ax, float& lh, float& ll) {
    unsigned ix = gk_m_bits(ax);
    int kadj = 0;
    if (ix < 0x00800000u) {
        ix = gk_m_bits(ax * 33554432.0f);  // 2^25, exact
        kadj = -25;
    }
    ix += 0x3f800000u - GK_M_SQRT_HALF_BITS_F32;
    const int k = (int)(ix >> 23) - 127 + kadj;
    const float m = gk_m_f32((ix & 0x007fffffu) + GK_M_SQRT_HALF_BITS_F32);
    const float f = m - 1.0f;
    const float d = 2.0f + f;
    const float d_lo = f - (d - 2.0f);
    const float s = f / d;
    const float rem = gk_m_fma(-s, d_lo, gk_m_fma(-s, d, f));
    const float s_lo = rem / d;
    const float z = s * s;
    const float z_lo = gk_m_fma(s + s, s_lo, gk_m_fma(s, s, -z));
    const float s3 = s * z;
    const float s3_lo = gk_m_fma(s_lo, z, gk_m_fma(s, z_lo, gk_m_fma(s, z, -s3)));
    // POW_LOG_F32: 0.4, 0.2857143, 0.22222222, 0.18181819, 0.15384616, 0.13333334
    const float p = z * gk_m_horner(z, 0x1.99999ap-2f, 0x1.24924ap-2f, 0x1.c71c72p-3f,
                                    0x1.745d18p-3f, 0x1.3b13b2p-3f, 0x1.111112p-3f);
    const float b = GK_M_POW_C3_HI_F32 + p;
    const float b_lo = ((GK_M_POW_C3_HI_F32 - b) + p) + GK_M_POW_C3_LO_F32;
    const float t = s3 * b;
    const float t_lo = gk_m_fma(s3_lo, b, gk_m_fma(s3, b_lo, gk_m_fma(s3, b, -t)));
    const float s2 = s + s;
    const float h = s2 + t;
    const float h_lo = ((s2 - h) + t) + ((s_lo + s_lo) + t_lo);
    const float kf = (float)k;
    const float a = kf * GK_M_LN2_HI_F32;
    const float a_lo = gk_m_fma(kf, GK_M_LN2_LO_F32, gk_m_fma(kf, GK_M_LN2_HI_F32, -a));
    lh = a + h;
    ll = ((a - lh) + h) + (a_lo + h_lo);
}
GK_MATH_FN void gk_m_log_dw(double ax, double& lh, double& ll) {
    unsigned long long ix = gk_m_bits(ax);
    int kadj = 0;
    if (ix < 0x0010000000000000ull) {
        ix = gk_m_bits(ax * 18014398509481984.0);  // 2^54, exact
        kadj = -54;
    }
    ix += 0x3ff0000000000000ull - GK_M_SQRT_HALF_BITS_F64;
    const int k = (int)(ix >> 52) - 1023 + kadj;
    const double m = gk_m_f64((ix & 0x000fffffffffffffull) + GK_M_SQRT_HALF_BITS_F64);
    const double f = m - 1.0;
    const double d = 2.0 + f;
    const double d_lo = f - (d - 2.0);
    const double s = f / d;
    const double rem = gk_m_fma(-s, d_lo, gk_m_fma(-s, d, f));
    const double s_lo = rem / d;
    const double z = s * s;
    const double z_lo = gk_m_fma(s + s, s_lo, gk_m_fma(s, s, -z));
    const double s3 = s * z;
    const double s3_lo = gk_m_fma(s_lo, z, gk_m_fma(s, z_lo, gk_m_fma(s, z, -s3)));
    const double p = z * gk_m_horner(z,
                                     0x1.999999999999ap-2,   // 0.4
                                     0x1.2492492492492p-2,   // 0.2857142857142857
                                     0x1.c71c71c71c71cp-3,   // 0.2222222222222222
                                     0x1.745d1745d1746p-3,   // 0.18181818181818182
                                     0x1.3b13b13b13b14p-3,   // 0.15384615384615385
                                     0x1.1111111111111p-3,   // 0.13333333333333333
                                     0x1.e1e1e1e1e1e1ep-4,   // 0.11764705882352941
                                     0x1.af286bca1af28p-4,   // 0.10526315789473684
                                     0x1.8618618618618p-4,   // 0.09523809523809523
                                     0x1.642c8590b2164p-4,   // 0.08695652173913043
                                     0x1.47ae147ae147bp-4);  // 0.08
    const double b = GK_M_POW_C3_HI_F64 + p;
    const double b_lo = ((GK_M_POW_C3_HI_F64 - b) + p) + GK_M_POW_C3_LO_F64;
    const double t = s3 * b;
    const double t_lo = gk_m_fma(s3_lo, b, gk_m_fma(s3, b_lo, gk_m_fma(s3, b, -t)));
    const double s2 = s + s;
    const double h = s2 + t;
    const double h_lo = ((s2 - h) + t) + ((s_lo + s_lo) + t_lo);
    const double kf = (double)k;
    const double a = kf * GK_M_LN2_HI_F64;
    const double a_lo = gk_m_fma(kf, GK_M_LN2_LO_F64, gk_m_fma(kf, GK_M_LN2_HI_F64, -a));
    lh = a + h;
    ll = ((a - lh) + h) + (a_lo + h_lo);
}

GK_MATH_FN float gk_pow(float x, float y) {
    if (y == 0.0f || x == 1.0f) return 1.0f;
    if (gk_m_isnan(x) || gk_m_isnan(y)) return x + y;
    const float inf = gk_m_f32(0x7f800000u);
    const float ax = gk_m_f32(gk_m_bits(x) & 0x7fffffffu);
    const bool neg = (gk_m_bits(x) & 0x80000000u) != 0u;
    if (y == inf || y == -inf) {
        if (ax == 1.0f) return 1.0f;
        return ((ax < 1.0f) == (y < 0.0f)) ? inf : 0.0f;
    }
    const int yc = gk_m_pow_class(y);
    const bool odd = yc == 1;
    if (x == 0.0f || ax == inf) {
        const bool big = (x == 0.0f) == (y < 0.0f);
        const float mag = big ? inf : 0.0f;
        return (odd && neg) ? -mag : mag;
    }
    if (neg && yc == 0) return gk_m_f32(0x7fc00000u);
    float lh, ll;
    gk_m_log_dw(ax, lh, ll);
    const float th = y * lh;
    const float tl = gk_m_fma(y, ll, gk_m_fma(y, lh, -th));
    float r;
    if (th > 89.0f) {
        r = inf;
    } else if (th < -104.0f) {
        r = 0.0f;
    } else {
        int k;
        float hi, lo;
        gk_m_exp_kernel(th, tl, k, hi, lo);
        r = gk_m_scale(hi + lo, k);
    }
    return (odd && neg) ? -r : r;
}

GK_MATH_FN double gk_pow(double x, double y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (gk_m_isnan(x) || gk_m_isnan(y)) return x + y;
    const double inf = gk_m_f64(0x7ff0000000000000ull);
    const double ax = gk_m_f64(gk_m_bits(x) & 0x7fffffffffffffffull);
    const bool neg = (gk_m_bits(x) & 0x8000000000000000ull) != 0ull;
    if (y == inf || y == -inf) {
        if (ax == 1.0) return 1.0;
        return ((ax < 1.0) == (y < 0.0)) ? inf : 0.0;
    }
    const int yc = gk_m_pow_class(y);
    const bool odd = yc == 1;
    if (x == 0.0 || ax == inf) {
        const bool big = (x == 0.0) == (y < 0.0);
        const double mag = big ? inf : 0.0;
        return (odd && neg) ? -mag : mag;
    }
    if (neg && yc == 0) return gk_m_f64(0x7ff8000000000000ull);
    double lh, ll;
    gk_m_log_dw(ax, lh, ll);
    const double th = y * lh;
    const double tl = gk_m_fma(y, ll, gk_m_fma(y, lh, -th));
    double r;
    if (th > 710.0) {
        r = inf;
    } else if (th < -746.0) {
        r = 0.0;
    } else {
        int k;
        double hi, lo;
        gk_m_exp_kernel(th, tl, k, hi, lo);
        r = gk_m_scale(hi + lo, k);
    }
    return (odd && neg) ? -r : r;
}
