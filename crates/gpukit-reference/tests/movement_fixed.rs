//! Fixed cases of the movement group's oracle, with expected values derived by hand or
//! taken from the ONNX operator documentation (each test names its source). All
//! comparisons are exact (bits), except one documented tolerance check against ONNX's
//! printed decimals.

use gpukit_core::Error;
use gpukit_core::half::{bf16, f16};
use gpukit_reference::{
    concat, copy_into_axis, eos_gather, expand, expand_last, permute, resize_bilinear,
    resize_nearest, slice_axis,
};

fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// ONNX Concat docs (test_concat_2d_axis_0 / axis_1):
/// [[1,2],[3,4]] ++ [[5,6],[7,8]] along axis 0 and axis 1.
#[test]
fn concat_onnx_2d() {
    let (a, b) = ([1i64, 2, 3, 4], [5i64, 6, 7, 8]);
    // Axis 0: outer 1, inner 2.
    assert_eq!(
        concat(&[&a, &b], 1, &[2, 2], 2),
        vec![1, 2, 3, 4, 5, 6, 7, 8]
    );
    // Axis 1: outer 2, inner 1.
    assert_eq!(
        concat(&[&a, &b], 2, &[2, 2], 1),
        vec![1, 2, 5, 6, 3, 4, 7, 8]
    );
}

/// By hand: an empty input contributes nothing; one input is a copy; three uneven ones.
#[test]
fn concat_empty_one_many() {
    let a = [1i32, 2, 3, 4];
    let e: [i32; 0] = [];
    assert_eq!(concat(&[&e, &a, &e], 2, &[0, 2, 0], 1), vec![1, 2, 3, 4]);
    assert_eq!(concat(&[&a], 2, &[2], 1), a.to_vec());
    let (x, y, z) = ([1i32, 2], [3i32, 4, 5, 6], [7i32, 8]);
    // [2, 1] ++ [2, 2] ++ [2, 1] along axis 1 -> [2, 4].
    assert_eq!(
        concat(&[&x, &y, &z], 2, &[1, 2, 1], 1),
        vec![1, 3, 4, 7, 2, 5, 6, 8]
    );
}

/// By hand: the slot form writes only its slot, copying bits (NaN payload, -0.0).
#[test]
fn copy_into_axis_slot_keeps_bits() {
    let nan = f32::from_bits(0x7fc0_1234);
    let dst = [9.0f32; 8]; // [2, 4, 1]
    let src = [nan, -0.0, 1.0, 2.0]; // [2, 2, 1]
    let got = copy_into_axis(&dst, &src, 2, 2, 1, 4, 1);
    let want = [9.0, nan, -0.0, 9.0, 9.0, 1.0, 2.0, 9.0];
    assert_eq!(bits32(&got), bits32(&want));
}

/// ONNX Slice docs (test_slice example 1): data [[1,2,3,4],[5,6,7,8]], starts [1,0],
/// ends [2,3], steps [1,2] -> [[5,7]]; here as axis 0 (start 1, len 1) then axis 1
/// (start 0, len 2, step 2).
#[test]
fn slice_onnx_example() {
    let x = [1i64, 2, 3, 4, 5, 6, 7, 8];
    let rows = slice_axis(&x, 1, 2, 4, 1, 1, 1).unwrap();
    assert_eq!(rows, vec![5, 6, 7, 8]);
    assert_eq!(slice_axis(&rows, 1, 4, 1, 0, 2, 2).unwrap(), vec![5, 7]);
}

/// By hand: a negative start counts from the end (ONNX Slice); out-of-range starts and
/// slices running past the end are errors (gpukit does not clamp).
#[test]
fn slice_negative_and_errors() {
    let x: Vec<i32> = (0..10).collect();
    assert_eq!(slice_axis(&x, 1, 10, 1, -3, 3, 1).unwrap(), vec![7, 8, 9]);
    assert_eq!(
        slice_axis(&x, 1, 10, 1, -10, 4, 3).unwrap(),
        vec![0, 3, 6, 9]
    );
    assert_eq!(
        slice_axis(&x, 1, 10, 1, 10, 0, 1).unwrap(),
        Vec::<i32>::new()
    );
    assert!(matches!(
        slice_axis(&x, 1, 10, 1, -11, 1, 1),
        Err(Error::IndexOutOfRange {
            index: -11,
            axis_len: 10,
            ..
        })
    ));
    assert!(matches!(
        slice_axis(&x, 1, 10, 1, 11, 0, 1),
        Err(Error::IndexOutOfRange { .. })
    ));
    assert!(matches!(
        slice_axis(&x, 1, 10, 1, 8, 3, 1),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        slice_axis(&x, 1, 10, 1, 0, 4, 4),
        Err(Error::Shape { .. })
    ));
}

