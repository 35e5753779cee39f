//! The scalar rules of `pad` (ONNX Pad): how an output coordinate along one axis maps
//! to an input coordinate under each mode. Shared by the CPU kernel, the reference
//! oracle and the emulator's content check; restated in kernels-cuda/elements.cu.
//!
//! Per axis the input is first cropped by the negative pads (onnxruntime's order: crop,
//! then pad), leaving `len` elements starting at `start`; then `before` elements are
//! added in front and the rest of the output behind. Output coordinate `c` sits at
//! `t = c - before` in the cropped input:
//!
//! - `Constant`: `t` inside `[0, len)` reads the input, anything else is the value;
//! - `Edge`: `t` clamped to `[0, len - 1]`;
//! - `Reflect`: reflected about the ends without repeating them (numpy's `reflect`,
//!   period `2 (len - 1)`, so pads longer than the axis reflect again; `len = 1` repeats
//!   the one element);
//! - `Wrap`: `t mod len` (numpy's `wrap`).
//!
//! Modes other than `Constant` need `len >= 1` where anything is padded.

/// The padding mode of ONNX Pad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PadMode {
    /// A constant value.
    Constant,
    /// Reflection without repeating the edge (numpy `reflect`).
    Reflect,
    /// The edge element repeated.
    Edge,
    /// Periodic (numpy `wrap`).
    Wrap,
}

impl PadMode {
    /// Every mode, in code order.
    pub const ALL: [PadMode; 4] = [
        PadMode::Constant,
        PadMode::Reflect,
        PadMode::Edge,
        PadMode::Wrap,
    ];

    /// The kernel code (`0..=3`).
    pub const fn code(self) -> i64 {
        self as i64
    }

    /// The mode of kernel code `c`.
    pub fn from_code(c: i64) -> Option<PadMode> {
        usize::try_from(c)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// ONNX's attribute value: `constant`, `reflect`, `edge`, `wrap`.
    pub const fn name(self) -> &'static str {
        match self {
            PadMode::Constant => "constant",
            PadMode::Reflect => "reflect",
            PadMode::Edge => "edge",
            PadMode::Wrap => "wrap",
        }
    }

    /// The mode named `s` (ONNX's attribute value).
    pub fn parse(s: &str) -> Option<PadMode> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }

    /// The cropped-input coordinate output coordinate `t` (already `c - before`) reads,
    /// or `None` for the constant value. `len >= 1` unless the mode is `Constant`.
    #[inline(always)]
    pub fn source(self, t: i64, len: i64) -> Option<i64> {
        if (0..len).contains(&t) {
            return Some(t);
        }
        match self {
            PadMode::Constant => None,
            PadMode::Edge => Some(t.clamp(0, len - 1)),
            PadMode::Wrap => Some(t.rem_euclid(len)),
            PadMode::Reflect => {
                if len == 1 {
                    return Some(0);
                }
                let p = 2 * (len - 1);
                let m = t.rem_euclid(p);
                Some(if m < len { m } else { p - m })
            }
        }
    }
}
