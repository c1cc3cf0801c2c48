//! Go's `encoding/base64` standard encoding (Go 1.26): `StdEncoding`'s
//! `EncodeToString` and `DecodeString`, as sprig's `b64enc`/`b64dec` and
//! HTTP basic authentication use them.

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Go's `base64.CorruptInputError`: the offset of the first bad byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal base64 data at input byte {0}")]
pub struct CorruptInputError(pub usize);

/// `base64.StdEncoding.EncodeToString`: standard alphabet, with padding.
pub fn encode(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                out.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `base64.StdEncoding.DecodeString`; line breaks (`\r`, `\n`) are skipped
/// as Go skips them.
///
/// # Errors
/// [`CorruptInputError`] at the byte Go reports.
pub fn decode(s: &str) -> Result<Vec<u8>, CorruptInputError> {
    let src = s.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    while si < src.len() {
        si = decode_quantum(&mut out, src, si)?;
    }
    Ok(out)
}

/// Go's `decodeQuantum` for the padded standard encoding: decodes up to
/// four symbols from `si` into `out` and returns where the next quantum
/// starts.
fn decode_quantum(
    out: &mut Vec<u8>,
    src: &[u8],
    mut si: usize,
) -> Result<usize, CorruptInputError> {
    let is_newline = |c: u8| c == b'\n' || c == b'\r';
    let mut dbuf = [0u8; 4];
    let mut dlen = 4;
    let mut trailing: Option<CorruptInputError> = None;
    let mut j = 0;
    while j < 4 {
        if si == src.len() {
            if j == 0 {
                return Ok(si);
            }
            // The padded encoding wants whole quanta.
            return Err(CorruptInputError(si - j));
        }
        let c = src[si];
        si += 1;
        if let Some(v) = B64.iter().position(|x| *x == c) {
            dbuf[j] = v as u8;
            j += 1;
            continue;
        }
        if is_newline(c) {
            continue;
        }
        if c != b'=' {
            return Err(CorruptInputError(si - 1));
        }
        // Padding: the end of the data.
        match j {
            0 | 1 => return Err(CorruptInputError(si - 1)),
            2 => {
                // A second `=` must follow, after any line breaks.
                while si < src.len() && is_newline(src[si]) {
                    si += 1;
                }
                if si == src.len() {
                    return Err(CorruptInputError(src.len()));
                }
                if src[si] != b'=' {
                    return Err(CorruptInputError(si - 1));
                }
                si += 1;
            }
            _ => {}
        }
        while si < src.len() && is_newline(src[si]) {
            si += 1;
        }
        if si < src.len() {
            trailing = Some(CorruptInputError(si));
        }
        dlen = j;
        break;
    }
    let val = u32::from(dbuf[0]) << 18
        | u32::from(dbuf[1]) << 12
        | u32::from(dbuf[2]) << 6
        | u32::from(dbuf[3]);
    let bytes = [(val >> 16) as u8, (val >> 8) as u8, val as u8];
    out.extend_from_slice(&bytes[..dlen - 1]);
    match trailing {
        Some(e) => Err(e),
        None => Ok(si),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_rfc4648() {
        assert_eq!(encode(b""), "");
        assert_eq!(encode(b"f"), "Zg==");
        assert_eq!(encode(b"fo"), "Zm8=");
        assert_eq!(encode(b"foo"), "Zm9v");
        assert_eq!(encode(b"user:pa55"), "dXNlcjpwYTU1");
    }

    /// `base64.StdEncoding.DecodeString` as Go 1.26.8 answered.
    #[test]
    fn decodes_with_go_errors() {
        for (input, want) in [
            ("Zm9v", Ok(&b"foo"[..])),
            ("Zm8=\n", Ok(b"fo")),
            ("Zm\r\n9v", Ok(b"foo")),
            ("", Ok(b"")),
            ("Zm9", Err(0)),
            ("Zm*v", Err(2)),
            ("Zg==Zg==", Err(4)),
            ("Z", Err(0)),
            ("Zm8", Err(0)),
            ("Zg=a", Err(2)),
            ("====", Err(0)),
            ("Zg=", Err(3)),
        ] {
            assert_eq!(
                decode(input),
                want.map(<[u8]>::to_vec).map_err(CorruptInputError),
                "{input:?}"
            );
        }
        assert_eq!(
            CorruptInputError(3).to_string(),
            "illegal base64 data at input byte 3"
        );
    }
}
