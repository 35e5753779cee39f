//! Bit-field and permutation semantics: `bfe`, `bfi`, `bfind`, `prmt`, `lop3`.

use crate::program::*;

use super::common::*;

pub(super) fn bfe(w: W, signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let msb = w.bits() - 1;
    let pos = (b & 0xFF) as u32;
    let len = (c & 0xFF) as u32;
    let a = zx(a, w);
    let sbit = if !signed || len == 0 {
        0
    } else {
        (a >> (pos + len - 1).min(msb)) & 1
    };
    let mut d = 0u64;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    d
}

pub(super) fn bfi(w: W, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let msb = w.bits() - 1;
    let pos = (c & 0xFF) as u32;
    let len = (d & 0xFF) as u32;
    let mut f = zx(b, w);
    let mut i = 0;
    while i < len && pos + i <= msb {
        let bit = (a >> i) & 1;
        f = (f & !(1u64 << (pos + i))) | (bit << (pos + i));
        i += 1;
    }
    f
}

pub(super) fn bfind(w: W, signed: bool, shiftamt: bool, a: u64) -> u64 {
    let msb = w.bits() - 1;
    let mut a = zx(a, w);
    if signed && (a >> msb) & 1 == 1 {
        a = zx(!a, w);
    }
    if a == 0 {
        return 0xFFFF_FFFF;
    }
    let d = 63 - a.leading_zeros();
    u64::from(if shiftamt { msb - d } else { d })
}

pub(super) fn prmt(mode: u8, a: u64, b: u64, c: u64) -> u64 {
    let tmp64 = (u64::from(b as u32) << 32) | u64::from(a as u32);
    let byte = |i: u64| (tmp64 >> (8 * (i & 7))) & 0xFF;
    let c = c as u32;
    let mut d = 0u64;
    if mode == 0 {
        for k in 0..4 {
            let sel = u64::from((c >> (4 * k)) & 0xF);
            let v = byte(sel & 7);
            let v = if sel & 8 != 0 {
                if v & 0x80 != 0 { 0xFF } else { 0 }
            } else {
                v
            };
            d |= v << (8 * k);
        }
        return d;
    }
    let s = u64::from(c & 3);
    let sel: [u64; 4] = match mode {
        // f4e: forward 4 extract
        1 => [0u64, 1, 2, 3].map(|k| s + k),
        // b4e: backward 4 extract
        2 => [0u64, 1, 2, 3].map(|k| s.wrapping_sub(k) & 7),
        // rc8: replicate 8
        3 => [s; 4],
        // ecl: edge clamp left
        4 => [0u64, 1, 2, 3].map(|k| k.max(s)),
        // ecr: edge clamp right
        5 => [0u64, 1, 2, 3].map(|k| k.min(s)),
        // rc16: replicate 16
        _ => {
            let h = s & 1;
            [2 * h, 2 * h + 1, 2 * h, 2 * h + 1]
        }
    };
    for (k, sv) in sel.iter().enumerate() {
        d |= byte(*sv & 7) << (8 * k);
    }
    d
}

pub(super) fn lop3(a: u64, b: u64, c: u64, lut: u64) -> u64 {
    let mut r = 0u64;
    for i in 0..8u64 {
        if (lut >> i) & 1 == 1 {
            let ta = if i & 4 != 0 { a } else { !a };
            let tb = if i & 2 != 0 { b } else { !b };
            let tc = if i & 1 != 0 { c } else { !c };
            r |= ta & tb & tc;
        }
    }
    r & 0xFFFF_FFFF
}
