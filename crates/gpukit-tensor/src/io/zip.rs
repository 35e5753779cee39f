//! The part of the zip format that `.npz` files use: the central directory (with the
//! zip64 extensions numpy writes for large arrays), stored and deflated members, and
//! the CRC-32 check. Reading only.

use std::borrow::Cow;

/// One member: its name and bytes (inflated when it was deflated, CRC checked).
pub(super) struct Member<'a> {
    pub(super) name: String,
    pub(super) data: Cow<'a, [u8]>,
}

fn u16_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?) as u64)
}
fn u32_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?) as u64)
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

const EOCD: u64 = 0x0605_4b50;
const EOCD64_LOCATOR: u64 = 0x0706_4b50;
const EOCD64: u64 = 0x0606_4b50;
const CENTRAL: u64 = 0x0201_4b50;
const LOCAL: u64 = 0x0403_4b50;

/// The members of the archive `z`, in directory order. Errors are plain text (the
/// caller adds the file's name).
pub(super) fn members(z: &[u8]) -> Result<Vec<Member<'_>>, String> {
    let bad = |what: &str| format!("not a valid zip archive: {what}");
    // The end-of-central-directory record: 22 bytes plus a comment of up to 64 KiB.
    let lo = z.len().saturating_sub(22 + 0xffff);
    let eocd = (lo..=z.len().saturating_sub(22))
        .rev()
        .find(|&i| u32_at(z, i) == Some(EOCD))
        .ok_or_else(|| bad("no end-of-central-directory record"))?;
    let mut count = u16_at(z, eocd + 10).ok_or_else(|| bad("truncated"))?;
    let mut dir = u32_at(z, eocd + 16).ok_or_else(|| bad("truncated"))?;
    // zip64: the locator sits just before the record.
    if eocd >= 20 && u32_at(z, eocd - 20) == Some(EOCD64_LOCATOR) {
        let at = u64_at(z, eocd - 12).ok_or_else(|| bad("truncated"))?;
        let at = usize::try_from(at).map_err(|_| bad("zip64 record offset"))?;
        if u32_at(z, at) != Some(EOCD64) {
            return Err(bad("zip64 end record not found"));
        }
        count = u64_at(z, at + 32).ok_or_else(|| bad("truncated"))?;
        dir = u64_at(z, at + 48).ok_or_else(|| bad("truncated"))?;
    }
    let mut at = usize::try_from(dir).map_err(|_| bad("directory offset"))?;
    let mut out = Vec::new();
    for _ in 0..count {
        if u32_at(z, at) != Some(CENTRAL) {
            return Err(bad("central directory entry not found"));
        }
        let field = |off: usize| u32_at(z, at + off).ok_or_else(|| bad("truncated"));
        let method = u16_at(z, at + 10).ok_or_else(|| bad("truncated"))?;
        let crc = field(16)?;
        let mut csize = field(20)?;
        let mut usize_ = field(24)?;
        let name_len = u16_at(z, at + 28).ok_or_else(|| bad("truncated"))? as usize;
        let extra_len = u16_at(z, at + 30).ok_or_else(|| bad("truncated"))? as usize;
        let comment_len = u16_at(z, at + 32).ok_or_else(|| bad("truncated"))? as usize;
        let mut local = field(42)?;
        let name_bytes = z
            .get(at + 46..at + 46 + name_len)
            .ok_or_else(|| bad("truncated name"))?;
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        // The zip64 extra field holds, in this order, those of the three values that
        // are 0xffffffff above.
        let extra = z
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or_else(|| bad("truncated extra field"))?;
        let mut e = 0;
        while e + 4 <= extra.len() {
            let id = u16_at(extra, e).unwrap_or(0);
            let len = u16_at(extra, e + 2).unwrap_or(0) as usize;
            if id == 1 {
                let mut p = e + 4;
                for v in [&mut usize_, &mut csize, &mut local] {
                    if *v == 0xffff_ffff {
                        *v = u64_at(extra, p).ok_or_else(|| bad("zip64 field"))?;
                        p += 8;
                    }
                }
            }
            e += 4 + len;
        }
        at += 46 + name_len + extra_len + comment_len;

        let l = usize::try_from(local).map_err(|_| bad("member offset"))?;
        if u32_at(z, l) != Some(LOCAL) {
            return Err(bad("local header not found"));
        }
        let lname = u16_at(z, l + 26).ok_or_else(|| bad("truncated"))? as usize;
        let lextra = u16_at(z, l + 28).ok_or_else(|| bad("truncated"))? as usize;
        let start = l + 30 + lname + lextra;
        let end = usize::try_from(csize)
            .ok()
            .and_then(|c| start.checked_add(c))
            .filter(|&e| e <= z.len())
            .ok_or_else(|| bad(&format!("member `{name}` runs past the end")))?;
        let raw = &z[start..end];
        let expected = usize::try_from(usize_).map_err(|_| bad("member size"))?;
        let data: Cow<'_, [u8]> = match method {
            0 => Cow::Borrowed(raw),
            8 => Cow::Owned(
                miniz_oxide::inflate::decompress_to_vec_with_limit(raw, expected)
                    .map_err(|e| bad(&format!("member `{name}`: deflate: {e:?}")))?,
            ),
            m => {
                return Err(format!(
                    "member `{name}`: compression method {m} is not supported (stored or deflate only)"
                ));
            }
        };
        if data.len() != expected {
            return Err(bad(&format!(
                "member `{name}`: {} bytes, the directory says {expected}",
                data.len()
            )));
        }
        if crc32(&data) as u64 != crc {
            return Err(bad(&format!("member `{name}`: CRC-32 mismatch")));
        }
        out.push(Member { name, data });
    }
    Ok(out)
}

/// CRC-32 (IEEE 802.3, reflected, as zip uses).
fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, v) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *v = c;
        }
        t
    });
    let mut c = !0u32;
    for &b in data {
        c = t[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_of_the_standard_check_string() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for z in [&b""[..], b"PK\x05\x06", &[0u8; 100][..], &[0xffu8; 30][..]] {
            assert!(members(z).is_err());
        }
        // An end record that points past the end.
        let mut z = vec![0u8; 22];
        z[..4].copy_from_slice(&(EOCD as u32).to_le_bytes());
        z[10] = 1;
        z[16..20].copy_from_slice(&1000u32.to_le_bytes());
        assert!(members(&z).is_err());
    }
}
