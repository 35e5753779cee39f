//! The packed GEMM family (bmm, gemm, conv2d, conv_transpose2d) on ragged shapes, bit
//! for bit against the contract's scalar chains written out here, at every SIMD level
//! this machine has: sizes 0, 1, primes, just past the register tile (MR/NR), the
//! k-block (KC, so chains cross k-blocks, also for f16/bf16 whose partials must stay
//! f32), the row block (MC) and the column block (NC); special values (NaN, ±inf, -0.0,
//! subnormals) so a skipped `0·inf` or a reordered chain would show.

use std::sync::Mutex;

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FloatElement, Real, same_bits};
use gpukit_core::{DevArg, Element, Kit, LaunchConfig};
use gpukit_cpu::CpuDevice;
use gpukit_cpu::builtins::{SimdLevel, detected_simd_level, set_simd_limit};

static LEVEL_LOCK: Mutex<()> = Mutex::new(());

fn kit() -> Kit {
    Kit::from_device(Box::new(CpuDevice::new()))
}

fn at_each_level(mut f: impl FnMut(SimdLevel)) {
    let _g = LEVEL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for l in [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512] {
        if l <= detected_simd_level() {
            set_simd_limit(Some(l));
            f(l);
        }
    }
    set_simd_limit(None);
}

fn launch(kit: &Kit, name: &str, args: &[DevArg<'_>]) {
    kit.launch_builtin(name, LaunchConfig::for_elements(1, 1).unwrap(), args)
        .unwrap();
}

fn i(v: usize) -> DevArg<'static> {
    DevArg::I64(v as i64)
}

/// xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A value in [-2, 2), or a special value at rate `special` per 1000.
    fn val(&mut self, special: u64) -> f64 {
        if self.next() % 1000 < special {
            match self.next() % 7 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => f64::NEG_INFINITY,
                3 => 0.0,
                4 => -0.0,
                5 => 1e-40,
                _ => 1e30,
            }
        } else {
            ((self.next() >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
        }
    }
}

trait F: FloatElement + Element {}
impl<T: FloatElement + Element> F for T {}

fn vals<T: F>(r: &mut Rng, n: usize, special: u64) -> Vec<T> {
    (0..n)
        .map(|_| T::from_f64(r.val(special)).unwrap())
        .collect()
}

#[track_caller]
fn assert_same<T: Element>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (idx, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            same_bits(*g, *w),
            "{what}: element {idx}: got {g:?}, want {w:?}"
        );
    }
}

/// `(m, k, n)` shapes: empty, tiny, primes, tile and block edges, k past KC (256 to
/// 1024 depending on the level), rows past MC (up to 336), columns past NC.
const SHAPES: &[(usize, usize, usize)] = &[
    (0, 5, 3),
    (3, 0, 4),
    (4, 5, 0),
    (1, 1, 1),
    (1, 37, 1),
    (2, 3, 5),
    (7, 13, 17),
    (13, 17, 31),
    (14, 33, 32),
    (15, 31, 33),
    (8, 49, 48),
    (9, 50, 49),
    (6, 20, 16),
    (7, 21, 17),
    (29, 257, 47),
    (5, 1031, 11),
    (43, 600, 97),
    (337, 19, 23),
    (97, 64, 515),
    (3, 4100, 6),
    (2, 1100, 1950),
];

fn bmm_ref<T: F>(a: &[T], b: &[T], (batch, m, k, n): (usize, usize, usize, usize)) -> Vec<T> {
    let mut c = Vec::with_capacity(batch * m * n);
    for bi in 0..batch {
        for r in 0..m {
            for j in 0..n {
                let mut acc = T::Real::ZERO;
                for t in 0..k {
                    let x = a[bi * m * k + r * k + t].load();
                    acc = x.fma(b[bi * k * n + t * n + j].load(), acc);
                }
                c.push(T::store(acc));
            }
        }
    }
    c
}

