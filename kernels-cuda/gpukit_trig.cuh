// gpukit_trig.cuh: gpukit's portable sin and cos in CUDA (gk_sin, gk_cos; float and
// double overloads). A line-by-line mirror of crates/gpukit-core/src/math/trig.rs:
// 2/pi in 26-bit chunks, exact products of <= 27-bit pieces of |x| with the chunks,
// each split exactly into (round(p) mod 4, p - round(p)), the fractions summed in
// double-double (float) / triple-double (double), times pi/2 in double-double, Taylor
// kernels by Horner fmas. float computes in double and rounds once. Include it after
// gpukit_math.cuh (it uses that header's helpers), only where sin/cos are used (its
// table is a module-level array).
#pragma once

#if defined(GK_HOST_SHIM)
GK_MATH_FN double gk_m_rint(double x) { return std::nearbyint(x); }
#define GK_M_TABLE static const
#else
GK_MATH_FN double gk_m_rint(double x) { return rint(x); }
#define GK_M_TABLE static __device__ const
#endif

// TWO_OVER_PI_26: 2/pi = sum_i D[i] * 2^(-26(i+1)), integer-valued (exact).
GK_M_TABLE double gk_m_two_over_pi_26[48] = {
    42722829.0, 48555073.0, 21659401.0, 56087029.0, 13858563.0, 28715353.0, 38736100.0,
    4324945.0, 26128250.0, 62674459.0, 29957006.0, 37899730.0, 58726692.0, 49193117.0,
    6588223.0, 35515164.0, 46442140.0, 65964067.0, 24988590.0, 54822121.0, 41009306.0,
    54917092.0, 5137525.0, 37323603.0, 15192690.0, 4585659.0, 58608142.0, 52426903.0,
    67074070.0, 25231090.0, 63202006.0, 34237727.0, 28629499.0, 15891632.0, 40752081.0,
    37709470.0, 25143477.0, 55737260.0, 33225084.0, 24853767.0, 15195689.0, 19476134.0,
    50255852.0, 18845021.0, 2185228.0, 50622407.0, 47901436.0, 13614112.0,
};

#define GK_M_PIO2_HI 0x1.921fb54442d18p+0   // 1.5707963267948966
#define GK_M_PIO2_LO 0x1.1a62633145c07p-54  // 6.123233995736766e-17

// 2^(-26(j+1)) from the bits.
GK_MATH_FN double gk_m_chunk_scale(int j) {
    return gk_m_f64((unsigned long long)(1023 - 26 * (j + 1)) << 52);
}

// (round(p) mod 4, p - round(p)), both exact.
GK_MATH_FN void gk_m_split_term(double p, double& n4, double& g) {
    const double n = gk_m_rint(p);
    n4 = n - 4.0 * gk_m_rint(n * 0.25);
    g = p - n;
}

// (fh + fl) * pi/2 as a double-double (Fast2Sum at the end).
GK_MATH_FN void gk_m_times_pio2(double fh, double fl, double& yh, double& yl) {
    const double h = fh * GK_M_PIO2_HI;
    const double l = gk_m_fma(fh, GK_M_PIO2_HI, -h) + gk_m_fma(fh, GK_M_PIO2_LO, fl * GK_M_PIO2_HI);
    yh = h + l;
    yl = l - (yh - h);
}

// sin(yh + yl), |y| <= pi/4 (+ a hair).
GK_MATH_FN double gk_m_sin_kernel(double yh, double yl) {
    const double z = yh * yh;
    const double v = z * yh;
    const double s = gk_m_horner(z, -0x1.5555555555555p-3, 0x1.1111111111111p-7,
                                 -0x1.a01a01a01a01ap-13, 0x1.71de3a556c734p-19,
                                 -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33,
                                 -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49);
    const double t = gk_m_fma(v, s, gk_m_fma(-0.5 * z, yl, yl));
    return yh + t;
}

// cos(yh + yl), |y| <= pi/4 (+ a hair); z = yh^2 as the exact pair (z, zl).
GK_MATH_FN double gk_m_cos_kernel(double yh, double yl) {
    const double z = yh * yh;
    const double zl = gk_m_fma(yh, yh, -z);
    const double hz = 0.5 * z;
    const double w = 1.0 - hz;
    const double c = gk_m_horner(z, 0x1.5555555555555p-5, -0x1.6c16c16c16c17p-10,
                                 0x1.a01a01a01a01ap-16, -0x1.27e4fb7789f5cp-22,
                                 0x1.1eed8eff8d898p-29, -0x1.93974a8c07c9dp-37,
                                 0x1.ae7f3e733b81fp-45, -0x1.6827863b97d97p-53);
    const double tail = gk_m_fma(z * z, c, gk_m_fma(-0.5, zl, -(yh * yl)));
    return w + (((1.0 - w) - hz) + tail);
}

// n mod 4 in {0, 1, 2, 3} for a small integer-valued n.
GK_MATH_FN double gk_m_quadrant(double n) {
    const double q = n - 4.0 * gk_m_rint(n * 0.25);
    return (q < 0.0) ? q + 4.0 : q;
}

