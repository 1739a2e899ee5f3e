//! String attribute values as `&str`, cheaply.
//!
//! Every CU of a kernel names the same header types, so the same few
//! thousand `.debug_str` strings are looked up millions of times. gimli
//! finds each string's end one byte at a time and the caller then checks it
//! is UTF-8; here each string section is checked once when the file is
//! opened, and a lookup is a char-boundary test plus a `memchr`.
//!
//! The walker also asks of every name whether it is a C identifier (see
//! [`crate::model::CuModel::odd_names`]). For `.debug_str`, one pass when
//! the file is opened marks each byte that cannot be part of one (a NUL
//! among them) in a bitmap, and each NUL and digit in another, each an
//! eighth of the section: a name lookup is then the first bitmap's next
//! marked bit, which is the name's end when the second marks it as a NUL,
//! instead of a `memchr` plus a check of every byte; and the name's bytes
//! are not read at all.

use gimli::{AttributeValue, Section as _};

use crate::reader::Reader;

/// A string section (`.debug_str`, `.debug_line_str`, the symbol names'
/// `.strtab`) with its longest UTF-8 prefix checked once.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct StrSection<'input> {
    /// The section up to its first invalid UTF-8 byte (all of it, normally).
    valid: &'input str,
}

impl<'input> StrSection<'input> {
    /// Checks `bytes` once for later lookups.
    pub(crate) fn new(bytes: &'input [u8]) -> Self {
        let valid = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            // The prefix gimli's error points at is valid by definition.
            Err(err) => {
                std::str::from_utf8(bytes.get(..err.valid_up_to()).unwrap_or(&[])).unwrap_or("")
            }
        };
        StrSection { valid }
    }

    /// The NUL-terminated string at `offset`, if it lies wholly in the
    /// checked prefix; `None` leaves the case (and its error) to the slow
    /// path.
    #[inline]
    pub(crate) fn get(&self, offset: usize) -> Option<&'input str> {
        // `None` for a string starting inside a multi-byte character,
        // which is not UTF-8.
        let rest = self.valid.get(offset..)?;
        let end = memchr::memchr(0, rest.as_bytes())?;
        // A NUL is ASCII, so `end` is a char boundary of `rest` too.
        rest.get(..end)
    }
}

/// Two bits for each byte of a checked string section, enough to read a
/// C identifier's length, and that it is one, without touching the
/// section's bytes (see [`Strings::debug_str_name`]):
/// - *odd*: the byte cannot be part of an identifier after its first byte
///   (not `[A-Za-z0-9_.]`: NULs, spaces, every byte of a multi-byte
///   character...);
/// - *mark*: the byte is a NUL or a digit. At an odd byte that tells a
///   NUL (the end of an identifier) from any other; at a name's first
///   byte, which is not odd, it tells a digit (which cannot start an
///   identifier) from a letter, `_` or `.`.
///
/// Byte `i` is bit `i % 64` of pair `i / 64`, odd word first: a lookup
/// reads one cache line of bits where it read the string and the bits
/// before, and the names of a kernel's `.debug_str` (6.5 MB on Debian
/// 7.3.4) are at random places, each a cache miss.
#[derive(Debug, Default, Clone)]
struct NameBits {
    pairs: Vec<[u64; 2]>,
}

impl NameBits {
    fn new(bytes: &[u8]) -> Self {
        let mut pairs = Vec::with_capacity(bytes.len().div_ceil(64));
        let mut chunks = bytes.chunks_exact(64);
        for chunk in &mut chunks {
            pairs.push(name_bits_64(chunk));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            pairs.push(name_bits(rest));
        }
        NameBits { pairs }
    }

    /// Whether byte `offset` is odd, and whether it is marked.
    #[inline(always)]
    fn at(&self, offset: usize) -> Option<(bool, bool)> {
        let [odd, mark] = *self.pairs.get(offset / 64)?;
        let bit = offset % 64;
        Some((odd >> bit & 1 == 1, mark >> bit & 1 == 1))
    }

    /// The first odd byte at or after `offset`, if any, and whether it is
    /// marked (a NUL).
    #[inline(always)]
    fn next_odd(&self, offset: usize) -> Option<(usize, bool)> {
        let mut index = offset / 64;
        let [odd, mut mark] = *self.pairs.get(index)?;
        let mut odd = odd & (!0u64 << (offset % 64));
        while odd == 0 {
            index += 1;
            [odd, mark] = *self.pairs.get(index)?;
        }
        let bit = odd.trailing_zeros();
        Some((index * 64 + bit as usize, mark >> bit & 1 == 1))
    }
}

