//! Gather and ScatterElements: ONNX's examples, negative indices, duplicate indices and
//! out-of-range errors.

use gpukit_core::Error;
use gpukit_reference as reference;

use crate::common::assert_bits;

/// Source: ONNX Gather, Operators.md example 1 (axis = 0):
/// data = [[1.0,1.2],[2.3,3.4],[4.5,5.7]], indices = [[0,1],[1,2]]
/// output = [[[1.0,1.2],[2.3,3.4]],[[2.3,3.4],[4.5,5.7]]].
/// Here outer = 1, axis_len = 3, inner = 2, idx flattened.
#[test]
fn gather_onnx_example_1() {
    let data = [1.0f32, 1.2, 2.3, 3.4, 4.5, 5.7];
    let got = reference::gather(&data, &[0, 1, 1, 2], 1, 3, 2).unwrap();
    assert_bits(&got, &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]);
}

/// Source: ONNX Gather, Operators.md example 2 (axis = 1):
/// data = [[1.0,1.2,1.9],[2.3,3.4,3.9],[4.5,5.7,5.9]], indices = [[0,2]]
/// output = [[[1.0,1.9]],[[2.3,3.9]],[[4.5,5.9]]]. outer = 3, axis_len = 3, inner = 1.
/// Then the same with negative indices: ONNX Gather accepts [-s, s-1], a negative index
/// counting from the end, so [0, -1] selects the same columns as [0, 2].
#[test]
fn gather_onnx_example_2_and_negative_indices() {
    let data = [1.0f64, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9];
    let want = [1.0f64, 1.9, 2.3, 3.9, 4.5, 5.9];
    assert_bits(&reference::gather(&data, &[0, 2], 3, 3, 1).unwrap(), &want);
    assert_bits(&reference::gather(&data, &[0, -1], 3, 3, 1).unwrap(), &want);
    assert_bits(
        &reference::gather(&data, &[-3, -1], 3, 3, 1).unwrap(),
        &want,
    );
    // ONNX backend test "gather_negative_indices": data = arange(10), indices
    // [0, -9, -10], axis 0 -> [0, 1, 0].
    let data: Vec<i64> = (0..10).collect();
    assert_bits(
        &reference::gather(&data, &[0, -9, -10], 1, 10, 1).unwrap(),
        &[0, 1, 0],
    );
    // Values move bit for bit: -0.0 and a NaN payload survive.
    let odd_nan = f32::from_bits(0x7fc0_1234);
    let got = reference::gather(&[-0.0f32, odd_nan], &[1, 0], 1, 2, 1).unwrap();
    assert_eq!(got[0].to_bits(), 0x7fc0_1234);
    assert_eq!(got[1].to_bits(), 0x8000_0000);
    // Empty idx: empty output.
    assert!(reference::gather(&data, &[], 1, 10, 1).unwrap().is_empty());
}

/// Source: ONNX Gather ("It is an error if any of the index values are out of bounds",
/// bounds [-s, s-1]) and contract rule 7 (reported as an error, never read); the first
/// bad index in idx order is the one reported (abi.rs, check_index).
#[test]
fn gather_out_of_range_is_an_error() {
    let data = [1i32, 2, 3];
    for bad in [3i64, -4, i64::MAX, i64::MIN] {
        let err = reference::gather(&data, &[0, bad, 7], 1, 3, 1).unwrap_err();
        assert_eq!(
            err,
            Error::IndexOutOfRange {
                op: "gather".into(),
                index: bad,
                axis_len: 3,
            }
        );
    }
    // Checked even when nothing would be read (outer = 0) and on an empty axis.
    assert!(reference::gather::<f32>(&[], &[5], 0, 3, 1).is_err());
    assert!(reference::gather::<f32>(&[], &[0], 2, 0, 1).is_err());
}

/// Source: ONNX ScatterElements, Operators.md example 2 (axis = 1):
/// data = [[1.0,2.0,3.0,4.0,5.0]], indices = [[1,3]], updates = [[1.1,2.1]]
/// output = [[1.0,1.1,3.0,2.1,5.0]]; and the backend test
/// "scatter_elements_with_negative_indices": indices = [[1,-3]] ->
/// [[1.0,1.1,2.1,4.0,5.0]].
#[test]
fn scatter_onnx_example_2_and_negative_index() {
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    let upd = [1.1f32, 2.1];
    assert_bits(
        &reference::scatter(&data, &[1, 3], &upd, 1, 5, 1).unwrap(),
        &[1.0, 1.1, 3.0, 2.1, 5.0],
    );
    assert_bits(
        &reference::scatter(&data, &[1, -3], &upd, 1, 5, 1).unwrap(),
        &[1.0, 1.1, 2.1, 4.0, 5.0],
    );
}

/// Source: ONNX ScatterElements, Operators.md example 1 (axis = 0):
/// data = zeros(3,3), indices = [[1,0,2],[0,2,1]], updates = [[1.0,1.1,1.2],[2.0,2.1,2.2]]
/// output = [[2.0,1.1,0.0],[1.0,0.0,2.2],[0.0,2.1,1.2]].
/// gpukit's scatter takes one index vector per axis (shared by all outer/inner
/// positions), so the example runs column by column: column j is data [3] (outer 1,
/// axis_len 3, inner 1) with idx = indices[:, j] and upd = updates[:, j].
#[test]
fn scatter_onnx_example_1_columnwise() {
    let indices = [[1i64, 0, 2], [0, 2, 1]];
    let updates = [[1.0f32, 1.1, 1.2], [2.0, 2.1, 2.2]];
    let want = [[2.0f32, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]];
    for j in 0..3 {
        let idx = [indices[0][j], indices[1][j]];
        let upd = [updates[0][j], updates[1][j]];
        let col = reference::scatter(&[0.0f32; 3], &idx, &upd, 1, 3, 1).unwrap();
        let want_col = [want[0][j], want[1][j], want[2][j]];
        assert_bits(&col, &want_col);
    }
}

/// Source: gpukit's definition of duplicates (abi.rs scatter: the largest g wins;
/// ONNX ScatterElements with reduction "none" leaves them undefined), and the
/// [outer, axis_len, inner] layout, by hand.
/// data [2, 3, 2] = 0..12, idx = [2, 0, 2, -1], upd [2, 4, 2]:
/// o = 0: row 2 <- upd[0,0]=(100,101), row 0 <- (102,103), row 2 <- (104,105),
///        row 2 <- (106,107) (last wins); row 1 keeps (2,3).
/// o = 1: upd[1, g] = (200 + 2g, 201 + 2g): row 2 ends as (206,207), row 0 as
///        (202,203); row 1 keeps (8,9).
#[test]
fn scatter_duplicates_largest_g_wins() {
    let data: Vec<i64> = (0..12).collect();
    let upd: Vec<i64> = (0..16)
        .map(|v| if v < 8 { 100 + v } else { 200 + v - 8 })
        .collect();
    let got = reference::scatter(&data, &[2, 0, 2, -1], &upd, 2, 3, 2).unwrap();
    assert_bits(&got, &[102, 103, 2, 3, 106, 107, 202, 203, 8, 9, 206, 207]);
}

/// Source: contract rule 7 (out-of-range index -> error, nothing written), by hand.
#[test]
fn scatter_out_of_range_is_an_error() {
    let err = reference::scatter(&[0.0f32; 3], &[0, -4], &[1.0, 2.0], 1, 3, 1).unwrap_err();
    assert_eq!(
        err,
        Error::IndexOutOfRange {
            op: "scatter".into(),
            index: -4,
            axis_len: 3,
        }
    );
}
