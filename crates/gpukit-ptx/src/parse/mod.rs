//! The hand-written PTX parser: tokens to [`ModuleAst`]. It covers the grammar NVRTC
//! emits (module directives, `.entry`/`.func` with parameter lists and performance
//! directives, variables with initialisers, scoped register declarations, labels,
//! guarded instructions with every operand form). It never panics and every loop
//! consumes input, so malformed text is an error, never a hang.
//!
//! Files: `cursor` (the token cursor and scope state), `decl` (module-level
//! declarations and function headers), `body` (function bodies, instructions and
//! operands).

mod body;
mod cursor;
mod decl;

use crate::ast::ModuleAst;
use crate::lex::lex;
use cursor::{PResult, Parser};

/// Parses a whole module.
pub(crate) fn parse_module(src: &str) -> PResult<ModuleAst> {
    let toks = lex(src)?;
    let mut p = Parser { toks, pos: 0, src };
    p.module()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Operand, Special};

    const SMALL: &str = r#"
.version 8.8
.target sm_80
.address_size 64

.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<3>;
	.shared .align 4 .b8 sm[64];

	ld.param.u64 	%rd1, [k_param_0];
	mov.u32 	%r1, %tid.x;
	setp.ge.u32 	%p1|%p2, %r1, 7;
	@%p1 bra 	$L__BB0_2;
	{ .reg .b16 lo, hi;
	  mov.b32 {lo, hi}, %r1; }
$L__BB0_2:
	ret;
}
"#;

    #[test]
    fn parses_a_small_module() {
        let m = parse_module(SMALL).unwrap();
        assert_eq!(m.globals.len(), 1);
        assert_eq!(
            m.globals[0].init.as_deref(),
            Some(&[1u8, 2, 3, 4, 5, 6, 7, 8][..])
        );
        let f = &m.funcs[0];
        assert!(f.entry);
        assert_eq!(f.params.len(), 2);
        assert_eq!(f.maxntid, Some([256, 1, 1]));
        assert_eq!(f.insts.len(), 6);
        assert_eq!(f.labels["$L__BB0_2"], 5);
        assert_eq!(f.insts[3].guard.map(|g| g.negated), Some(false));
        assert_eq!(f.insts[2].text, "setp.ge.u32 %p1|%p2, %r1, 7");
        assert!(matches!(
            f.insts[1].operands[1],
            Operand::Special(Special::Tid(0))
        ));
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            ".entry k( { ret; }",
            ".entry k() { add.s32 %r1, ; }",
            ".entry k() { .reg .b32 %r<99999999999>; }",
            ".global .b8 huge[99999999999];",
            ".entry k() {",
            ".entry k() { @%nope bra L; }",
        ] {
            assert!(parse_module(bad).is_err(), "{bad}");
        }
    }
}
