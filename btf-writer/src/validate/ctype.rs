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
const fn class_of(c: u8) -> u8 {
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

/// [`class_of`] every byte, as the kernel's table is: every name of every
/// type, member and parameter is checked a byte at a time (a third of the
/// check of a vmlinux's output went to classifying bytes).
const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        table[c] = class_of(c as u8);
        c += 1;
    }
    table
};

fn class(c: u8) -> u8 {
    CLASS[c as usize]
}

fn isalpha(c: u8) -> bool {
    class(c) & (U | L) != 0
}
fn isprint(c: u8) -> bool {
    class(c) & (P | U | L | D | SP) != 0
}

/// `__btf_name_char_ok` past the first byte: a letter or a digit (to the
/// kernel's ctype, whose letters include Latin-1's), `_` or `.`.
const fn identifier_rest(c: u8) -> bool {
    CLASS[c as usize] & (U | L | D) != 0 || c == b'_' || c == b'.'
}

/// [`identifier_rest`] of every byte, for scans of whole sections.
const IDENTIFIER_REST: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        table[c] = identifier_rest(c as u8);
        c += 1;
    }
    table
};

/// `__btf_name_char_ok`.
fn char_ok(c: u8, first: bool) -> bool {
    if first {
        isalpha(c) || c == b'_' || c == b'.'
    } else {
        IDENTIFIER_REST[c as usize]
    }
}

/// `__btf_name_valid` (`btf_name_valid_identifier`): a C identifier (dots
/// allowed) of at most `KSYM_NAME_LEN` bytes. `s` runs to the end of the
/// string section, which ends with a NUL.
pub fn name_valid_identifier(s: &[u8]) -> bool {
    let Some((&first, rest)) = s.split_first() else {
        return false;
    };
    if !char_ok(first, true) {
        return false;
    }
    // At most KSYM_NAME_LEN - 1 more bytes before the NUL (a string that
    // runs to the end of `s` ends there).
    let limit = rest.len().min(KSYM_NAME_LEN - 1);
    for &c in rest.get(..limit).unwrap_or_default() {
        if c == 0 {
            return true;
        }
        if !char_ok(c, false) {
            return false;
        }
    }
    rest.get(limit).is_none_or(|&c| c == 0)
}

/// The offsets in one string section at which a string starts that
/// [`name_valid_identifier`] accepts, a bit each, found in one pass over
/// the section. The meta checks ask for each name a type holds: 180,000
/// asks into 96,000 strings for Debian 6.1's vmlinux BTF, each a read at
/// a random place in 1.7 MB; a bit of this map answers most of them. An
/// offset whose bit is clear (an invalid name, an offset into a string, an
/// empty map) is checked as before, so the answers are the same.
#[derive(Clone, Debug, Default)]
pub struct IdentifierStarts(Vec<u64>);

impl IdentifierStarts {
    /// The map of `section` (a string section ending in a NUL).
    pub fn of(section: &[u8]) -> Self {
        let mut bits = vec![0u64; section.len().div_ceil(64)];
        let mut start = 0;
        while let Some(&first) = section.get(start) {
            if first == 0 {
                // An empty string.
                start += 1;
                continue;
            }
            let tail = section.get(start + 1..).unwrap_or_default();
            // The run of identifier characters after the first, and what
            // ends it: the NUL of a valid name, or the first byte that
            // makes it invalid (then the NUL is looked for).
            let run = tail
                .iter()
                .position(|&c| !IDENTIFIER_REST[c as usize])
                .unwrap_or(tail.len());
            let len = match tail.get(run) {
                Some(0) => {
                    if char_ok(first, true) && run < KSYM_NAME_LEN {
                        if let Some(word) = bits.get_mut(start / 64) {
                            *word |= 1 << (start % 64);
                        }
                    }
                    run + 1
                }
                _ => {
                    let rest = tail.get(run..).unwrap_or_default();
                    run + memchr::memchr(0, rest).unwrap_or(rest.len()) + 1
                }
            };
            start += len + 1;
        }
        IdentifierStarts(bits)
    }

    /// Whether the string at `offset` is known to be a valid identifier
    /// (false says nothing).
    #[inline]
    pub fn contains(&self, offset: usize) -> bool {
        self.0
            .get(offset / 64)
            .is_some_and(|word| word >> (offset % 64) & 1 == 1)
    }
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
        // A name running to the end of the section ends there.
        assert!(name_valid_identifier(b"abc"));
        assert!(!name_valid_identifier(b""));
    }

    /// The map answers as the check does at every offset of sections with
    /// valid and invalid names, names longer than the limit, Latin-1
    /// letters, empty strings, and offsets into strings.
    #[test]
    fn identifier_starts_agree_with_the_check_everywhere() {
        let mut long = vec![b'a'; KSYM_NAME_LEN];
        long.push(0);
        long.extend_from_slice(&[b'b'; KSYM_NAME_LEN + 1]);
        long.push(0);
        let sections: [&[u8]; 4] = [
            b"\0int\0long unsigned int\0u32\0\0.data..percpu\0caf\xe9\0_x1\0\x31x\0",
            b"a\0\0\0b-c\0d\0",
            &long,
            b"\0",
        ];
        for section in sections {
            let starts = IdentifierStarts::of(section);
            let mut known = 0;
            for offset in 0..section.len() {
                let checked = name_valid_identifier(&section[offset..]);
                if starts.contains(offset) {
                    known += 1;
                    assert!(checked, "offset {offset} of {section:?}");
                } else {
                    let at_start = offset == 0 || section[offset - 1] == 0;
                    assert!(!(checked && at_start), "offset {offset} of {section:?}");
                }
            }
            assert!(known > 0 || section == b"\0");
        }
    }

    /// The table holds what the kernel's ctype says of every byte, and the
    /// identifier rule agrees with the kernel's loop, written out here as
    /// `__btf_name_valid` has it, on every two-byte name and on names of
    /// every length around the limit.
    #[test]
    fn identifiers_match_the_kernels_loop() {
        fn kernel(s: &[u8]) -> bool {
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
        for c in 0..=255u8 {
            assert_eq!(class(c), class_of(c));
            for d in 0..=255u8 {
                for name in [vec![c, d], vec![c, d, 0], vec![c, 0, d]] {
                    assert_eq!(name_valid_identifier(&name), kernel(&name), "{name:?}");
                }
            }
        }
        for len in KSYM_NAME_LEN - 2..KSYM_NAME_LEN + 3 {
            for tail in [&[][..], &[0], &[b'x', 0], &[b'-', 0]] {
                let mut name = vec![b'a'; len];
                name.extend_from_slice(tail);
                assert_eq!(
                    name_valid_identifier(&name),
                    kernel(&name),
                    "{len} {tail:?}"
                );
            }
        }
    }
}
