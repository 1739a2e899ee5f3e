//! Name rules: `__btf_name_valid` and `btf_name_valid_section` with the
//! kernel's `<linux/ctype.h>`, whose table (lib/ctype.c) classifies bytes
//! 128-255 as ISO 8859-1: a name the kernel accepts need not be ASCII, nor
//! UTF-8.

use super::KSYM_NAME_LEN;

const U: u8 = 0x01; // upper
const L: u8 = 0x02; // lower
const D: u8 = 0x04; // digit
const P: u8 = 0x10; // punct
const SP: u8 = 0x80; // hard space

/// `_ctype[c]` (lib/ctype.c), the bits the name rules use.
fn class(c: u8) -> u8 {
    match c {
        b'A'..=b'Z' => U,
        b'a'..=b'z' => L,
        b'0'..=b'9' => D,
        b' ' => SP,
        0x21..=0x2f | 0x3a..=0x40 | 0x5b..=0x60 | 0x7b..=0x7e => P,
        0xa0 => SP,
        0xa1..=0xbf | 0xd7 | 0xf7 => P,
        0xc0..=0xde => U,
        0xdf..=0xff => L,
        _ => 0, // control characters
    }
}

fn isalpha(c: u8) -> bool {
    class(c) & (U | L) != 0
}
fn isalnum(c: u8) -> bool {
    class(c) & (U | L | D) != 0
}
fn isprint(c: u8) -> bool {
    class(c) & (P | U | L | D | SP) != 0
}

/// `__btf_name_char_ok`.
fn char_ok(c: u8, first: bool) -> bool {
    (if first { isalpha(c) } else { isalnum(c) }) || c == b'_' || c == b'.'
}

/// `__btf_name_valid` (`btf_name_valid_identifier`): a C identifier (dots
/// allowed) of at most `KSYM_NAME_LEN` bytes. `s` runs to the end of the
/// string section, which ends with a NUL.
pub fn name_valid_identifier(s: &[u8]) -> bool {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    if !char_ok(at(0), true) {
        return false;
    }
    let mut i = 1;
    while at(i) != 0 && i < KSYM_NAME_LEN {
        if !char_ok(at(i), false) {
            return false;
        }
        i += 1;
    }
    at(i) == 0
}

/// `btf_name_valid_section`: non-empty, printable, at most
/// `KSYM_NAME_LEN` bytes.
pub fn name_valid_section(s: &[u8]) -> bool {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    if at(0) == 0 {
        return false;
    }
    let mut i = 0;
    while at(i) != 0 && i < KSYM_NAME_LEN {
        if !isprint(at(i)) {
            return false;
        }
        i += 1;
    }
    at(i) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(name_valid_identifier(b"task_struct\0"));
        assert!(name_valid_identifier(b"_x.y1\0"));
        assert!(name_valid_identifier(b".L1\0"));
        assert!(!name_valid_identifier(b"1x\0"));
        assert!(!name_valid_identifier(b"a-b\0"));
        assert!(!name_valid_identifier(b"\0"));
        // ISO 8859-1 letters are letters to the kernel; UTF-8 'é' is not.
        assert!(name_valid_identifier(b"caf\xe9\0"));
        assert!(!name_valid_identifier("café\0".as_bytes()));
        let mut long = vec![b'a'; KSYM_NAME_LEN];
        long.push(0);
        assert!(name_valid_identifier(&long));
        long.insert(0, b'a');
        assert!(!name_valid_identifier(&long));
    }
}