fn check_bmm<T: F>(special: u64) {
    let kit = kit();
    let mut r = Rng(99);
    let mut cases: Vec<(usize, usize, usize, usize)> =
        SHAPES.iter().map(|&(m, k, n)| (1, m, k, n)).collect();
    cases.extend([
        (3, 5, 9, 11),
        (12, 33, 20, 40),
        (2, 130, 300, 70),
        (5, 1, 1, 1),
    ]);
    let data: Vec<(Vec<T>, Vec<T>, Vec<T>)> = cases
        .iter()
        .map(|&(bt, m, k, n)| {
            let a = vals::<T>(&mut r, bt * m * k, special);
            let b = vals::<T>(&mut r, bt * k * n, special);
            let want = bmm_ref(&a, &b, (bt, m, k, n));
            (a, b, want)
        })
        .collect();
    at_each_level(|lvl| {
        for (&(bt, m, k, n), (a, b, want)) in cases.iter().zip(&data) {
            let (ab, bb) = (kit.upload(a).unwrap(), kit.upload(b).unwrap());
            let c = kit
                .upload(&vec![T::from_f64(7.0).unwrap(); bt * m * n])
                .unwrap();
            let nm = gpukit_core::abi::kernel_name("bmm", T::DTYPE);
            let args = [
                (&c).into(),
                (&ab).into(),
                (&bb).into(),
                i(bt),
                i(m),
                i(k),
                i(n),
                i(m * k),
                i(k * n),
            ];
            launch(&kit, &nm, &args);
            let what = format!("{nm} {bt}x{m}x{k}x{n} {lvl:?}");
            assert_same(&c.download::<T>().unwrap(), want, &what);
        }
    });
}

#[test]
fn bmm_ragged_f32() {
    check_bmm::<f32>(10);
}

#[test]
fn bmm_ragged_f64() {
    check_bmm::<f64>(10);
}

#[test]
fn bmm_ragged_f16() {
    check_bmm::<f16>(0);
}

#[test]
fn bmm_ragged_bf16() {
    check_bmm::<bf16>(5);
}

/// The gemm contract: chain, then `alpha*acc`, `fma(beta, c, v)`, `+ bias`, store.
#[allow(clippy::too_many_arguments)]
fn gemm_ref<T: F>(
    a: &[T],
    b: &[T],
    c: Option<&[T]>,
    bias: Option<&[T]>,
    (m, k, n): (usize, usize, usize),
    trans: bool,
    alpha: f64,
    beta: f64,
) -> Vec<T> {
    let alpha = T::Real::from_f64(alpha);
    let beta = T::Real::from_f64(beta);
    let mut y = Vec::with_capacity(m * n);
    for r in 0..m {
        for j in 0..n {
            let mut acc = T::Real::ZERO;
            for t in 0..k {
                let bv = if trans { b[j * k + t] } else { b[t * n + j] };
                acc = a[r * k + t].load().fma(bv.load(), acc);
            }
            let mut v = alpha * acc;
            if let Some(c) = c {
                v = beta.fma(c[r * n + j].load(), v);
            }
            if let Some(bias) = bias {
                v = v + bias[j].load();
            }
            y.push(T::store(v));
        }
    }
    y
}