// The float reduction of a = |x| (exact double): nine chunks, double-double sum.
GK_MATH_FN void gk_m_reduce_f32(double a, double& yh, double& yl, double& q) {
    double n = 0.0, h = 0.0, l = 0.0;
    for (int j = 0; j < 9; ++j) {
        const double p = a * (gk_m_two_over_pi_26[j] * gk_m_chunk_scale(j));
        double nj, g;
        gk_m_split_term(p, nj, g);
        n = n + nj;
        double s, e;
        gk_m_two_sum(h, g, s, e);
        h = s;
        l = l + e;
    }
    const double k = gk_m_rint(h);
    h = h - k;
    n = n + k;
    double fh, fl;
    gk_m_two_sum(h, l, fh, fl);
    gk_m_times_pio2(fh, fl, yh, yl);
    q = gk_m_quadrant(n);
}

GK_MATH_FN float gk_sin(float x) {
    if (gk_m_isnan(x)) return x;
    const float ax = gk_m_f32(gk_m_bits(x) & 0x7fffffffu);
    if (ax == gk_m_f32(0x7f800000u)) return gk_m_f32(0x7fc00000u);
    double yh, yl, q;
    gk_m_reduce_f32((double)ax, yh, yl, q);
    const double s = gk_m_sin_kernel(yh, yl);
    const double c = gk_m_cos_kernel(yh, yl);
    double r = (q == 1.0 || q == 3.0) ? c : s;
    r = (q >= 2.0) ? -r : r;
#if defined(GK_HOST_SHIM)
    const float rf = (float)r;
#else
    const float rf = __double2float_rn(r);
#endif
    return gk_m_f32(gk_m_bits(rf) ^ (gk_m_bits(x) & 0x80000000u));
}

GK_MATH_FN float gk_cos(float x) {
    if (gk_m_isnan(x)) return x;
    const float ax = gk_m_f32(gk_m_bits(x) & 0x7fffffffu);
    if (ax == gk_m_f32(0x7f800000u)) return gk_m_f32(0x7fc00000u);
    double yh, yl, q;
    gk_m_reduce_f32((double)ax, yh, yl, q);
    const double s = gk_m_sin_kernel(yh, yl);
    const double c = gk_m_cos_kernel(yh, yl);
    double r = (q == 1.0 || q == 3.0) ? s : c;
    r = (q == 1.0 || q == 2.0) ? -r : r;
#if defined(GK_HOST_SHIM)
    return (float)r;
#else
    return __double2float_rn(r);
#endif
}

// The double reduction of a = |x|, pi/4 < a < 2^1024: chunks from i0 on (a scaled by
// 2^(-26 i0)), a cut into a 26-bit top piece and the exact rest, ten chunks, a
// triple-double sum with the integer part removed after every term.
GK_MATH_FN void gk_m_reduce_f64(double a, double& yh, double& yl, double& q) {
    const long long e = (long long)(gk_m_bits(a) >> 52) - 1023;
    const int i0 = (e >= 54) ? (int)((e - 54) / 26) : 0;
    const double a_s = a * gk_m_f64((unsigned long long)(1023 - 26 * i0) << 52);
    const double a1 = gk_m_f64(gk_m_bits(a_s) & ~0x7ffffffull);
    const double a2 = a_s - a1;
    double n = 0.0, h = 0.0, m = 0.0, l = 0.0;
    for (int j = 0; j < 10; ++j) {
        const double c = gk_m_two_over_pi_26[i0 + j] * gk_m_chunk_scale(j);
        for (int pc = 0; pc < 2; ++pc) {
            const double piece = (pc == 0) ? a1 : a2;
            double nj, g;
            gk_m_split_term(piece * c, nj, g);
            n = n + nj;
            double s, e1, t, e2;
            gk_m_two_sum(h, g, s, e1);
            gk_m_two_sum(m, e1, t, e2);
            h = s;
            m = t;
            l = l + e2;
            const double k = gk_m_rint(h);
            h = h - k;
            n = n + k;
        }
    }
    double s1, s2, fh, e3;
    gk_m_two_sum(m, l, s1, s2);
    gk_m_two_sum(h, s1, fh, e3);
    gk_m_times_pio2(fh, e3 + s2, yh, yl);
    q = gk_m_quadrant(n);
}

GK_MATH_FN double gk_sin(double x) {
    if (gk_m_isnan(x)) return x;
    const double a = gk_m_f64(gk_m_bits(x) & 0x7fffffffffffffffull);
    if (a == gk_m_f64(0x7ff0000000000000ull)) return gk_m_f64(0x7ff8000000000000ull);
    if (a < 0x1p-27) return x;
    double yh = a, yl = 0.0, q = 0.0;
    if (!(a <= 0.785)) gk_m_reduce_f64(a, yh, yl, q);
    double r = (q == 1.0 || q == 3.0) ? gk_m_cos_kernel(yh, yl) : gk_m_sin_kernel(yh, yl);
    r = (q >= 2.0) ? -r : r;
    return gk_m_f64(gk_m_bits(r) ^ (gk_m_bits(x) & 0x8000000000000000ull));
}

GK_MATH_FN double gk_cos(double x) {
    if (gk_m_isnan(x)) return x;
    const double a = gk_m_f64(gk_m_bits(x) & 0x7fffffffffffffffull);
    if (a == gk_m_f64(0x7ff0000000000000ull)) return gk_m_f64(0x7ff8000000000000ull);
    if (a < 0x1p-27) return 1.0;
    double yh = a, yl = 0.0, q = 0.0;
    if (!(a <= 0.785)) gk_m_reduce_f64(a, yh, yl, q);
    double r = (q == 1.0 || q == 3.0) ? gk_m_sin_kernel(yh, yl) : gk_m_cos_kernel(yh, yl);
    return (q == 1.0 || q == 2.0) ? -r : r;
}
