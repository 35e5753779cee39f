//! The shared packed GEMM engine of matmul, bmm, gemm and conv2d.
//!
//! `C[bi][r][j] = Σ_t A[bi](r, t) · B[bi](t, j)` as the contract's chain: per output,
//! `acc = fma(a, b, acc)` over `t = 0..k` ascending from `+0.0` in the compute type.
//!
//! Structure (Goto/BLIS): the product is split into column blocks of `nc` columns; a
//! block's B is packed once for all of `k` into `[kc-block][NR-panel][kc][NR]`; row
//! blocks of `mc` rows pack their A per k-block into `[MR-panel][MR][kc]`; the
//! micro-kernel ([`micro`]) runs every `MR × NR` tile of the row block for one k-block,
//! B's micro-panel staying in L1 while A's panels stream from L2. K-blocks run in
//! ascending order and a tile's partial sums stay exact in a compute-type scratch
//! between them (for f16/bf16 outputs too: nothing is rounded before the chain ends),
//! so every output sees exactly one chain of FMAs over `t` ascending. Padded rows and
//! columns of the panels are `+0.0`; their results are never stored. Only when the
//! chain is complete does the [`Sink`] apply the op's epilogue (alpha/beta/bias, the
//! store) in the contract's order.
//!
//! Threads: a large product is split by rows (B packed once, in parallel, shared by
//! the row tasks) or by columns when it has few rows (each task packs its own B
//! columns); a batch of small products runs one product per task; small work runs on
//! the calling thread.

mod micro;
mod pack;
mod scratch;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use gpukit_core::{Error, Result};

use rayon::prelude::*;

pub(crate) use micro::GemmReal;
use micro::{BRows, Kernel};
pub(crate) use pack::{RowMajor, TransA, TransB};
use scratch::{Scratch, ScratchReal};

use crate::kernels::simd::{dispatch, simd_level};

/// Packs A: `dst` receives the row panels of rows `r0..r0+rows`, k `t0..t0+kc` of
/// matrix `bi`: panel `p` holds `a(r0 + p*mr + i, t0 + t)` at `p*kc*mr + i*kc + t`;
/// rows past `rows` (to the panel boundary) are `+0.0`.
pub(crate) trait PackA<R>: Sync {
    /// See the trait.
    #[allow(clippy::too_many_arguments)]
    fn pack_a(
        &self,
        bi: usize,
        r0: usize,
        rows: usize,
        t0: usize,
        kc: usize,
        mr: usize,
        dst: &mut [R],
    );
}

/// Packs B: `dst` receives the column panels of columns `c0..c0+cols`, k `t0..t0+kc`
/// of matrix `bi`: panel `p` holds `b(t0 + t, c0 + p*nr + j)` at `p*kc*nr + t*nr + j`;
/// columns past `cols` (to the panel boundary) are `+0.0`.
pub(crate) trait PackB<R>: Sync {
    /// See the trait.
    #[allow(clippy::too_many_arguments)]
    fn pack_b(
        &self,
        bi: usize,
        t0: usize,
        kc: usize,
        c0: usize,
        cols: usize,
        nr: usize,
        dst: &mut [R],
    );

    /// B in place, when it is stored row-major in the compute type itself: the
    /// address of `b(t0, c0)` of item `bi` and the row stride, valid for reading every
    /// `b(t, c)` with `t0 <= t < k`, `c0 <= c < n`. Full panels are then read there by
    /// the micro-kernel, without packing (a panel used by few row tiles costs more to
    /// copy than to read twice). `None` (the default): always packed.
    fn direct(&self, _bi: usize, _t0: usize, _c0: usize) -> Option<(*const R, usize)> {
        None
    }

    /// Whether [`PackB::direct_rows`] may give B in place (false: the engine never
    /// asks, and keeps no offset table).
    const DIRECT_ROWS: bool = false;