fn check_gemm<T: F>(special: u64) {
    let kit = kit();
    let mut r = Rng(7);
    let nm = gpukit_core::abi::kernel_name("gemm", T::DTYPE);
    let mut variant = 0usize;
    for &(m, k, n) in SHAPES {
        variant += 1;
        let trans = variant.is_multiple_of(2);
        let has_c = !variant.is_multiple_of(3);
        let has_bias = variant % 4 != 1;
        let (alpha, beta) = if variant.is_multiple_of(5) {
            (1.0, 1.0)
        } else {
            (0.75, -1.25)
        };
        // A stored [k, m] (trans_a) on every third shape; C broadcast from a column
        // [m, 1] (strides 1, 0) on every seventh: the expected values are those of the
        // plain layout (the same chain), written out here.
        let trans_a = variant % 3 == 1;
        let c_col = variant.is_multiple_of(7);
        let a = vals::<T>(&mut r, m * k, special);
        let b = vals::<T>(&mut r, k * n, special);
        let mut c = vals::<T>(&mut r, m * n, special);
        let ccol = vals::<T>(&mut r, m, special);
        if c_col {
            for (i, v) in c.iter_mut().enumerate() {
                *v = ccol[i / n.max(1)];
            }
        }
        let at: Vec<T> = if trans_a {
            (0..m * k).map(|i| a[(i % m) * k + i / m]).collect()
        } else {
            a.clone()
        };
        let bias = vals::<T>(&mut r, n, special);
        let want = gemm_ref(
            &a,
            &b,
            has_c.then_some(&c[..]),
            has_bias.then_some(&bias[..]),
            (m, k, n),
            trans,
            alpha,
            beta,
        );
        at_each_level(|lvl| {
            let (ab, bb) = (kit.upload(&at).unwrap(), kit.upload(&b).unwrap());
            let cb = kit.upload(if c_col { &ccol } else { &c }).unwrap();
            let biasb = kit.upload(&bias).unwrap();
            let (c_rs, c_cs) = if c_col { (1, 0) } else { (n, 1) };
            let y = kit.upload(&vec![T::from_f64(7.0).unwrap(); m * n]).unwrap();
            let args = [
                (&y).into(),
                (&ab).into(),
                (&bb).into(),
                (&cb).into(),
                (&biasb).into(),
                i(m),
                i(k),
                i(n),
                i(trans as usize),
                i(has_c as usize),
                i(has_bias as usize),
                DevArg::F64(alpha),
                DevArg::F64(beta),
                i(trans_a as usize),
                i(c_rs),
                i(c_cs),
            ];
            launch(&kit, &nm, &args);
            let what = format!(
                "{nm} {m}x{k}x{n} ta{trans_a} t{trans} c{has_c} col{c_col} b{has_bias} {lvl:?}"
            );
            assert_same(&y.download::<T>().unwrap(), &want, &what);
        });
    }
}

#[test]
fn gemm_ragged_f32() {
    check_gemm::<f32>(10);
}

#[test]
fn gemm_ragged_f64() {
    check_gemm::<f64>(10);
}

#[test]
fn gemm_ragged_f16() {
    check_gemm::<f16>(0);
}

#[test]
fn gemm_ragged_bf16() {
    check_gemm::<bf16>(5);
}

/// conv2d geometry: n, c_in, h, w, c_out, kh, kw, pad_t, pad_l, pad_b, pad_r,
/// stride_h, stride_w, dil_h, dil_w, groups.
type Geo = [usize; 16];

fn out_len(len: usize, pa: usize, pb: usize, k: usize, s: usize, d: usize) -> usize {
    (len + pa + pb - (d * (k - 1) + 1)) / s + 1
}

fn conv_ref<T: F>(x: &[T], w: &[T], bias: Option<&[T]>, g: &Geo) -> Vec<T> {
    let [
        n,
        c_in,
        h,
        wd,
        c_out,
        kh,
        kw,
        pt,
        pl,
        pb,
        pr,
        sh,
        sw,
        dh,
        dw,
        groups,
    ] = *g;
    let (oh, ow) = (
        out_len(h, pt, pb, kh, sh, dh),
        out_len(wd, pl, pr, kw, sw, dw),
    );
    let (cg, og) = (c_in / groups, c_out / groups);
    let mut out = Vec::new();
    for b in 0..n {
        for oc in 0..c_out {
            let gi = oc / og;
            for oy in 0..oh {
                for ox in 0..ow {
                    let mut acc = T::Real::ZERO;
                    for icl in 0..cg {
                        for ki in 0..kh {
                            for kj in 0..kw {
                                let iy = (oy * sh + ki * dh) as i64 - pt as i64;
                                let ix = (ox * sw + kj * dw) as i64 - pl as i64;
                                let xv = if iy >= 0
                                    && ix >= 0
                                    && (iy as usize) < h
                                    && (ix as usize) < wd
                                {
                                    let ic = gi * cg + icl;
                                    x[((b * c_in + ic) * h + iy as usize) * wd + ix as usize].load()
                                } else {
                                    T::Real::ZERO
                                };
                                let wv = w[((oc * cg + icl) * kh + ki) * kw + kj].load();
                                acc = xv.fma(wv, acc);
                            }
                        }
                    }
                    if let Some(bias) = bias {
                        acc = acc + bias[oc].load();
                    }
                    out.push(T::store(acc));
                }
            }
        }
    }
    out
}

