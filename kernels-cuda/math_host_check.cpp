// math_host_check.cpp: runs gpukit_math.cuh on the host, for the bit-exactness check
// against gpukit_core::math (crates/gpukit-cuda/tests/math_host.rs builds and runs it).
//
//   g++ -std=c++17 -O2 -ffp-contract=off -Ikernels-cuda kernels-cuda/math_host_check.cpp
//       -o math_host_check
//   ./math_host_check > out.bin
//
// No fast math and no contraction: every operation of the header is then the one IEEE
// operation it names, exactly as on the device (--fmad=false) and in Rust.
//
// Output (stdout, binary, little-endian):
//   "GKM1"
//   u32 n32, then n32 records of 10 x u32: x, exp, log, tanh, sigmoid, erf, silu,
//                                          softplus, sin, cos   (f32 bits)
//   u32 n64, then n64 records of 10 x u64: the same in f64 bits
//   u32 p32, then p32 records of 3 x u32: x, y, pow(x, y)   (f32 bits)
//   u32 p64, then p64 records of 3 x u64: the same in f64 bits
// pow's pairs take every x above with an exponent that cycles through: a fixed list
// (specials, small integers odd and even, halves, huge), a uniform value in [-30, 30],
// a raw bit pattern, and one that puts x^y anywhere in the finite range.
// The inputs are fixed: every special value, the values around every branch threshold
// of the header (and their negations), then pseudo-random values (splitmix64 with a
// fixed seed): raw bit patterns, and uniform values over the ranges where the
// functions do their work.
#define GK_HOST_SHIM 1
#include "gpukit_math.cuh"
#include "gpukit_trig.cuh"

#include <cstdint>
#include <cstdio>
#include <vector>

static uint64_t g_state = 0x9e3779b97f4a7c15ull;

static uint64_t splitmix64() {
    uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// A value in [lo, hi): 24 (f32) or 53 (f64) random bits scaled; exact arithmetic.
static float uniform_f32(float lo, float hi) {
    const float u = (float)(splitmix64() >> 40) * 0x1p-24f;
    return lo + (hi - lo) * u;
}
static double uniform_f64(double lo, double hi) {
    const double u = (double)(splitmix64() >> 11) * 0x1p-53;
    return lo + (hi - lo) * u;
}

// Adds bits b and its neighbours b-4..b+4 (same sign), each with both signs.
template <class U> static void around(std::vector<U>& v, U b, U sign) {
    const U mag = b & (U)~sign;
    for (int d = -4; d <= 4; ++d) {
        if (d < 0 && mag < (U)(-d)) continue;
        const U m = (U)(mag + (U)(long long)d);
        v.push_back(m);
        v.push_back((U)(m | sign));
    }
}

static std::vector<uint32_t> inputs_f32() {
    std::vector<uint32_t> v;
    const uint32_t S = 0x80000000u;
    // Specials: zeros, infinities, NaNs (quiet, signalling, payloads, negative).
    const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu,
                                 0xffffffffu, 0x7fffffffu, 0x7fc12345u};
    for (uint32_t s : specials) v.push_back(s);
    // Subnormals, normal limits, one.
    const uint32_t edges[] = {0x00000001u, 0x00000002u, 0x00000100u, 0x00400000u,
                              0x007fffffu, 0x00800000u, 0x00800001u, 0x7f7fffffu,
                              0x3f800000u, 0x3f000000u, 0x40000000u, 0x0c000000u,
                              0x33800000u, 0x39800000u};
    for (uint32_t b : edges) around(v, b, S);
    // Branch thresholds of the header.
    const float thr[] = {
        // exp: overflow / underflow cut-offs, scale branches (k = 128, k = -126, -127, -152)
        0x1.62e42ep+6f, 0x1.9fe368p+6f, 88.376f, 88.0f, 87.68f, 87.0f, 88.03f, 104.0f,
        // log: sqrt(1/2) split point, powers of two and near one
        0x1.6a09e6p-1f, 0x1.6a09e6p+0f, 1.0f, 2.0f, 0.5f, 0x1p-126f, 0x1p-100f, 1e30f,
        // tanh
        0.5625f, 9.5f, 9.0f, 0.001f,
        // sigmoid
        18.0f, 24.0f, 17.0f, 23.0f, 16.0f, 0.5f, 103.0f, 104.5f,
        // erf pieces
        0.875f, 1.1875f, 1.5f, 2.0f, 2.5f, 3.25f, 4.0f, 3.9f, 10.0f,
        // magic-number rounding ties of k = round(x / ln2)
        0.34657359f, 1.03972077f, 44.014845f, 0.6931472f,
        // softplus: 1 + exp(-|x|) rounds to 1 from 24 ln 2 on
        16.635532f};
    for (float t : thr) around(v, (uint32_t)gk_m_bits(t), S);
    // Pseudo-random: raw bit patterns, then ranges.
    const int n_bits = 1 << 18;
    for (int i = 0; i < n_bits; ++i) v.push_back((uint32_t)(splitmix64() >> 32));
    const float ranges[][2] = {{-105.0f, 90.0f}, {-26.0f, 20.0f}, {-10.0f, 10.0f},
                               {-4.5f, 4.5f},     {-1.0f, 1.0f},   {0.0f, 4.0f}};
    const int per_range = ((1 << 20) - n_bits) / 6;
    for (const auto& r : ranges)
        for (int i = 0; i < per_range; ++i) v.push_back(gk_m_bits(uniform_f32(r[0], r[1])));
    return v;
}