    /// B in place with its rows at uneven distances (an implicit GEMM's operand, such
    /// as a stride-1 convolution's taps on a padded copy of its input): an address
    /// `base`, with `offs[t]` set to the offset of `b(t0 + t, c0)` of item `bi` from
    /// it for every `t < offs.len()` (the rows `t0..t0 + offs.len() <= k`); from each,
    /// the row's columns `c0..n` are readable (`b(t, c)` at `base + offs[t - t0] + c -
    /// c0`). Used as [`PackB::direct`] is, when that gives `None`. `None` (the
    /// default): packed. Asked only where [`PackB::DIRECT_ROWS`] is true.
    fn direct_rows(
        &self,
        _bi: usize,
        _t0: usize,
        _c0: usize,
        _offs: &mut [usize],
    ) -> Option<*const R> {
        None
    }
}

/// How a k-block's full B panels are read (see [`PackB::direct`] and
/// [`PackB::direct_rows`]).
#[derive(Clone, Copy)]
enum InPlace<R> {
    /// Packed.
    No,
    /// `b(t0 + t, c0 + j)` at `base + t*ld + j`.
    Strided(*const R, usize),
    /// `b(t0 + t, c0 + j)` at `base + offs[t] + j` (the row-block's offset buffer).
    Rows(*const R),
}

/// Receives finished chains: `acc[r*ld + j]` is the complete sum of output
/// `(r0 + r, c0 + j)` of matrix `bi`, for `r < rows`, `j < cols`. Calls for different
/// tiles may run concurrently; each output is delivered exactly once.
pub(crate) trait Sink<R>: Sync {
    /// See the trait.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        bi: usize,
        r0: usize,
        c0: usize,
        rows: usize,
        cols: usize,
        acc: &[R],
        ld: usize,
    );
}

/// The sizes of one (batched) product.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    /// Independent products.
    pub(crate) batch: usize,
    /// Rows of each.
    pub(crate) m: usize,
    /// Columns of each.
    pub(crate) n: usize,
    /// Length of each chain.
    pub(crate) k: usize,
}

/// L1 data and L2 cache sizes in bytes, read once from sysfs (defaults 32 KiB, 1 MiB).
fn caches() -> (usize, usize) {
    static C: OnceLock<(usize, usize)> = OnceLock::new();
    *C.get_or_init(|| {
        let (mut l1, mut l2) = (32 << 10, 1 << 20);
        for i in 0..8 {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
            let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
            let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
            else {
                continue;
            };
            let size = size.trim();
            let bytes = match size.strip_suffix('K') {
                Some(v) => v.parse::<usize>().ok().map(|v| v << 10),
                None => match size.strip_suffix('M') {
                    Some(v) => v.parse::<usize>().ok().map(|v| v << 20),
                    None => size.parse::<usize>().ok(),
                },
            };
            let Some(bytes) = bytes else { continue };
            match (level.trim(), kind.trim()) {
                ("1", "Data") | ("1", "Unified") => l1 = bytes.clamp(16 << 10, 256 << 10),
                ("2", _) => l2 = bytes.clamp(256 << 10, 8 << 20),
                _ => {}
            }
        }
        (l1, l2)
    })
}

/// Cache blocking for a tile and element size.
#[derive(Clone, Copy, Debug)]
struct Blocking {
    kc: usize,
    mc: usize,
    nc: usize,
}

fn blocking(mr: usize, nr: usize, size: usize, m: usize, k: usize, n: usize) -> Blocking {
    let (l1, l2) = caches();
    // B's micro-panel (kc × nr) takes about 2/3 of L1.
    let kc = ((l1 * 2 / 3) / (nr * size) / 16 * 16).clamp(64, 1024);
    // A's row block (mc × kc) takes about half of L2.
    let mc = ((l2 / 2) / (kc * size) / mr * mr).clamp(mr, 24 * mr);
    // With several row blocks, B's column block is packed for all of k and read once
    // per row block: about 8 MiB (it streams from L3). With one row block (few rows,
    // as in a conv2d with 64 output channels) B is packed, or read in place, one
    // k-block at a time: that k-block's panels (kc × nc) and the row block's partial
    // sums (m × nc), which every k-block loads and stores again, take about half of
    // L2 (a 7 MiB im2col block written out to L3 once cost a third of conv2d's time).
    let nc_max = if m <= mc {
        (l2 / 2) / ((kc.min(k) + m) * size)
    } else {
        (8 << 20) / (k.max(1) * size)
    };
    let nc_max = (nc_max / nr * nr).clamp(2 * nr, 4096);
    // Split n into equal blocks no wider than that (a thin last block would run the
    // whole of k for a few panels: 768 columns as 672 + 96 ran at 60% of 2 × 384).
    let blocks = n.div_ceil(nc_max).max(1);
    let nc = n.div_ceil(blocks).div_ceil(nr).max(1) * nr;
    Blocking { kc, mc, nc }
}

