//! The parser's cursor over the tokens (peeking, expecting, numbers, error
//! positions) and the scope state of a function body.

use std::collections::HashMap;

use crate::ast::*;
use crate::error::ParseError;
use crate::lex::{Tok, Token};

pub(super) type PResult<T> = Result<T, ParseError>;

pub(super) struct Parser<'a> {
    pub(super) toks: Vec<Token<'a>>,
    pub(super) pos: usize,
    pub(super) src: &'a str,
}

/// One `{ }` scope of a body.
#[derive(Default)]
pub(super) struct Scope {
    pub(super) names: HashMap<String, Sym>,
    /// Register ranges: prefix to (range id, count, type).
    pub(super) ranges: HashMap<String, (u32, u32, Ty)>,
}

pub(super) struct FuncCtx {
    pub(super) scopes: Vec<Scope>,
    pub(super) range_regs: HashMap<(u32, u32), u32>,
    pub(super) next_range: u32,
}

impl<'a> Parser<'a> {
    pub(super) fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).map(|t| t.tok)
    }

    pub(super) fn peek_at(&self, k: usize) -> Option<Tok<'a>> {
        self.toks.get(self.pos + k).map(|t| t.tok)
    }

    pub(super) fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map_or(0, |t| t.line)
    }

    pub(super) fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        Err(ParseError::new(self.line(), msg))
    }

    pub(super) fn next(&mut self) -> PResult<Tok<'a>> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.tok)
            }
            None => self.err("unexpected end of input"),
        }
    }

    pub(super) fn eat_punct(&mut self, c: u8) -> bool {
        if self.peek() == Some(Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn expect_punct(&mut self, c: u8) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.err(format!(
                "expected `{}`, found {}",
                char::from(c),
                self.describe()
            ))
        }
    }

    pub(super) fn describe(&self) -> String {
        match self.peek() {
            None => "end of input".to_string(),
            Some(Tok::Ident(s)) | Some(Tok::Dir(s)) => format!("`{s}`"),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::Punct(c)) => format!("`{}`", char::from(c)),
            Some(t) => format!("{t:?}"),
        }
    }

    pub(super) fn ident(&mut self) -> PResult<&'a str> {
        match self.next()? {
            Tok::Ident(s) => Ok(s),
            _ => {
                self.pos -= 1;
                self.err(format!("expected a name, found {}", self.describe()))
            }
        }
    }

    pub(super) fn int(&mut self) -> PResult<u64> {
        let neg = self.eat_punct(b'-');
        match self.next()? {
            Tok::Int(v) => Ok(if neg { v.wrapping_neg() } else { v }),
            _ => {
                self.pos -= 1;
                self.err(format!("expected an integer, found {}", self.describe()))
            }
        }
    }

    pub(super) fn small_int(&mut self, what: &str, max: u64) -> PResult<u32> {
        let v = self.int()?;
        if v > max {
            return self.err(format!("{what} {v} is too large"));
        }
        Ok(v as u32)
    }

    /// Skips the rest of the current line (for `.loc`, `.file` and similar).
    pub(super) fn skip_line(&mut self) {
        let line = self.line();
        while let Some(t) = self.toks.get(self.pos) {
            if t.line != line {
                break;
            }
            self.pos += 1;
        }
    }
}