/// ONNX Transpose definition: out dims are in_dims[perm[d]]. A 2x3 matrix transposed
/// by hand, and a [2,3,4] tensor holding its own linear index under perm [2,0,1]:
/// out[k,i,j] = x[i,j,k] = 12i + 4j + k.
#[test]
fn permute_by_hand() {
    let m = [1i64, 2, 3, 4, 5, 6];
    assert_eq!(permute(&m, &[2, 3], &[1, 0]), vec![1, 4, 2, 5, 3, 6]);
    assert_eq!(permute(&m, &[2, 3], &[0, 1]), m.to_vec());
    let x: Vec<i64> = (0..24).collect();
    let got = permute(&x, &[2, 3, 4], &[2, 0, 1]);
    let mut want = Vec::new();
    for k in 0..4 {
        for i in 0..2 {
            for j in 0..3 {
                want.push(12 * i + 4 * j + k);
            }
        }
    }
    assert_eq!(got, want);
    // 0-D: one element.
    assert_eq!(permute(&[7i32], &[], &[]), vec![7]);
}

/// By hand: a full reversal of a 6-D tensor of shape [1,2,1,2,1,2] holding its linear
/// index: out[a,b,c,d,e,f] (dims [2,1,2,1,2,1]) = x[f,e,d,c,b,a].
#[test]
fn permute_6d_reversal() {
    let x: Vec<i32> = (0..8).collect();
    let got = permute(&x, &[1, 2, 1, 2, 1, 2], &[5, 4, 3, 2, 1, 0]);
    // x's linear index is 4·i1 + 2·i3 + i5; out's is 4·i5 + 2·i3 + i1.
    let mut want = vec![0i32; 8];
    for i1 in 0..2 {
        for i3 in 0..2 {
            for i5 in 0..2 {
                want[4 * i5 + 2 * i3 + i1] = (4 * i1 + 2 * i3 + i5) as i32;
            }
        }
    }
    assert_eq!(got, want);
}

/// ONNX Expand docs (test_expand_dim_changed): input [[1],[2],[3]] (shape [3,1]) to
/// shape [2,1,6] -> output [2,3,6], each row repeated.
#[test]
fn expand_onnx_example() {
    let x = [1.0f32, 2.0, 3.0];
    let got = expand(&x, &[3, 1], &[2, 3, 6]);
    let mut want = Vec::new();
    for _ in 0..2 {
        for v in [1.0f32, 2.0, 3.0] {
            want.extend([v; 6]);
        }
    }
    assert_eq!(bits32(&got), bits32(&want));
    // The seed's last-axis expand: [rows, 1] -> [rows, n].
    let nan = f32::from_bits(0xffc0_0001);
    assert_eq!(
        bits32(&expand_last(&[nan, -0.0], 2, 3)),
        bits32(&[nan, nan, nan, -0.0, -0.0, -0.0])
    );
    assert_eq!(expand_last(&[5i32], 1, 0), Vec::<i32>::new());
}

/// ONNX Resize docs (test_resize_upsample_scales_linear, half_pixel): [[1,2],[3,4]]
/// scaled by 2 -> [[1,1.25,1.75,2],[1.5,1.75,2.25,2.5],[2.5,2.75,3.25,3.5],
/// [3,3.25,3.75,4]]. Every weight here is dyadic, so the values are exact.
#[test]
fn bilinear_half_pixel_onnx() {
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let want = [
        1.0f32, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3.0, 3.25, 3.75, 4.0,
    ];
    assert_eq!(
        bits32(&resize_bilinear(&x, 1, (2, 2), (4, 4), false)),
        bits32(&want)
    );
    let xd = [1.0f64, 2.0, 3.0, 4.0];
    let got = resize_bilinear(&xd, 1, (2, 2), (4, 4), false);
    assert_eq!(got, want.iter().map(|&v| v as f64).collect::<Vec<_>>());
    let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
    let got: Vec<f32> = resize_bilinear(&xh, 1, (2, 2), (4, 4), false)
        .iter()
        .map(|v| v.to_f32())
        .collect();
    assert_eq!(bits32(&got), bits32(&want));
}

/// ONNX Resize docs (test_resize_upsample_scales_linear_align_corners): [[1,2],[3,4]]
/// scaled by 2 -> 1, 1.333.., 1.666.., 2 / 1.666.., 2, 2.333.., 2.666.. / ... . The
/// exact bits follow from the documented order with w1 = f32(1/3) or f32(2/3),
/// w0 = 1 - w1: per row t = fma(w1, b, w0·a) (w1 = 0: just w0·a), then the same across
/// rows; the ONNX decimals themselves hold to 1e-6.
#[test]
fn bilinear_align_corners_onnx() {
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let got = resize_bilinear(&x, 1, (2, 2), (4, 4), true);
    let onnx = [
        1.0,
        1.333_333_33,
        1.666_666_67,
        2.0,
        1.666_666_67,
        2.0,
        2.333_333_33,
        2.666_666_67,
        2.333_333_33,
        2.666_666_67,
        3.0,
        3.333_333_33,
        3.0,
        3.333_333_33,
        3.666_666_67,
        4.0,
    ];
    for (g, w) in got.iter().zip(onnx) {
        assert!((f64::from(*g) - w).abs() < 1e-6, "{g} vs {w}");
    }
    // Weights per output index 0..4 (in 2, out 4): num = dst, den = 3.
    let w = |d: u32| -> (usize, usize, f32, f32) {
        let w1 = (d % 3) as f32 / 3.0;
        let i0 = (d / 3) as usize;
        (i0, (i0 + 1).min(1), 1.0 - w1, w1)
    };
    let mut want = Vec::new();
    for oy in 0..4 {
        let (y0, y1, wy0, wy1) = w(oy);
        for ox in 0..4 {
            let (x0, x1, wx0, wx1) = w(ox);
            let at = |y: usize, xx: usize| x[y * 2 + xx];
            let lerp = |a: f32, b: f32, w0: f32, w1: f32| {
                if w1 == 0.0 {
                    w0 * a
                } else {
                    w1.mul_add(b, w0 * a)
                }
            };
            let t = lerp(at(y0, x0), at(y0, x1), wx0, wx1);
            let b = lerp(at(y1, x0), at(y1, x1), wx0, wx1);
            want.push(lerp(t, b, wy0, wy1));
        }
    }
    assert_eq!(bits32(&got), bits32(&want));
}

