//! Random (mostly invalid) calls of every attention op: each returns an error or
//! succeeds, none panics.

use gpukit::ops::{self, AttentionShape};
use gpukit::{Buf, DType, Kit};
use gpukit_tests::cfg;
use proptest::prelude::*;

use super::kit;

#[derive(Debug, Clone)]
struct Bad {
    op: u8,
    dims: [usize; 5],
    lens: [usize; 6],
    hpb: usize,
    scale: f64,
    dtypes: [u8; 6],
    absent: u8,
}

fn small() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..9, 1 => Just(usize::MAX), 1 => Just(1usize << 62), 1 => Just(257usize)]
}

fn bad() -> impl Strategy<Value = Bad> {
    (
        any::<u8>(),
        [small(), small(), small(), small(), small()],
        [small(), small(), small(), small(), small(), small()],
        small(),
        prop_oneof![Just(1.0f64), Just(f64::NAN), Just(1e300), Just(-0.5)],
        [0u8..8, 0u8..8, 0u8..8, 0u8..8, 0u8..8, 0u8..8],
        any::<u8>(),
    )
        .prop_map(|(op, dims, lens, hpb, scale, dtypes, absent)| Bad {
            op,
            dims,
            lens,
            hpb,
            scale,
            dtypes,
            absent,
        })
}

fn buf_of(kit: &Kit, dt: u8, n: usize, absent: bool) -> Buf {
    let dtype = match dt {
        0 | 4 | 5 => DType::F32,
        1 => DType::F64,
        2 => DType::F16,
        3 => DType::BF16,
        6 => DType::I64,
        _ => DType::I32,
    };
    if absent || n > 4096 {
        return Buf::absent(dtype);
    }
    kit.alloc(dtype, n).unwrap()
}

proptest! {
    #![proptest_config(cfg())]

    /// Random (mostly invalid) calls return errors or succeed; they never panic.
    #[test]
    fn random_calls_never_panic(c in bad()) {
        let kit = kit();
        let b: Vec<Buf> = (0..6)
            .map(|i| buf_of(&kit, c.dtypes[i], c.lens[i], c.absent % 7 == i as u8))
            .collect();
        let [batch, heads, n, nkv, hd] = c.dims;
        let sh = AttentionShape { heads, n, nkv, head_dim: hd, scale: c.scale };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match c.op % 4 {
            0 => ops::attention(&kit, &b[0], &b[1], &b[2], &b[3], sh),
            1 => ops::attention_masked(&kit, &b[0], &b[1], &b[2], &b[3], &b[4], c.hpb, sh),
            2 => ops::attention_batch(&kit, &b[0], &b[1], &b[2], &b[3], &b[4], batch, sh),
            _ => ops::attention_composed(&kit, &b[0], &b[5], &b[1], &b[2], &b[3], &b[4], c.hpb, sh),
        }));
        prop_assert!(r.is_ok(), "panicked on {c:?}");
    }
}
