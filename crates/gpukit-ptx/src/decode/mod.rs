//! Linking and decoding: one kernel and the device functions it calls become a
//! [`Program`](crate::program::Program). Every instruction is checked here, so an
//! instruction, type or modifier the emulator does not implement is a
//! [`ParseError`](crate::ParseError) naming it and its line.
//!
//! One file per instruction family; [`FnDecoder::decode`] dispatches on the opcode:
//!
//! * `types`: shared types (linker state, layouts, the modifier cursor, the decoder);
//! * `link`: [`link_kernel`], layout of frames, shared memory and parameters;
//! * `operands`: operands, addresses, modifier and operand-count checks;
//! * `regalloc`: register compaction (registers whose live ranges do not overlap share
//!   a slot);
//! * `arith`, `bits`, `compare`, `convert`, `memory`, `warp`, `control`: the families.

mod arith;
mod bits;
mod compare;
mod control;
mod convert;
mod link;
mod memory;
mod operands;
mod regalloc;
mod types;
mod warp;

pub(crate) use link::link_kernel;
pub(crate) use types::GlobalVar;

use crate::ast::InstAst;
use crate::program::Op;
use types::{FnDecoder, Mods, PResult};

impl FnDecoder<'_, '_> {
    fn decode(&mut self, ia: &InstAst) -> PResult<Op> {
        let mut m = Mods::new(&ia.mods);
        let op = match ia.opcode.as_str() {
            "add" | "sub" => self.add_sub(ia, &mut m)?,
            "addc" | "subc" => self.addc(ia, &mut m)?,
            "mul" => self.mul(ia, &mut m)?,
            "mad" => self.mad(ia, &mut m)?,
            "madc" => self.madc(ia, &mut m)?,
            "mul24" | "mad24" => self.mul24(ia, &mut m)?,
            "fma" => self.fma(ia, &mut m)?,
            "div" => self.div(ia, &mut m)?,
            "rem" => self.rem(ia, &mut m)?,
            "abs" | "neg" => self.abs_neg(ia, &mut m)?,
            "min" | "max" => self.min_max(ia, &mut m)?,
            "sad" => self.sad(ia, &mut m)?,
            "sqrt" | "rcp" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
                self.unary_float(ia, &mut m)?
            }
            "copysign" => self.copysign(ia, &mut m)?,
            "testp" => self.testp(ia, &mut m)?,
            "and" | "or" | "xor" | "not" | "cnot" => self.logic(ia, &mut m)?,
            "shl" | "shr" => self.shift(ia, &mut m)?,
            "popc" | "clz" | "brev" => self.bit_count(ia, &mut m)?,
            "bfind" => self.bfind(ia, &mut m)?,
            "bfe" => self.bfe(ia, &mut m)?,
            "bfi" => self.bfi(ia, &mut m)?,
            "prmt" => self.prmt(ia, &mut m)?,
            "lop3" => self.lop3(ia, &mut m)?,
            "shf" => self.shf(ia, &mut m)?,
            "setp" => self.setp(ia, &mut m)?,
            "set" => self.set(ia, &mut m)?,
            "selp" => self.selp(ia, &mut m)?,
            "mov" => self.mov(ia, &mut m)?,
            "cvt" => self.cvt(ia, &mut m)?,
            "cvta" => self.cvta(ia, &mut m)?,
            "isspacep" => self.isspacep(ia, &mut m)?,
            "ld" | "ldu" => self.ld(ia, &mut m)?,
            "st" => self.st(ia, &mut m)?,
            "atom" | "red" => self.atom(ia, &mut m)?,
            "cp" => self.cp(ia, &mut m)?,
            "prefetch" | "prefetchu" => Self::prefetch(&mut m),
            "membar" => Self::membar(&mut m),
            "fence" => Self::fence(ia, &mut m),
            "nanosleep" | "pmevent" | "discard" | "applypriority" | "griddepcontrol" => {
                m.used.iter_mut().for_each(|u| *u = true);
                Op::Nop
            }
            "bar" | "barrier" => self.bar(ia, &mut m)?,
            "shfl" => self.shfl(ia, &mut m)?,
            "vote" => self.vote(ia, &mut m)?,
            "redux" => self.redux(ia, &mut m)?,
            "match" => self.match_sync(ia, &mut m)?,
            "activemask" => self.activemask(ia, &mut m)?,
            "createpolicy" => self.createpolicy(ia, &mut m)?,
            "bra" => self.bra(ia, &mut m)?,
            "brx" => self.brx(ia, &mut m)?,
            "call" => self.call(ia, &mut m)?,
            "ret" => self.ret(ia, &mut m)?,
            "exit" => self.exit(ia)?,
            "trap" => Op::Trap,
            "brkpt" => Op::Brkpt,
            _ => return self.unsupported(ia),
        };
        self.check_mods(ia, &m)?;
        Ok(op)
    }
}