const GEOS: &[Geo] = &[
    [1, 3, 7, 9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    [2, 4, 10, 11, 6, 3, 2, 0, 1, 2, 0, 2, 1, 1, 2, 2],
    [1, 8, 13, 13, 24, 3, 3, 2, 2, 2, 2, 1, 1, 2, 2, 4],
    [1, 6, 9, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6],
    [1, 5, 5, 5, 15, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1],
    [1, 40, 12, 12, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    [1, 16, 23, 29, 33, 5, 5, 2, 2, 2, 2, 2, 3, 1, 1, 1],
    [1, 2, 3, 3, 9, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1],
    // Stride 1 with two images and two groups (four products), a dilated kernel
    // column, uneven padding and chains over several k-blocks: the taps read in place
    // on the padded copy, at each product's own offset.
    [2, 48, 9, 30, 10, 3, 2, 1, 0, 2, 1, 1, 1, 1, 2, 2],
    // Fourteen output channels: the 14-row AVX-512 tiles read the taps in place.
    [1, 20, 11, 13, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1],
];

fn check_conv<T: F>(special: u64) {
    let kit = kit();
    let mut r = Rng(11);
    let nm = gpukit_core::abi::kernel_name("conv2d", T::DTYPE);
    for (gi, g) in GEOS.iter().enumerate() {
        let [
            n,
            c_in,
            h,
            wd,
            c_out,
            kh,
            kw,
            pt,
            pl,
            pb,
            pr,
            sh,
            sw,
            dh,
            dw,
            groups,
        ] = *g;
        let (oh, ow) = (
            out_len(h, pt, pb, kh, sh, dh),
            out_len(wd, pl, pr, kw, sw, dw),
        );
        let x = vals::<T>(&mut r, n * c_in * h * wd, special);
        let w = vals::<T>(&mut r, c_out * c_in / groups * kh * kw, special);
        let bias = vals::<T>(&mut r, c_out, special);
        let has_bias = gi.is_multiple_of(2);
        let want = conv_ref(&x, &w, has_bias.then_some(&bias[..]), g);
        at_each_level(|lvl| {
            let (xb, wb, bb) = (
                kit.upload(&x).unwrap(),
                kit.upload(&w).unwrap(),
                kit.upload(&bias).unwrap(),
            );
            let y = kit
                .upload(&vec![T::from_f64(7.0).unwrap(); n * c_out * oh * ow])
                .unwrap();
            let args = [
                (&y).into(),
                (&xb).into(),
                (&wb).into(),
                (&bb).into(),
                i(n),
                i(c_in),
                i(h),
                i(wd),
                i(c_out),
                i(kh),
                i(kw),
                i(oh),
                i(ow),
                i(pt),
                i(pl),
                i(sh),
                i(sw),
                i(dh),
                i(dw),
                i(groups),
                i(has_bias as usize),
            ];
            launch(&kit, &nm, &args);
            let what = format!("{nm} {g:?} {lvl:?}");
            assert_same(&y.download::<T>().unwrap(), &want, &what);
        });
    }
}

#[test]
fn conv2d_ragged_f32() {
    check_conv::<f32>(10);
}

#[test]
fn conv2d_ragged_f64() {
    check_conv::<f64>(10);
}

#[test]
fn conv2d_ragged_f16() {
    check_conv::<f16>(0);
}

#[test]
fn conv2d_ragged_bf16() {
    check_conv::<bf16>(5);
}
