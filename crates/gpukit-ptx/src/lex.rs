//! The PTX lexer: text to tokens with line numbers. Never panics; every byte it cannot
//! place is a [`ParseError`].

use crate::error::ParseError;

/// One token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Tok<'a> {
    /// An identifier: `add`, `%r12`, `$L__BB0_3`, `_Z3fooi`, `%tid` (no dots).
    Ident(&'a str),
    /// A directive or modifier, dot included: `.reg`, `.f32`, `.shared::cta`.
    Dir(&'a str),
    /// An integer literal (its 64-bit pattern; a leading `-` is a separate token).
    Int(u64),
    /// A single-precision hexadecimal literal `0fXXXXXXXX` (the bits).
    F32(u32),
    /// A double-precision hexadecimal literal `0dXXXXXXXXXXXXXXXX` (the bits).
    F64(u64),
    /// A decimal floating-point literal (`1.5`, `2e3`).
    Float(f64),
    /// A string literal, quotes removed.
    Str(&'a str),
    /// Punctuation: `, ; : [ ] { } ( ) < > + - ! @ | =`.
    Punct(u8),
}

/// A token and its 1-based line, and its byte range in the source.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub line: u32,
    pub start: usize,
    pub end: usize,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// Splits `src` into tokens.
pub(crate) fn lex(src: &str) -> Result<Vec<Token<'_>>, ParseError> {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 4);
    let mut i = 0usize;
    let mut line = 1u32;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line = line.saturating_add(1);
                i += 1;
            }
            b' ' | b'\t' | b'\r' | 0x0c | 0x0b => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start_line = line;
                i += 2;
                loop {
                    if i + 1 >= b.len() {
                        return Err(ParseError::new(start_line, "unterminated /* comment"));
                    }
                    if b[i] == b'*' && b[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    if b[i] == b'\n' {
                        line = line.saturating_add(1);
                    }
                    i += 1;
                }
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += 1;
                }
                if i >= b.len() || b[i] != b'"' {
                    return Err(ParseError::new(line, "unterminated string literal"));
                }
                let s = src
                    .get(start..i)
                    .ok_or_else(|| ParseError::new(line, "invalid string literal"))?;
                i += 1;
                out.push(Token {
                    tok: Tok::Str(s),
                    line,
                    start: start - 1,
                    end: i,
                });
            }
            b'.' if b.get(i + 1).is_some_and(|&n| is_ident_char(n)) => {
                let start = i;
                i += 1;
                loop {
                    while i < b.len() && is_ident_char(b[i]) {
                        i += 1;
                    }
                    // `.shared::cta`, `.L2::cache_hint`
                    if i + 2 < b.len()
                        && b[i] == b':'
                        && b[i + 1] == b':'
                        && is_ident_char(b[i + 2])
                    {
                        i += 2;
                        continue;
                    }
                    break;
                }
                let s = src
                    .get(start..i)
                    .ok_or_else(|| ParseError::new(line, "invalid directive"))?;
                out.push(Token {
                    tok: Tok::Dir(s),
                    line,
                    start,
                    end: i,
                });
            }
            c if c.is_ascii_digit() => {
                let start = i;
                let (tok, len) = lex_number(&b[i..])
                    .ok_or_else(|| ParseError::new(line, "malformed numeric literal"))?;
                i += len;
                if i < b.len() && is_ident_char(b[i]) {
                    return Err(ParseError::new(line, "malformed numeric literal"));
                }
                out.push(Token {
                    tok,
                    line,
                    start,
                    end: i,
                });
            }
            c if is_ident_start(c) => {
                let start = i;
                i += 1;
                while i < b.len() && is_ident_char(b[i]) {
                    i += 1;
                }
                let s = src
                    .get(start..i)
                    .ok_or_else(|| ParseError::new(line, "invalid identifier"))?;
                out.push(Token {
                    tok: Tok::Ident(s),
                    line,
                    start,
                    end: i,
                });
            }
            b',' | b';' | b':' | b'[' | b']' | b'{' | b'}' | b'(' | b')' | b'<' | b'>' | b'+'
            | b'-' | b'!' | b'@' | b'|' | b'=' => {
                out.push(Token {
                    tok: Tok::Punct(c),
                    line,
                    start: i,
                    end: i + 1,
                });
                i += 1;
            }
            _ => {
                return Err(ParseError::new(
                    line,
                    format!("unexpected character {:?}", char::from(c)),
                ));
            }
        }
    }
    Ok(out)
}

fn hex_digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_hexdigit()).count()
}

fn parse_hex(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = char::from(c).to_digit(16)?;
        v = (v << 4) | u64::from(d);
    }
    Some(v)
}