/// [`NameBits`] of at most 64 bytes, one byte at a time.
fn name_bits(bytes: &[u8]) -> [u64; 2] {
    use crate::model::{LATER, NAME_BYTES};
    bytes
        .iter()
        .enumerate()
        .fold([0u64; 2], |[odd, mark], (bit, &byte)| {
            [
                odd | u64::from(NAME_BYTES[byte as usize] & LATER == 0) << bit,
                mark | u64::from(byte == 0 || byte.is_ascii_digit()) << bit,
            ]
        })
}

/// [`name_bits`] of 64 bytes, 16 at a time with SSE2 (part of every
/// x86-64): a kernel module's `.debug_str` can be 6 MB, which byte by byte
/// took 56 M instructions, 3% of encoding the module.
#[cfg(target_arch = "x86_64")]
fn name_bits_64(chunk: &[u8]) -> [u64; 2] {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_setzero_si128, _mm_sub_epi8,
    };
    let [mut odd, mut mark] = [0u64; 2];
    for (index, bytes) in chunk.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is in the x86-64 baseline, so every intrinsic used
        // is available; the load reads the 16 bytes of `bytes`, which has
        // exactly 16, and takes any alignment.
        let (identifier_bytes, marked_bytes) = unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().cast::<__m128i>());
            // `d` (an offset from a range's start) is in the range of
            // `n + 1` values: unsigned `min(d, n) == d`.
            let within =
                |d: __m128i, n: u8| _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(n as i8)), d);
            // Setting bit 5 maps A-Z onto a-z and no other byte there.
            let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let letter = within(_mm_sub_epi8(lower, _mm_set1_epi8(b'a' as i8)), 25);
            let digit = within(_mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8)), 9);
            let underscore = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8));
            let dot = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'.' as i8));
            let nul = _mm_cmpeq_epi8(v, _mm_setzero_si128());
            (
                _mm_movemask_epi8(_mm_or_si128(
                    _mm_or_si128(letter, digit),
                    _mm_or_si128(underscore, dot),
                )),
                _mm_movemask_epi8(_mm_or_si128(digit, nul)),
            )
        };
        odd |= u64::from(!(identifier_bytes as u16)) << (16 * index);
        mark |= u64::from(marked_bytes as u16) << (16 * index);
    }
    [odd, mark]
}

/// [`name_bits`] of 64 bytes.
#[cfg(not(target_arch = "x86_64"))]
fn name_bits_64(chunk: &[u8]) -> [u64; 2] {
    name_bits(chunk)
}

/// The string sections of one file, for [`Strings::get`].
#[derive(Debug, Default, Clone)]
pub(crate) struct Strings<'input> {
    debug_str: StrSection<'input>,
    /// What the bytes of `debug_str`'s checked prefix are in a name.
    debug_str_bits: NameBits,
    debug_line_str: StrSection<'input>,
    /// The supplementary file's `.debug_str` (`DW_FORM_GNU_strp_alt`,
    /// `DW_FORM_strp_sup`).
    sup_str: StrSection<'input>,
}

/// Why a string attribute has no `&str` value.
#[derive(Debug)]
pub(crate) enum StringError {
    /// gimli could not read it (bad offset, no terminating NUL, ...).
    Dwarf(gimli::Error),
    /// The bytes are not UTF-8.
    NotUtf8,
}

impl<'input> Strings<'input> {
    /// Checks the string sections of `dwarf` once.
    pub(crate) fn new(dwarf: &gimli::Dwarf<Reader<'input>>) -> Self {
        let debug_str = StrSection::new(dwarf.debug_str.reader().slice());
        Strings {
            debug_str_bits: NameBits::new(debug_str.valid.as_bytes()),
            debug_str,
            debug_line_str: StrSection::new(dwarf.debug_line_str.reader().slice()),
            sup_str: StrSection::default(),
        }
    }

    /// Takes `sup`'s `.debug_str` as the supplementary file's strings.
    pub(crate) fn set_sup(&mut self, sup: &Strings<'input>) {
        self.sup_str = sup.debug_str;
    }

