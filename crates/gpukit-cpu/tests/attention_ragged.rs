//! The attention kernels (fused, all layouts and masks; the composed scores) against the
//! reference oracle bit for bit (NaN equals any NaN), at every SIMD level this machine
//! has, over ragged sizes (rows and keys not multiples of the tile, the register blocks
//! or the vector width; head widths 1, 3, 64, 80, 256; no keys), masks with dropped
//! keys and fully masked rows, and NaN / ±inf / subnormal inputs.

use std::sync::Mutex;

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FloatElement, same_bits};
use gpukit_core::{Buf, DevArg, Element, Kit, LaunchConfig};
use gpukit_cpu::CpuDevice;
use gpukit_cpu::builtins::{SimdLevel, detected_simd_level, set_simd_limit};

/// Serialises tests so each one's SIMD level is the one it set.
static LEVEL_LOCK: Mutex<()> = Mutex::new(());

/// Runs `f` once per SIMD level this machine supports.
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

/// xorshift64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [-a, a).
    fn unit(&mut self, a: f64) -> f64 {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * a
    }
}

/// How special the values of a tensor are.
#[derive(Clone, Copy, Debug)]
enum Vals {
    /// Finite values of moderate size.
    Plain,
    /// Large values (scores far apart: weights underflow) and a few subnormals.
    Wide,
    /// A sprinkle of NaN, +inf, -inf, -0.0.
    Special,
}

fn values<T: FloatElement>(rng: &mut Rng, len: usize, vals: Vals) -> Vec<T> {
    (0..len)
        .map(|_| {
            let x = match vals {
                Vals::Plain => rng.unit(2.0),
                Vals::Wide => match rng.next() % 16 {
                    0 => 1e-40,
                    1 => -0.0,
                    _ => rng.unit(40.0),
                },
                Vals::Special => match rng.next() % 40 {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => f64::NEG_INFINITY,
                    3 => -0.0,
                    _ => rng.unit(2.0),
                },
            };
            T::store(<T::Real as gpukit_core::numeric::Real>::from_f64(x))
        })
        .collect()
}

/// Mask kinds.
#[derive(Clone, Copy, Debug)]
enum Mask {
    /// No mask.
    None,
    /// Biases, some keys dropped (-1e30 or -inf), some trailing keys dropped.
    Some,
    /// Biases, and the first mask row fully dropped.
    FullRow,
    /// Biases with a NaN, a -1e29 (kept) and a +inf.
    Odd,
}

fn mask_values<T: FloatElement>(rng: &mut Rng, rows: usize, nkv: usize, kind: Mask) -> Vec<T> {
    let mut m = vec![0.0f64; rows * nkv];
    for r in 0..rows {
        for j in 0..nkv {
            m[r * nkv + j] = match rng.next() % 6 {
                0 => -1e30,
                1 => f64::NEG_INFINITY,
                2 => rng.unit(3.0),
                _ => 0.0,
            };
            if j + 3 >= nkv && r % 2 == 1 {
                m[r * nkv + j] = -1e30;
            }
            if matches!(kind, Mask::FullRow) && r == 0 {
                m[r * nkv + j] = -1e30;
            }
        }
        if matches!(kind, Mask::Odd) && nkv > 0 {
            let j = rng.next() as usize % nkv;
            m[r * nkv + j] = match r % 3 {
                0 => f64::NAN,
                1 => -1e29,
                _ => f64::INFINITY,
            };
        }
    }
    m.iter()
        .map(|&x| T::store(<T::Real as gpukit_core::numeric::Real>::from_f64(x)))
        .collect()
}

fn launch(kit: &Kit, name: &str, args: &[DevArg<'_>]) {
    kit.launch_builtin(name, LaunchConfig::for_elements(1, 1).unwrap(), args)
        .unwrap();
}

fn check<T: Element + Copy>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            same_bits(g, w),
            "{what}: element {i}: got {:?}, oracle {:?}",
            g.to_f64(),
            w.to_f64()
        );
    }
}

/// One case: `(batch, heads, n, nkv, hd, hpb, mask, vals, interleaved)`.
type Case = (usize, usize, usize, usize, usize, usize, Mask, Vals, bool);

fn cases() -> Vec<Case> {
    use Mask as M;
    use Vals as V;
    vec![
        (1, 1, 1, 1, 1, 1, M::None, V::Plain, false),
        (1, 1, 3, 0, 3, 1, M::None, V::Plain, false),
        (1, 2, 5, 0, 64, 1, M::Some, V::Plain, false),
        (1, 1, 7, 5, 3, 1, M::None, V::Special, false),
        (1, 2, 17, 63, 64, 2, M::Some, V::Plain, false),
        (1, 2, 17, 65, 80, 1, M::FullRow, V::Wide, false),
        (1, 4, 33, 129, 1, 2, M::Odd, V::Plain, false),
        (1, 1, 65, 130, 256, 1, M::Some, V::Special, false),
        (1, 2, 130, 200, 80, 1, M::None, V::Wide, false),
        (1, 3, 64, 64, 64, 3, M::Some, V::Plain, false),
        (1, 1, 2, 300, 3, 1, M::FullRow, V::Special, false),
        (2, 3, 19, 70, 5, 3, M::Some, V::Plain, true),
        (3, 2, 4, 65, 64, 2, M::None, V::Special, true),
        (2, 2, 67, 33, 80, 2, M::FullRow, V::Wide, true),
        (1, 2, 100, 150, 64, 2, M::Odd, V::Plain, true),
    ]
}