/// Scratch needs above this are checked against the host's available memory first.
const SCRATCH_CHECK_BYTES: usize = 64 << 20;

/// A single row block of at most this many row tiles reads full B panels in place
/// (when B allows it, [`PackB::direct`]) instead of packing them: each panel then serves
/// few tiles, and copying it costs more than the strided reads.
const DIRECT_B_MAX_TILES: usize = 16;

/// Products with fewer multiply-adds than this run on the calling thread.
const SERIAL_FMAS: usize = 1 << 18;

/// Runs the product `C = A · B` of `d` into `out`.
///
/// Errors: [`Error::OutOfMemory`] when the packing scratch cannot be had (checked
/// against the host's available memory before anything is written; an allocation
/// that still fails mid-way also ends in the error, with `out` partly written).
pub(crate) fn run<R: GemmReal>(
    d: Dims,
    a: &impl PackA<R>,
    b: &impl PackB<R>,
    out: &impl Sink<R>,
) -> Result<()> {
    if d.batch == 0 || d.m == 0 || d.n == 0 {
        return Ok(());
    }
    let kern = R::kernel(simd_level(), d.m);
    let bl = blocking(kern.mr, kern.nr, std::mem::size_of::<R>(), d.m, d.k, d.n);
    // The scratch one task holds at most: B packed for all of k over one column block,
    // A for one row block and k-block, the row block's partial sums and a row panel.
    let ldc = bl.nc.min(d.n.div_ceil(kern.nr) * kern.nr);
    let per_task = [
        if d.m <= bl.mc {
            bl.kc.min(d.k).checked_mul(ldc)
        } else {
            d.k.checked_mul(ldc)
        },
        bl.mc.checked_mul(bl.kc.min(d.k)),
        bl.mc.div_ceil(kern.mr).checked_mul(kern.mr * ldc),
        Some(kern.mr * ldc),
    ]
    .into_iter()
    .try_fold(0usize, |acc, x| acc.checked_add(x?))
    .and_then(|v| v.checked_mul(std::mem::size_of::<R>()));
    let fmas = d
        .batch
        .saturating_mul(d.m)
        .saturating_mul(d.n)
        .saturating_mul(d.k.max(1));
    let threads = if fmas < SERIAL_FMAS {
        1
    } else {
        rayon::current_num_threads().max(1)
    };
    let oom = |requested: usize| Error::OutOfMemory {
        requested,
        available: usize::try_from(crate::available_memory()).unwrap_or(usize::MAX),
    };
    let need = per_task
        .and_then(|b| b.checked_mul(threads))
        .ok_or_else(|| oom(usize::MAX))?;
    // Reading the host's memory figures costs a few microseconds: only for big scratch
    // (a small one is most often already held by the threads' slots).
    if need > SCRATCH_CHECK_BYTES && need as u64 > crate::available_memory() {
        return Err(oom(need));
    }
    let e = Engine {
        d,
        kern,
        bl,
        a,
        b,
        out,
        failed: AtomicBool::new(false),
    };
    let (mp, np) = (d.m.div_ceil(kern.mr), d.n.div_ceil(kern.nr));
    if threads == 1 {
        for bi in 0..d.batch {
            e.columns(bi, (0, d.m), (0, d.n));
        }
    } else if d.batch >= threads || fmas / d.batch < SERIAL_FMAS {
        // Many products: one per task.
        (0..d.batch)
            .into_par_iter()
            .for_each(|bi| e.columns(bi, (0, d.m), (0, d.n)));
    } else {
        let parts = threads.div_ceil(d.batch).max(1);
        // Split by rows (B packed once, shared) when there are several row blocks;
        // with one row block, by columns: each task packs its own B blocks, which
        // stay in its L2, and the small A again.
        if mp >= 4 * parts && d.m > bl.mc {
            for bi in 0..d.batch {
                e.rows_parallel(bi, parts);
            }
        } else {
            let parts = parts.min(np);
            (0..d.batch * parts).into_par_iter().for_each(|i| {
                let (bi, p) = (i / parts, i % parts);
                let (c0, c1) = (
                    p * np / parts * kern.nr,
                    ((p + 1) * np / parts * kern.nr).min(d.n),
                );
                e.columns(bi, (0, d.m), (c0, c1));
            });
        }
    }
    if e.failed.load(Ordering::Relaxed) {
        return Err(oom(need));
    }
    Ok(())
}