    /// The `.debug_str` string at `offset`, where [`Strings::get`] would
    /// find it without its slow path; `None` leaves the case to it.
    #[inline]
    pub(crate) fn debug_str(&self, offset: usize) -> Option<&'input str> {
        self.debug_str.get(offset)
    }

    /// [`Strings::debug_str`] for a name, with whether it is a C
    /// identifier ([`crate::model::is_c_identifier`]). An identifier, as
    /// nearly every name is, is read from [`NameBits`] alone: its bytes are
    /// not touched here, and most are never touched at all (only the
    /// names of the types that survive the collapse are read again).
    #[inline(always)]
    pub(crate) fn debug_str_name(&self, offset: usize) -> Option<(&'input str, bool)> {
        use crate::model::MAX_NAME_LEN;
        let valid = self.debug_str.valid;
        let (odd_first, digit_first) = self.debug_str_bits.at(offset)?;
        if !odd_first {
            let (end, nul) = self.debug_str_bits.next_odd(offset)?;
            if nul {
                let bytes = valid.as_bytes().get(offset..end)?;
                // SAFETY: `bytes` is part of `valid`, which is UTF-8, and
                // both its ends are char boundaries: the byte at `offset`
                // is ASCII (not odd) and the one at `end` is a NUL.
                let text = unsafe { std::str::from_utf8_unchecked(bytes) };
                return Some((text, !digit_first && end - offset <= MAX_NAME_LEN));
            }
        }
        // Empty, not an identifier, or starting inside a multi-byte
        // character (`get` gives `None`).
        self.debug_str.get(offset).map(|text| (text, false))
    }

    /// The string an attribute value names, with the same results as
    /// gimli's `Dwarf::attr_string` followed by a UTF-8 check.
    pub(crate) fn get(
        &self,
        dwarf: &gimli::Dwarf<Reader<'input>>,
        unit: &gimli::Unit<Reader<'input>>,
        value: AttributeValue<Reader<'input>>,
    ) -> Result<&'input str, StringError> {
        let fast = match value {
            AttributeValue::DebugStrRef(offset) => self.debug_str.get(offset.0),
            AttributeValue::DebugLineStrRef(offset) => self.debug_line_str.get(offset.0),
            AttributeValue::DebugStrRefSup(offset) => self.sup_str.get(offset.0),
            // clang's DWARF 5 names strings by index (`DW_FORM_strx*`).
            AttributeValue::DebugStrOffsetsIndex(index) => dwarf
                .string_offset(unit, index)
                .ok()
                .and_then(|offset| self.debug_str.get(offset.0)),
            _ => None,
        };
        match fast {
            Some(text) => Ok(text),
            None => Self::get_slowly(dwarf, unit, value),
        }
    }

    /// What [`Strings::get`] does for the values its fast path does not
    /// take (inline strings, errors): out of line
    /// and cold, so that the common path is short.
    #[cold]
    #[inline(never)]
    fn get_slowly(
        dwarf: &gimli::Dwarf<Reader<'input>>,
        unit: &gimli::Unit<Reader<'input>>,
        value: AttributeValue<Reader<'input>>,
    ) -> Result<&'input str, StringError> {
        let bytes = dwarf.attr_string(unit, value).map_err(StringError::Dwarf)?;
        std::str::from_utf8(bytes.slice()).map_err(|_| StringError::NotUtf8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_stop_at_the_nul() {
        let section = StrSection::new(b"int\0long unsigned int\0\0");
        assert_eq!(section.get(0), Some("int"));
        assert_eq!(section.get(4), Some("long unsigned int"));
        // A suffix of another string is a string too (linkers merge them).
        assert_eq!(section.get(9), Some("unsigned int"));
        assert_eq!(section.get(22), Some(""));
        assert_eq!(section.get(23), None);
        assert_eq!(section.get(1000), None);
    }

    #[test]
    fn names_say_whether_they_are_identifiers() {
        let long = "x".repeat(200);
        let text = format!(
            "int\0long unsigned int\0_a.b9\09x\0\0{long}\0{}\0ét\0",
            &long[..128]
        );
        let bytes = text.as_bytes();
        let strings = Strings {
            debug_str: StrSection::new(bytes),
            debug_str_bits: NameBits::new(bytes),
            ..Strings::default()
        };
        let mut offset = 0;
        while offset < bytes.len() {
            let expected = StrSection::new(bytes)
                .get(offset)
                .map(|name| (name, crate::model::is_c_identifier(name)));
            assert_eq!(strings.debug_str_name(offset), expected, "at {offset}");
            offset += 1;
        }
        assert_eq!(
            strings.debug_str_name(4),
            Some(("long unsigned int", false))
        );
        assert_eq!(strings.debug_str_name(9), Some(("unsigned int", false)));
        assert_eq!(strings.debug_str_name(22), Some(("_a.b9", true)));
        assert_eq!(strings.debug_str_name(28), Some(("9x", false)));
        assert_eq!(strings.debug_str_name(31), Some(("", false)));
        assert_eq!(strings.debug_str_name(bytes.len()), None);
        let unterminated = b"abc";
        let strings = Strings {
            debug_str: StrSection::new(unterminated),
            debug_str_bits: NameBits::new(unterminated),
            ..Strings::default()
        };
        assert_eq!(strings.debug_str_name(0), None);
    }

    /// Every string attribute of every fixture reads the same through the
    /// fast path as through gimli's `attr_string`, string offsets tables
    /// (clang's `DW_FORM_strx*`) included; so does an index past the
    /// table, which both refuse.
    #[test]
    fn fast_lookups_agree_with_gimli_on_every_fixture() {
        let mut by_index = 0;
        for path in crate::test_fixtures::fixture_objects() {
            let file = crate::ElfFile::open(&path).expect("fixture opens");
            let dwarf = file.dwarf().expect("fixture has DWARF");
            let mut units = dwarf.gimli.units();
            while let Some(header) = units.next().expect("unit header") {
                let unit = dwarf.gimli.unit(header).expect("unit");
                let mut entries = unit.entries();
                while let Some(entry) = entries.next_dfs().expect("entry") {
                    for attr in entry.attrs() {
                        let value = attr.value();
                        let string_form = matches!(
                            value,
                            AttributeValue::String(_)
                                | AttributeValue::DebugStrRef(_)
                                | AttributeValue::DebugLineStrRef(_)
                                | AttributeValue::DebugStrOffsetsIndex(_)
                        );
                        if !string_form {
                            continue;
                        }
                        by_index +=
                            usize::from(matches!(value, AttributeValue::DebugStrOffsetsIndex(_)));
                        let fast = dwarf.strings.get(&dwarf.gimli, &unit, value).ok();
                        let slow = Strings::get_slowly(&dwarf.gimli, &unit, value).ok();
                        assert_eq!(fast, slow, "{path:?}: {value:?}");
                    }
                }
                let past = AttributeValue::DebugStrOffsetsIndex(gimli::DebugStrOffsetsIndex(
                    usize::MAX / 16,
                ));
                assert!(dwarf.strings.get(&dwarf.gimli, &unit, past).is_err());
            }
        }
        assert!(by_index > 100, "{by_index} strings by index");
    }

    #[test]
    fn name_bits_sixteen_at_a_time_as_one_at_a_time() {
        let all: Vec<u8> = (0..=255u8).collect();
        let mut bytes = all.clone();
        bytes.extend(all.iter().rev());
        bytes.extend(b"__the.quick_brown_fox9_JUMPS_over_the_lazy_dog_0123456789_.Zz@[`{/:");
        for chunk in bytes.chunks_exact(64) {
            assert_eq!(name_bits_64(chunk), name_bits(chunk), "{chunk:?}");
        }
        let bits = NameBits::new(&bytes);
        assert_eq!(bits.pairs.len(), bytes.len().div_ceil(64));
        for (i, &byte) in bytes.iter().enumerate() {
            let odd = !(byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.');
            let mark = byte == 0 || byte.is_ascii_digit();
            assert_eq!(bits.at(i), Some((odd, mark)), "byte {byte:#x}");
        }
    }

    #[test]
    fn invalid_utf8_and_unterminated_strings_take_the_slow_path() {
        // "é" is 0xc3 0xa9: offset 1 is inside it.
        let section = StrSection::new(b"\xc3\xa9\0ok\0");
        assert_eq!(section.get(0), Some("é"));
        assert_eq!(section.get(1), None);
        assert_eq!(section.get(3), Some("ok"));
        let bytes = b"ok\0bad\xff\0after\0";
        let section = StrSection::new(bytes);
        assert_eq!(section.get(0), Some("ok"));
        // The invalid string and everything after it are left to gimli.
        assert_eq!(section.get(3), None);
        assert_eq!(section.get(8), None);
        let section = StrSection::new(b"no terminator");
        assert_eq!(section.get(0), None);
    }
}