/// By hand: align_corners with an output of size 1 samples source 0 (PyTorch); an
/// input of size 1 repeats; half_pixel downsampling by 2 averages pairs
/// (src = 2·dst + 0.5, w1 = 1/2); bf16 rounds once at the store.
#[test]
fn bilinear_edges_by_hand() {
    let x = [1.0f32, 3.0, 5.0, 7.0]; // one row of 4
    assert_eq!(resize_bilinear(&x, 1, (1, 4), (1, 1), true), vec![1.0]);
    assert_eq!(
        resize_bilinear(&x, 1, (1, 4), (1, 2), false),
        vec![2.0, 6.0]
    );
    assert_eq!(
        resize_bilinear(&[2.5f32], 1, (1, 1), (2, 3), false),
        vec![2.5; 6]
    );
    // align_corners 3 -> 5: src = dst/2, weights 0 and 1/2.
    let y = [0.0f64, 4.0, 6.0];
    assert_eq!(
        resize_bilinear(&y, 1, (1, 3), (1, 5), true),
        vec![0.0, 2.0, 4.0, 5.0, 6.0]
    );
    // A zero-weight tap is not read: an identity resize returns every bit (inf, NaN
    // payload, -0.0) and an inf does not leak into its neighbour; a tap with a
    // non-zero weight does carry it.
    let nan = f32::from_bits(0x7fc0_0abc);
    let z = [1.0f32, f32::INFINITY, -0.0, nan];
    let r = resize_bilinear(&z, 1, (1, 4), (1, 4), false);
    assert_eq!(bits32(&r), bits32(&z));
    let r = resize_bilinear(&z[..2], 1, (1, 2), (1, 4), false);
    assert_eq!(r[0], 1.0);
    assert_eq!(r[1], f32::INFINITY);
    // bf16: (1 + 2^-8) is not representable; 1 and 1 + 2^-7 averaged rounds to even.
    let b = [bf16::ONE, bf16::from_f32(1.0 + 2f32.powi(-7))];
    let r = resize_bilinear(&b, 1, (1, 2), (1, 1), false);
    assert_eq!(r[0], bf16::ONE);
}

/// ONNX Resize docs (test_resize_upsample_scales_nearest): [[1,2],[3,4]] scaled by
/// [2,3] -> rows [1,1,1,2,2,2] twice then [3,3,3,4,4,4] twice; and
/// (test_resize_downsample_scales_nearest): [[1,2,3,4],[5,6,7,8]] scaled by 0.6 ->
/// [[1,3]].
#[test]
fn nearest_onnx_examples() {
    let x = [1i64, 2, 3, 4];
    let got = resize_nearest(&x, 1, (2, 2), (4, 6));
    let want = [
        1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4,
    ];
    assert_eq!(got, want.to_vec());
    let y = [1i32, 2, 3, 4, 5, 6, 7, 8];
    assert_eq!(resize_nearest(&y, 1, (2, 4), (1, 2)), vec![1, 3]);
    // Non-integer ratio by hand: 3 -> 5 reads floor(3·dst/5) = 0,0,1,1,2.
    assert_eq!(
        resize_nearest(&[7i32, 8, 9], 1, (1, 3), (1, 5)),
        vec![7, 7, 8, 8, 9]
    );
    // Two planes stay separate.
    assert_eq!(
        resize_nearest(&[1i32, 2], 2, (1, 1), (1, 2)),
        vec![1, 1, 2, 2]
    );
}

/// By hand (CLIP pooling: the EOS token has the largest id): row 0 picks position 2;
/// row 1 has a tie between positions 1 and 2 and picks the first.
#[test]
fn eos_gather_by_hand() {
    let ids = [49406i64, 320, 49407, 0, 5, 9, 9, 1];
    let x: Vec<f32> = (0..16).map(|v| v as f32).collect(); // [2, 4, 2]
    assert_eq!(eos_gather(&x, &ids, 2, 4, 2), vec![4.0, 5.0, 10.0, 11.0]);
    // Negative ids and seq 1.
    assert_eq!(eos_gather(&[3i32, 4], &[-5, -7], 2, 1, 1), vec![3, 4]);
}
