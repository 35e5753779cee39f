//! The reduction shape (contract rule 4): the one order in which every long reduction
//! (sum, dot, norms, softmax denominators, ...) combines its terms, on every backend.
//!
//! ```text
//! chunk c   = items [c*CHUNK, min(n, (c+1)*CHUNK))            (CHUNK = 8192)
//! lane l    = acc_l starts at `zero`; for the chunk's items j = l, l+32, l+64, ...
//!             (in ascending order) acc_l = step(acc_l, item j)  (LANES = 32)
//! tree      = for w in 16, 8, 4, 2, 1: acc_l = combine(acc_l, acc_{l+w}) for l < w
//! chunk sum = acc_0
//! result    = n <= CHUNK: the single chunk's sum;
//!             otherwise the same shape applied to the chunk sums
//!             (step = combine with the next chunk sum), recursively.
//! ```
//!
//! A lane maps to a warp lane on the GPU (the tree is `shfl.down` by 16, 8, 4, 2, 1)
//! and to a SIMD lane on the CPU (32 f32 lanes = two AVX-512 or four AVX2 registers);
//! a chunk maps to a block or a rayon task. The result depends on nothing but `n`.

/// Lanes of the reduction shape.
pub const LANES: usize = 32;

/// Items per chunk (a multiple of [`LANES`]).
pub const CHUNK: usize = 8192;

const _: () = assert!(CHUNK.is_multiple_of(LANES) && LANES.is_power_of_two());

/// The fixed pairwise tree over the lanes: `w = 16, 8, 4, 2, 1`,
/// `acc[l] = combine(acc[l], acc[l + w])` for `l < w`; returns `acc[0]`.
#[inline(always)]
pub fn tree<A: Copy>(mut acc: [A; LANES], combine: impl Fn(A, A) -> A) -> A {
    let mut w = LANES / 2;
    while w > 0 {
        for l in 0..w {
            acc[l] = combine(acc[l], acc[l + w]);
        }
        w /= 2;
    }
    acc[0]
}

/// One chunk: lanes over items `start..end` (at most [`CHUNK`] of them), then the tree.
#[inline]
pub fn chunk<A: Copy>(
    start: usize,
    end: usize,
    zero: A,
    mut step: impl FnMut(A, usize) -> A,
    combine: impl Fn(A, A) -> A,
) -> A {
    debug_assert!(end - start <= CHUNK);
    let mut acc = [zero; LANES];
    for (j, i) in (start..end).enumerate() {
        let l = j % LANES;
        acc[l] = step(acc[l], i);
    }
    tree(acc, combine)
}

/// Number of chunks for `n` items (at least one: an empty input is one empty chunk).
pub const fn chunks(n: usize) -> usize {
    if n == 0 { 1 } else { n.div_ceil(CHUNK) }
}

/// Combines already computed chunk sums with the same shape, recursively.
pub fn combine_partials<A: Copy>(partials: &[A], zero: A, combine: impl Fn(A, A) -> A + Copy) -> A {
    fold(
        partials.len(),
        zero,
        |acc, j| combine(acc, partials[j]),
        combine,
    )
}

/// Reduces items `0..n` with the shape: `step(acc, i)` folds item `i` into a lane,
/// `combine` merges two partial results; `zero` starts every lane.
pub fn fold<A: Copy>(
    n: usize,
    zero: A,
    mut step: impl FnMut(A, usize) -> A,
    combine: impl Fn(A, A) -> A + Copy,
) -> A {
    if n <= CHUNK {
        return chunk(0, n, zero, step, combine);
    }
    let partials: Vec<A> = (0..chunks(n))
        .map(|c| {
            chunk(
                c * CHUNK,
                ((c + 1) * CHUNK).min(n),
                zero,
                &mut step,
                combine,
            )
        })
        .collect();
    combine_partials(&partials, zero, combine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sums_follow_lanes_then_tree() {
        // 33 items: lane 0 gets items 0 and 32, the others one item each.
        let x: Vec<f64> = (0..33).map(|i| i as f64).collect();
        let s = fold(x.len(), 0.0, |a, i| a + x[i], |a, b| a + b);
        assert_eq!(s, (0..33).sum::<i32>() as f64);
        // The order is observable with floats: 1e16 + 1 + 1 ... depends on grouping.
        let mut y = vec![1.0f64; 64];
        y[0] = 1e16;
        let s = fold(y.len(), 0.0, |a, i| a + y[i], |a, b| a + b);
        // Lane 0 holds 1e16 + 1 (rounds to 1e16), lane l>0 holds 2; tree adds lanes
        // 1..31 pairwise first: total 1e16 + 62 exactly representable? 1e16 has ulp 2.
        let mut lanes = [0.0f64; 32];
        for (i, v) in y.iter().enumerate() {
            lanes[i % 32] += v;
        }
        assert_eq!(s, tree(lanes, |a, b| a + b));
    }

    #[test]
    fn long_inputs_chunk_then_recurse() {
        let n = CHUNK * 3 + 5;
        let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 * 0.001).collect();
        let s = fold(n, 0.0f32, |a, i| a + x[i], |a, b| a + b);
        let parts: Vec<f32> = (0..4)
            .map(|c| {
                chunk(
                    c * CHUNK,
                    ((c + 1) * CHUNK).min(n),
                    0.0,
                    |a, i| a + x[i],
                    |a, b| a + b,
                )
            })
            .collect();
        assert_eq!(
            s.to_bits(),
            chunk(0, 4, 0.0, |a, j| a + parts[j], |a, b| a + b).to_bits()
        );
        assert_eq!(chunks(0), 1);
        assert_eq!(chunks(CHUNK), 1);
        assert_eq!(chunks(CHUNK + 1), 2);
    }

    #[test]
    fn empty_is_zero() {
        assert_eq!(fold(0, 0.0f32, |a, _| a, |a, b| a + b).to_bits(), 0);
    }
}