/// One product's operands, tile and blocking.
struct Engine<'a, R, A, B, S> {
    d: Dims,
    kern: Kernel<R>,
    bl: Blocking,
    a: &'a A,
    b: &'a B,
    out: &'a S,
    /// Set when a task could not get its scratch (it then stops; `run` errs).
    failed: AtomicBool,
}

impl<R: GemmReal, A: PackA<R>, B: PackB<R>, S: Sink<R>> Engine<'_, R, A, B, S> {
    /// `len` scratch values, or `None` (and the engine marked failed).
    fn scratch(&self, len: usize) -> Option<Scratch<R>> {
        let s = Scratch::try_new(len);
        if s.is_none() {
            self.failed.store(true, Ordering::Relaxed);
        }
        s
    }

    /// Packs B's columns `c0..c0+cols` for all of `k` into `dst` (k-block `t0` at
    /// `t0 * ldb`, `ldb = cols` rounded up to panels).
    #[inline(always)]
    fn pack_b_all(&self, bi: usize, c0: usize, cols: usize, dst: &mut [R]) {
        let (k, kc, nr) = (self.d.k, self.bl.kc, self.kern.nr);
        let ldb = cols.div_ceil(nr) * nr;
        let mut t0 = 0;
        while t0 < k {
            let kcb = kc.min(k - t0);
            self.b.pack_b(
                bi,
                t0,
                kcb,
                c0,
                cols,
                nr,
                &mut dst[t0 * ldb..(t0 + kcb) * ldb],
            );
            t0 += kcb;
        }
    }

    /// Rows `r0..r1` of the column block `c0..c0+cols` whose B is packed for all of k
    /// in `bp`, or, with `None` (a single row block, so B is used once), packed here
    /// one k-block at a time: the scratch is then bounded by the blocking, not by k.
    #[inline(always)]
    fn row_blocks(
        &self,
        bi: usize,
        (r0, r1): (usize, usize),
        (c0, cols): (usize, usize),
        bp: Option<&[R]>,
    ) {
        let (k, kc, mc) = (self.d.k, self.bl.kc, self.bl.mc);
        let (mr, nr) = (self.kern.mr, self.kern.nr);
        let np = cols.div_ceil(nr);
        let ldc = np * nr;
        let zero = R::ZERO;
        // Partial sums, tile-major: tile (ir, jr) is the mr × nr block at
        // (jr*mp + ir)*mr*nr, so consecutive kernel calls touch consecutive memory.
        let mpmax = mc.min(r1 - r0).div_ceil(mr);
        let (Some(mut ap), Some(mut cbuf), Some(mut rowbuf)) = (
            self.scratch(mc * kc.min(k)),
            self.scratch(mpmax * mr * ldc),
            self.scratch(mr * ldc),
        ) else {
            return;
        };
        let mut bk = None;
        if bp.is_none() {
            match self.scratch(kc.min(k) * ldc) {
                Some(b) => bk = Some(b),
                None => return,
            }
        }
        // Row offsets of B in place (`InPlace::Rows`), one k-block's worth.
        // (Allocated only for operands that have the form.)
        let mut offs: Vec<usize> = Vec::new();
        let mut ic = r0;
        while ic < r1 {
            let mcb = mc.min(r1 - ic);
            let mp = mcb.div_ceil(mr);
            if k == 0 {
                cbuf[..mp * mr * ldc].fill(zero);
            }
            let mut t0 = 0;
            while t0 < k {
                let kcb = kc.min(k - t0);
                self.a
                    .pack_a(bi, ic, mcb, t0, kcb, mr, &mut ap[..mp * mr * kcb]);
                // Few row tiles and B in place: full panels are read where they are,
                // only a partial last panel is packed.
                let mut direct = InPlace::No;
                if bp.is_none() && mp <= DIRECT_B_MAX_TILES {
                    if let Some((p, ld)) = self.b.direct(bi, t0, c0) {
                        direct = InPlace::Strided(p, ld);
                    } else if B::DIRECT_ROWS {
                        offs.resize(kcb, 0);
                        if let Some(p) = self.b.direct_rows(bi, t0, c0, &mut offs[..kcb]) {
                            direct = InPlace::Rows(p);
                        }
                    }
                }
                let full = match direct {
                    InPlace::No => 0,
                    _ => cols / nr,
                };
                let bblock: &[R] = if let Some(bp) = bp {
                    &bp[t0 * ldc..(t0 + kcb) * ldc]
                } else if let Some(bk) = bk.as_mut() {
                    // The layout of k-block t0 of `pack_b_all` (from panel `full` on).
                    let skip = full * nr;
                    if skip < cols {
                        self.b.pack_b(
                            bi,
                            t0,
                            kcb,
                            c0 + skip,
                            cols - skip,
                            nr,
                            &mut bk[skip * kcb..kcb * ldc],
                        );
                    }
                    &bk[..kcb * ldc]
                } else {
                    return;
                };
                for jr in 0..np {
                    let (bptr, brows) = match direct {
                        InPlace::Strided(p, ld) if jr < full => {
                            // SAFETY: `direct` is valid for b(t, c), t0 <= t < k,
                            // c0 <= c < n; panel jr < full covers columns
                            // c0 + jr*nr .. c0 + (jr+1)*nr <= c0 + cols <= n.
                            (unsafe { p.add(jr * nr) }, BRows::Stride(ld))
                        }
                        InPlace::Rows(p) if jr < full => {
                            // SAFETY: as above, each row at its offset from `p`
                            // (`direct_rows`' contract).
                            (unsafe { p.add(jr * nr) }, BRows::Offsets(offs.as_ptr()))
                        }
                        _ => (
                            bblock[jr * kcb * nr..(jr + 1) * kcb * nr].as_ptr(),
                            BRows::Stride(nr),
                        ),
                    };
                    for ir in 0..mp {
                        let apanel = &ap[ir * mr * kcb..(ir + 1) * mr * kcb];
                        let tile = &mut cbuf[(jr * mp + ir) * mr * nr..][..mr * nr];
                        // SAFETY: the A panel holds kcb*mr values and the tile mr*nr (both
                        // sliced just above, so in bounds); B holds kcb rows of nr values
                        // at stride ldb (a packed panel sliced above, or B in place: rows
                        // t0..t0+kcb <= k) or at the kcb offsets filled in `offs` for
                        // this k-block; the tile is borrowed exclusively for the call.
                        unsafe {
                            self.kern.run(
                                kcb,
                                apanel.as_ptr(),
                                bptr,
                                brows,
                                tile.as_mut_ptr(),
                                nr,
                                t0 > 0,
                            )
                        };
                    }
                }
                t0 += kcb;
            }
            // Finished: hand the row panels over row-major.
            for ir in 0..mp {
                let rn = mr.min(mcb - ir * mr);
                for jr in 0..np {
                    let tile = &cbuf[(jr * mp + ir) * mr * nr..][..mr * nr];
                    for i in 0..rn {
                        rowbuf[i * ldc + jr * nr..i * ldc + (jr + 1) * nr]
                            .copy_from_slice(&tile[i * nr..(i + 1) * nr]);
                    }
                }
                self.out
                    .finish(bi, ic + ir * mr, c0, rn, cols, &rowbuf, ldc);
            }
            ic += mcb;
        }
    }

    /// Rows `r0..r1`, columns `c0..c1` of product `bi`, on this thread (packing its own
    /// B column blocks).
    fn columns(&self, bi: usize, (r0, r1): (usize, usize), (c0, c1): (usize, usize)) {
        dispatch(
            #[inline(always)]
            || {
                let (k, nc, nr) = (self.d.k, self.bl.nc, self.kern.nr);
                let ncap = nc.min((c1 - c0).div_ceil(nr) * nr);
                // One row block: B is used once, so it is packed per k-block inside.
                let mut bp = None;
                if r1 - r0 > self.bl.mc {
                    match self.scratch(k * ncap) {
                        Some(b) => bp = Some(b),
                        None => return,
                    }
                }
                let mut jc = c0;
                while jc < c1 {
                    let cols = nc.min(c1 - jc);
                    let ldb = cols.div_ceil(nr) * nr;
                    match &mut bp {
                        Some(bp) => {
                            self.pack_b_all(bi, jc, cols, &mut bp[..k * ldb]);
                            self.row_blocks(bi, (r0, r1), (jc, cols), Some(&bp[..k * ldb]));
                        }
                        None => self.row_blocks(bi, (r0, r1), (jc, cols), None),
                    }
                    jc += cols;
                }
            },
        )
    }

    /// Product `bi` split by rows into `parts` tasks; each column block's B is packed
    /// once, in parallel, and shared.
    fn rows_parallel(&self, bi: usize, parts: usize) {
        let (m, n, k) = (self.d.m, self.d.n, self.d.k);
        let (mr, nr, nc) = (self.kern.mr, self.kern.nr, self.bl.nc);
        let mp = m.div_ceil(mr);
        let Some(mut bp) = self.scratch(k * nc.min(n.div_ceil(nr) * nr)) else {
            return;
        };
        let mut jc = 0;
        while jc < n {
            let cols = nc.min(n - jc);
            let np = cols.div_ceil(nr);
            let ldb = np * nr;
            // Pack in parallel: within a k-block, a run of whole panels is itself the
            // packed layout of its columns, so (k-block, panel group) pieces are
            // disjoint slices packed independently.
            {
                let kc = self.bl.kc;
                let mut pieces: Vec<(usize, usize, usize, usize, &mut [R])> = Vec::new();
                let mut rest = &mut bp[..k * ldb];
                let mut t0 = 0;
                while t0 < k {
                    let kcb = kc.min(k - t0);
                    let (mut block, tail) = std::mem::take(&mut rest).split_at_mut(kcb * ldb);
                    rest = tail;
                    let mut done = 0;
                    for p in 0..parts {
                        let p1 = (p + 1) * np / parts;
                        if p1 > done {
                            let (piece, tail) =
                                std::mem::take(&mut block).split_at_mut((p1 - done) * kcb * nr);
                            block = tail;
                            pieces.push((t0, kcb, done, p1, piece));
                            done = p1;
                        }
                    }
                    t0 += kcb;
                }
                pieces.into_par_iter().for_each(|(t0, kcb, p0, p1, dst)| {
                    let c = (p1 * nr).min(cols) - p0 * nr;
                    dispatch(
                        #[inline(always)]
                        || self.b.pack_b(bi, t0, kcb, jc + p0 * nr, c, nr, dst),
                    )
                });
            }
            let bps = &bp[..k * ldb];
            (0..parts).into_par_iter().for_each(|p| {
                let (r0, r1) = (p * mp / parts * mr, ((p + 1) * mp / parts * mr).min(m));
                if r1 > r0 {
                    dispatch(
                        #[inline(always)]
                        || self.row_blocks(bi, (r0, r1), (jc, cols), Some(bps)),
                    );
                }
            });
            jc += cols;
        }
    }
}