fn fused_cases<T: FloatElement + Element>(kit: &Kit, level: SimdLevel) {
    let name = gpukit_core::abi::kernel_name("attention", T::DTYPE);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (ci, &(batch, heads, n, nkv, hd, hpb, mk, vals, inter)) in cases().iter().enumerate() {
        let q: Vec<T> = values(&mut rng, batch * heads * n * hd, vals);
        let k: Vec<T> = values(&mut rng, batch * heads * nkv * hd, vals);
        let v: Vec<T> = values(&mut rng, batch * heads * nkv * hd, vals);
        let mrows = if inter { batch } else { heads / hpb };
        let mask: Option<Vec<T>> =
            (!matches!(mk, Mask::None)).then(|| mask_values(&mut rng, mrows, nkv, mk));
        let scale = 1.0 / (hd as f64).sqrt() * if ci % 3 == 0 { 1.7 } else { 1.0 };
        let want = if inter {
            gpukit_reference::attention_batch(
                &q,
                &k,
                &v,
                mask.as_deref(),
                batch,
                heads,
                n,
                nkv,
                hd,
                scale,
            )
        } else {
            gpukit_reference::attention(&q, &k, &v, mask.as_deref(), heads, n, nkv, hd, hpb, scale)
        };
        let (qb, kb, vb) = (
            kit.upload(&q).unwrap(),
            kit.upload(&k).unwrap(),
            kit.upload(&v).unwrap(),
        );
        let mb = match &mask {
            Some(m) => kit.upload(m).unwrap(),
            None => Buf::absent(T::DTYPE),
        };
        let ob = kit.zeros(T::DTYPE, q.len()).unwrap();
        let i = |x: usize| DevArg::I64(x as i64);
        launch(
            kit,
            &name,
            &[
                (&ob).into(),
                (&qb).into(),
                (&kb).into(),
                (&vb).into(),
                (&mb).into(),
                i(usize::from(mask.is_some())),
                i(batch),
                i(heads),
                i(n),
                i(nkv),
                i(hd),
                i(if inter { heads } else { hpb }),
                i(usize::from(inter)),
                DevArg::F64(scale),
            ],
        );
        let got: Vec<T> = ob.download().unwrap();
        check(
            &format!("{name} at {level:?}, case {ci} {:?}", cases()[ci]),
            &got,
            &want,
        );
    }
}

fn scores_cases<T: FloatElement + Element>(kit: &Kit, level: SimdLevel) {
    let name = gpukit_core::abi::kernel_name("attention_scores", T::DTYPE);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut all = cases();
    all.push((1, 2, 3, 70, 0, 1, Mask::Some, Vals::Plain, false));
    all.push((1, 1, 300, 70, 7, 1, Mask::None, Vals::Special, false));
    for (ci, &(_, heads, n, nkv, hd, hpb, mk, vals, _)) in all.iter().enumerate() {
        let q: Vec<T> = values(&mut rng, heads * n * hd, vals);
        let k: Vec<T> = values(&mut rng, heads * nkv * hd, vals);
        let mask: Option<Vec<T>> =
            (!matches!(mk, Mask::None)).then(|| mask_values(&mut rng, heads / hpb, nkv, mk));
        let scale = 1.0 / (hd as f64).sqrt();
        let want = gpukit_reference::attention_scores(
            &q,
            &k,
            mask.as_deref(),
            heads,
            n,
            nkv,
            hd,
            hpb,
            scale,
        );
        let (qb, kb) = (kit.upload(&q).unwrap(), kit.upload(&k).unwrap());
        let mb = match &mask {
            Some(m) => kit.upload(m).unwrap(),
            None => Buf::absent(T::DTYPE),
        };
        let sb = kit.zeros(T::DTYPE, want.len()).unwrap();
        if want.is_empty() {
            continue;
        }
        let i = |x: usize| DevArg::I64(x as i64);
        launch(
            kit,
            &name,
            &[
                (&sb).into(),
                (&qb).into(),
                (&kb).into(),
                (&mb).into(),
                i(usize::from(mask.is_some())),
                i(heads),
                i(n),
                i(nkv),
                i(hd),
                i(hpb),
                DevArg::F64(scale),
            ],
        );
        let got: Vec<T> = sb.download().unwrap();
        check(&format!("{name} at {level:?}, case {ci}"), &got, &want);
    }
}

fn kit() -> Kit {
    Kit::from_device(Box::new(CpuDevice::new()))
}

#[test]
fn fused_matches_the_oracle_at_every_level() {
    let kit = kit();
    at_each_level(|l| {
        fused_cases::<f32>(&kit, l);
        fused_cases::<f64>(&kit, l);
        fused_cases::<f16>(&kit, l);
        fused_cases::<bf16>(&kit, l);
    });
}

#[test]
fn scores_match_the_oracle_at_every_level() {
    let kit = kit();
    at_each_level(|l| {
        scores_cases::<f32>(&kit, l);
        scores_cases::<f64>(&kit, l);
        scores_cases::<f16>(&kit, l);
        scores_cases::<bf16>(&kit, l);
    });
}