/// Lexes a numeric literal at the start of `b`: the token and its length.
fn lex_number(b: &[u8]) -> Option<(Tok<'static>, usize)> {
    let first = *b.first()?;
    let second = b.get(1).copied().unwrap_or(0);
    if first == b'0' && (second == b'f' || second == b'F') {
        let n = hex_digits(&b[2..]);
        if n != 8 {
            return None;
        }
        let v = parse_hex(&b[2..10])?;
        return Some((Tok::F32(v as u32), 10));
    }
    if first == b'0' && (second == b'd' || second == b'D') {
        let n = hex_digits(&b[2..]);
        if n != 16 {
            return None;
        }
        let v = parse_hex(&b[2..18])?;
        return Some((Tok::F64(v), 18));
    }
    if first == b'0' && (second == b'x' || second == b'X') {
        let n = hex_digits(&b[2..]);
        let v = parse_hex(&b[2..2 + n])?;
        let mut len = 2 + n;
        if matches!(b.get(len), Some(b'U') | Some(b'u')) {
            len += 1;
        }
        return Some((Tok::Int(v), len));
    }
    if first == b'0' && (second == b'b' || second == b'B') {
        let n = b[2..]
            .iter()
            .take_while(|c| **c == b'0' || **c == b'1')
            .count();
        if n == 0 || n > 64 {
            return None;
        }
        let mut v = 0u64;
        for &c in &b[2..2 + n] {
            v = (v << 1) | u64::from(c - b'0');
        }
        let mut len = 2 + n;
        if matches!(b.get(len), Some(b'U') | Some(b'u')) {
            len += 1;
        }
        return Some((Tok::Int(v), len));
    }
    let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    // Decimal float: digits '.' digits [e[+-]digits] or digits e[+-]digits.
    let mut len = n;
    let mut is_float = false;
    if b.get(len) == Some(&b'.') && b.get(len + 1).is_some_and(|c| c.is_ascii_digit()) {
        is_float = true;
        len += 1;
        len += b[len..].iter().take_while(|c| c.is_ascii_digit()).count();
    }
    if matches!(b.get(len), Some(b'e') | Some(b'E')) {
        let mut j = len + 1;
        if matches!(b.get(j), Some(b'+') | Some(b'-')) {
            j += 1;
        }
        let e = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        if e > 0 {
            is_float = true;
            len = j + e;
        }
    }
    if is_float {
        let s = std::str::from_utf8(&b[..len]).ok()?;
        let v: f64 = s.parse().ok()?;
        return Some((Tok::Float(v), len));
    }
    let digits = &b[..n];
    let v = if first == b'0' && n > 1 {
        // Octal.
        let mut v = 0u64;
        for &c in &digits[1..] {
            let d = u64::from(c.checked_sub(b'0')?);
            if d > 7 {
                return None;
            }
            v = v.checked_mul(8)?.checked_add(d)?;
        }
        v
    } else {
        let mut v = 0u64;
        for &c in digits {
            v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
        }
        v
    };
    let mut len = n;
    if matches!(b.get(len), Some(b'U') | Some(b'u')) {
        len += 1;
    }
    Some((Tok::Int(v), len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_an_instruction() {
        let t = lex("@!%p1 ld.global.nc.v2.f32 {%f1, %f2}, [%rd3+-8]; // c\n").unwrap();
        let kinds: Vec<Tok<'_>> = t.iter().map(|t| t.tok).collect();
        assert_eq!(kinds[0], Tok::Punct(b'@'));
        assert_eq!(kinds[1], Tok::Punct(b'!'));
        assert_eq!(kinds[2], Tok::Ident("%p1"));
        assert_eq!(kinds[3], Tok::Ident("ld"));
        assert_eq!(kinds[4], Tok::Dir(".global"));
        assert!(kinds.contains(&Tok::Int(8)));
    }

    #[test]
    fn lexes_literals() {
        let t = lex("0f3F800000 0d3FF0000000000000 0x10 017 1.5 42U").unwrap();
        let kinds: Vec<Tok<'_>> = t.iter().map(|t| t.tok).collect();
        assert_eq!(
            kinds,
            vec![
                Tok::F32(0x3F80_0000),
                Tok::F64(0x3FF0_0000_0000_0000),
                Tok::Int(16),
                Tok::Int(15),
                Tok::Float(1.5),
                Tok::Int(42)
            ]
        );
    }

    #[test]
    fn rejects_garbage() {
        assert!(lex("add.s32 %r1, %r2, #3;").is_err());
        assert!(lex("0f3F80").is_err());
        assert!(lex("/* open").is_err());
        assert!(lex("\"open").is_err());
        assert!(lex("99999999999999999999999").is_err());
    }
}