static std::vector<uint64_t> inputs_f64() {
    std::vector<uint64_t> v;
    const uint64_t S = 0x8000000000000000ull;
    const uint64_t specials[] = {0x0000000000000000ull, S, 0x7ff0000000000000ull,
                                 0xfff0000000000000ull, 0x7ff8000000000000ull,
                                 0xfff8000000000000ull, 0x7ff0000000000001ull,
                                 0x7ff7ffffffffffffull, 0xffffffffffffffffull,
                                 0x7ff8000000012345ull};
    for (uint64_t s : specials) v.push_back(s);
    const uint64_t edges[] = {0x0000000000000001ull, 0x0000000000000002ull,
                              0x0000000000010000ull, 0x0008000000000000ull,
                              0x000fffffffffffffull, 0x0010000000000000ull,
                              0x0010000000000001ull, 0x7fefffffffffffffull,
                              0x3ff0000000000000ull, 0x3fe0000000000000ull,
                              0x4000000000000000ull, 0x3ca0000000000000ull,
                              0x3e40000000000000ull, 0x0180000000000000ull};
    for (uint64_t b : edges) around(v, b, S);
    const double thr[] = {
        // exp: cut-offs, scale branches (k = 1024, -1022, -1023, -1077)
        0x1.62e42fefa39efp+9, 0x1.74910d52d3051p+9, 709.436, 709.0, 708.4, 708.0, 744.4,
        745.0, 746.0,
        // log
        0x1.6a09e667f3bcdp-1, 0x1.6a09e667f3bcdp+0, 1.0, 2.0, 0.5, 0x1p-1022, 0x1p-1000,
        1e300,
        // tanh
        0.5625, 22.0, 21.0, 0.001,
        // sigmoid
        40.0, 45.0, 39.0, 44.0, 0.5, 745.5,
        // erf pieces
        0.875, 1.1875, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.25, 6.0, 5.9, 27.0,
        // ties of k = round(x / ln2)
        0.34657359027997264, 1.0397207708399179, 0.6931471805599453,
        // softplus: 1 + exp(-|x|) rounds to 1 from 53 ln 2 on
        36.7368005696771};
    for (double t : thr) around(v, (uint64_t)gk_m_bits(t), S);
    const int n_bits = 1 << 14;
    for (int i = 0; i < n_bits; ++i) v.push_back(splitmix64());
    const double ranges[][2] = {{-746.0, 710.0}, {-46.0, 41.0}, {-23.0, 23.0},
                                {-6.5, 6.5},     {-1.0, 1.0},   {0.0, 4.0}};
    const int per_range = ((1 << 16) - n_bits) / 6;
    for (const auto& r : ranges)
        for (int i = 0; i < per_range; ++i) v.push_back((uint64_t)gk_m_bits(uniform_f64(r[0], r[1])));
    return v;
}

// The exponent paired with the i-th x (see the header comment).
template <class R> static R pow_exponent(size_t i, R x, R lo, R hi, R emin, R emax,
                                         R (*bits)(), R (*uni)(R, R)) {
    const R fixed[] = {(R)0,  -(R)0,  (R)1,   (R)-1,  (R)2,    (R)-2,     (R)3,
                       (R)-3, (R)0.5, (R)-0.5, (R)7,  (R)1e30, (R)-1e30, (R)1e-30,
                       (R)0.0, (R)1.5, (R)-1.5, (R)4,  (R)-7,   (R)1e10};
    const size_t nf = sizeof fixed / sizeof fixed[0];
    switch (i % 5) {
        case 0: return fixed[(i / 5) % nf];
        case 1: return uni(lo, hi);
        case 2: return bits();
        default: {
            const R l = std::log2(x < (R)0 ? -x : x);
            if (!(l == l) || l == (R)0 || l > (R)1e30 || l < (R)-1e30) return (R)2;
            const R y = uni(emin, emax) / l;
            return (i % 5 == 4) ? std::nearbyint(y) : y;
        }
    }
}
static float bits_f32() { return gk_m_f32((uint32_t)(splitmix64() >> 32)); }
static double bits_f64() { return gk_m_f64(splitmix64()); }

template <class U> static void put(std::vector<unsigned char>& out, U x) {
    for (unsigned i = 0; i < sizeof(U); ++i) out.push_back((unsigned char)(x >> (8 * i)));
}

int main() {
    std::vector<unsigned char> out;
    out.push_back('G');
    out.push_back('K');
    out.push_back('M');
    out.push_back('1');
    const std::vector<uint32_t> a = inputs_f32();
    put(out, (uint32_t)a.size());
    for (uint32_t b : a) {
        const float x = gk_m_f32(b);
        put(out, b);
        put(out, gk_m_bits(gk_exp(x)));
        put(out, gk_m_bits(gk_log(x)));
        put(out, gk_m_bits(gk_tanh(x)));
        put(out, gk_m_bits(gk_sigmoid(x)));
        put(out, gk_m_bits(gk_erf(x)));
        put(out, gk_m_bits(gk_silu(x)));
        put(out, gk_m_bits(gk_softplus(x)));
        put(out, gk_m_bits(gk_sin(x)));
        put(out, gk_m_bits(gk_cos(x)));
    }
    const std::vector<uint64_t> d = inputs_f64();
    put(out, (uint32_t)d.size());
    for (uint64_t b : d) {
        const double x = gk_m_f64(b);
        put(out, (uint64_t)b);
        put(out, (uint64_t)gk_m_bits(gk_exp(x)));
        put(out, (uint64_t)gk_m_bits(gk_log(x)));
        put(out, (uint64_t)gk_m_bits(gk_tanh(x)));
        put(out, (uint64_t)gk_m_bits(gk_sigmoid(x)));
        put(out, (uint64_t)gk_m_bits(gk_erf(x)));
        put(out, (uint64_t)gk_m_bits(gk_silu(x)));
        put(out, (uint64_t)gk_m_bits(gk_softplus(x)));
        put(out, (uint64_t)gk_m_bits(gk_sin(x)));
        put(out, (uint64_t)gk_m_bits(gk_cos(x)));
    }
    put(out, (uint32_t)a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        const float x = gk_m_f32(a[i]);
        const float y = pow_exponent<float>(i, x, -30.0f, 30.0f, -150.0f, 129.0f, bits_f32,
                                            uniform_f32);
        put(out, a[i]);
        put(out, gk_m_bits(y));
        put(out, gk_m_bits(gk_pow(x, y)));
    }
    put(out, (uint32_t)d.size());
    for (size_t i = 0; i < d.size(); ++i) {
        const double x = gk_m_f64(d[i]);
        const double y = pow_exponent<double>(i, x, -30.0, 30.0, -1076.0, 1025.0, bits_f64,
                                              uniform_f64);
        put(out, (uint64_t)d[i]);
        put(out, (uint64_t)gk_m_bits(y));
        put(out, (uint64_t)gk_m_bits(gk_pow(x, y)));
    }
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) return 1;
    return std::fflush(stdout) == 0 ? 0 : 1;
}
