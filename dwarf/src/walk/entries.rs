//! A forward reader of one unit's DIE bytes.
//!
//! gimli's `EntriesRaw` keeps its input private, so every attribute has to
//! go through its generic, per-form decoding. The walker reads most
//! attributes through precomputed plans instead (see `plan.rs`), which
//! needs the bytes: this reader owns them and hands them to gimli for the
//! rare cases it does not decode itself, so errors stay gimli's.

use gimli::{Endianity, RunTimeEndian};

use super::abbrevs::{Abbrev, UnitAbbrevs};
use super::layout::{Die, Layout};
use crate::reader::Reader;

/// The not yet read part of one unit's entries.
#[derive(Clone, Copy)]
pub(super) struct Entries<'u, 'input> {
    /// What is left to read.
    input: &'input [u8],
    /// Unit offset of the end of the unit: the next offset is this minus
    /// the length of `input`.
    end_offset: usize,
    /// The unit's bytes from its root DIE on, to seek in.
    all: &'input [u8],
    /// Unit offset of `all`'s first byte (the unit header's size).
    root_offset: usize,
    pub(super) endian: RunTimeEndian,
    pub(super) encoding: gimli::Encoding,
    /// The unit's abbreviations.
    abbrevs: &'u UnitAbbrevs,
    /// An empty table, for gimli's attribute readers, which need one.
    abbreviations: &'u gimli::Abbreviations,
}

impl<'u, 'input> Entries<'u, 'input> {
    /// A reader positioned on `unit`'s root DIE, whose abbreviations are
    /// `abbrevs`.
    pub(super) fn new(
        unit: &'u gimli::Unit<Reader<'input>>,
        abbrevs: &'u UnitAbbrevs,
    ) -> gimli::Result<Self> {
        let root_offset = unit.header.root_offset();
        let bytes = unit.header.range_from(root_offset..)?;
        let all = bytes.slice();
        Ok(Entries {
            input: all,
            end_offset: root_offset.0 + all.len(),
            all,
            root_offset: root_offset.0,
            endian: gimli::Reader::endian(&bytes),
            encoding: unit.header.encoding(),
            abbrevs,
            abbreviations: &unit.abbreviations,
        })
    }

    /// The unit's abbreviations.
    #[inline(always)]
    pub(super) fn abbrevs(&self) -> &'u UnitAbbrevs {
        self.abbrevs
    }

    /// Whether the unit has been read to its end.
    pub(super) fn is_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// The unit offset of the next byte to read.
    pub(super) fn next_offset(&self) -> usize {
        self.end_offset - self.input.len()
    }

    /// Where the reader is, for [`Entries::rewind`].
    #[inline]
    pub(super) fn position(&self) -> &'input [u8] {
        self.input
    }

    /// Goes back to a [`Entries::position`] of this reader.
    pub(super) fn rewind(&mut self, position: &'input [u8]) {
        self.input = position;
    }

    /// Moves to the DIE at unit offset `offset`, with gimli's error for an
    /// offset outside the unit's entries.
    pub(super) fn seek(&mut self, offset: usize) -> gimli::Result<()> {
        match offset
            .checked_sub(self.root_offset)
            .and_then(|start| self.all.get(start..))
            .filter(|rest| !rest.is_empty())
        {
            Some(rest) => {
                self.input = rest;
                Ok(())
            }
            None => Err(gimli::Error::OffsetOutOfBounds(offset as u64)),
        }
    }

    /// Reads an abbreviation code; `None` for the null entry that ends a
    /// list of children.
    #[inline]
    pub(super) fn read_abbreviation(&mut self) -> gimli::Result<Option<&'u Abbrev>> {
        let code = match self.input.first() {
            // One byte holds every code below 128: nearly all of them.
            Some(&byte) if byte < 0x80 => {
                self.input = self.input.get(1..).unwrap_or(&[]);
                u64::from(byte)
            }
            _ => self.with_gimli(gimli::Reader::read_uleb128)?,
        };
        if code == 0 {
            return Ok(None);
        }
        self.abbrevs
            .get(code)
            .map(Some)
            .ok_or(gimli::Error::InvalidAbbreviationCode(code))
    }

    /// Runs one gimli read on the remaining input and moves past what it
    /// consumed: the slow, general path for what the fast readers below
    /// do not handle, and the source of every error.
    pub(super) fn with_gimli<T>(
        &mut self,
        read: impl FnOnce(&mut Reader<'input>) -> gimli::Result<T>,
    ) -> gimli::Result<T> {
        let mut raw = Reader::new(self.input, self.endian);
        let value = read(&mut raw)?;
        self.input = raw.slice();
        Ok(value)
    }

    /// Reads one attribute with gimli's generic decoding.
    pub(super) fn gimli_attribute(
        &mut self,
        spec: gimli::AttributeSpecification,
    ) -> gimli::Result<gimli::Attribute<Reader<'input>>> {
        let mut raw = gimli::EntriesRaw::new(
            Reader::new(self.input, self.endian),
            self.encoding,
            self.abbreviations,
            gimli::UnitOffset(0),
        );
        let attr = raw.read_attribute(spec)?;
        self.advance(raw.next_offset().0);
        Ok(attr)
    }

    /// Skips attributes with gimli's generic decoding.
    pub(super) fn gimli_skip(
        &mut self,
        specs: &[gimli::AttributeSpecification],
    ) -> gimli::Result<()> {
        let mut raw = gimli::EntriesRaw::new(
            Reader::new(self.input, self.endian),
            self.encoding,
            self.abbreviations,
            gimli::UnitOffset(0),
        );
        raw.skip_attributes(specs)?;
        self.advance(raw.next_offset().0);
        Ok(())
    }

    /// Keeps only the next `count` bytes.
    #[cfg(test)]
    pub(super) fn truncate_for_test(&mut self, count: usize) {
        let next = self.next_offset();
        self.input = self.input.get(..count).unwrap_or(self.input);
        self.end_offset = next + self.input.len();
    }

    fn advance(&mut self, count: usize) {
        self.input = self.input.get(count..).unwrap_or(&[]);
    }

    /// The next `count` bytes, consumed; `None` (nothing consumed) past
    /// the end.
    #[inline]
    pub(super) fn take(&mut self, count: usize) -> Option<&'input [u8]> {
        if count > self.input.len() {
            return None;
        }
        let (head, rest) = self.input.split_at(count);
        self.input = rest;
        Some(head)
    }

    #[inline]
    pub(super) fn u8(&mut self) -> Option<u8> {
        let (&byte, rest) = self.input.split_first()?;
        self.input = rest;
        Some(byte)
    }

    #[inline]
    pub(super) fn u16(&mut self) -> Option<u16> {
        let bytes = self.take(2)?;
        Some(self.endian.read_u16(bytes))
    }

    #[inline]
    pub(super) fn u32(&mut self) -> Option<u32> {
        let bytes = self.take(4)?;
        Some(self.endian.read_u32(bytes))
    }

    #[inline]
    pub(super) fn u64(&mut self) -> Option<u64> {
        let bytes = self.take(8)?;
        Some(self.endian.read_u64(bytes))
    }

    /// An offset of the unit's format (4 or 8 bytes).
    #[inline]
    pub(super) fn offset(&mut self, size: u8) -> Option<usize> {
        match size {
            4 => self.u32().map(|v| v as usize),
            _ => self.u64().and_then(|v| usize::try_from(v).ok()),
        }
    }

    /// An unsigned LEB128 number of at most 64 bits.
    #[inline]
    pub(super) fn uleb(&mut self) -> Option<u64> {
        let mut result = 0u64;
        let mut shift = 0u32;
        for (index, &byte) in self.input.iter().enumerate() {
            // A tenth byte could only hold the top bit: longer encodings
            // are left to gimli and its overflow error.
            if shift == 63 && byte > 1 {
                return None;
            }
            result |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                self.input = self.input.get(index + 1..).unwrap_or(&[]);
                return Some(result);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
        None
    }

    /// A signed LEB128 number of at most 64 bits.
    #[inline]
    pub(super) fn sleb(&mut self) -> Option<i64> {
        let mut result = 0i64;
        let mut shift = 0u32;
        for (index, &byte) in self.input.iter().enumerate() {
            if shift == 63 && byte != 0 && byte != 0x7f {
                return None;
            }
            result |= i64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                if shift < 64 && byte & 0x40 != 0 {
                    result |= !0 << shift;
                }
                self.input = self.input.get(index + 1..).unwrap_or(&[]);
                return Some(result);
            }
            if shift > 63 {
                return None;
            }
        }
        None
    }

    /// Steps over a LEB128 number.
    #[inline]
    pub(super) fn skip_leb(&mut self) -> Option<()> {
        let end = self.input.iter().position(|&byte| byte & 0x80 == 0)?;
        self.input = self.input.get(end + 1..)?;
        Some(())
    }

    /// A NUL-terminated string's bytes (without the NUL).
    #[inline]
    pub(super) fn cstr(&mut self) -> Option<&'input [u8]> {
        let end = memchr::memchr(0, self.input)?;
        let text = self.input.get(..end)?;
        self.input = self.input.get(end + 1..)?;
        Some(text)
    }

    /// A block whose length comes first as a LEB128 number.
    #[inline]
    pub(super) fn leb_block(&mut self) -> Option<&'input [u8]> {
        let len = usize::try_from(self.uleb()?).ok()?;
        self.take(len)
    }

    /// Takes one DIE's bytes by its declaration's fixed `layout`; `None`
    /// when they run out, leaving the position anywhere (the caller reads
    /// the DIE again the general way, for its error). Its attributes are
    /// then read by [`Layout`]'s methods, each kind of DIE asking only for
    /// what it uses.
    #[inline]
    pub(super) fn read_fixed(&mut self, layout: &Layout) -> Option<Die<'input>> {
        let (len, name_len) = layout.die_len(self.position())?;
        let endian = self.endian;
        let bytes = self.take(len)?;
        Some(Die {
            bytes,
            name_len,
            endian,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(bytes: &[u8]) -> Entries<'static, '_> {
        static NO_ABBREVIATIONS: std::sync::OnceLock<gimli::Abbreviations> =
            std::sync::OnceLock::new();
        let abbreviations = NO_ABBREVIATIONS.get_or_init(gimli::Abbreviations::default);
        let abbrevs = super::super::abbrevs::tests::empty();
        Entries {
            input: bytes,
            end_offset: bytes.len(),
            all: bytes,
            root_offset: 0,
            endian: RunTimeEndian::Little,
            encoding: gimli::Encoding {
                format: gimli::Format::Dwarf32,
                version: 5,
                address_size: 8,
            },
            abbrevs,
            abbreviations,
        }
    }

    /// The fast LEB128 readers agree with gimli's on every length and on
    /// the edges of 64 bits, and leave overlong numbers to gimli.
    #[test]
    fn leb128_agrees_with_gimli() {
        let mut unsigned = vec![0u64, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX];
        unsigned.extend((0..64).map(|shift| 1u64 << shift));
        for value in unsigned {
            let mut bytes = Vec::new();
            let mut rest = value;
            loop {
                let byte = (rest & 0x7f) as u8;
                rest >>= 7;
                if rest == 0 {
                    bytes.push(byte);
                    break;
                }
                bytes.push(byte | 0x80);
            }
            let expected =
                gimli::Reader::read_uleb128(&mut Reader::new(&bytes, RunTimeEndian::Little));
            assert_eq!(reader(&bytes).uleb(), expected.ok(), "{value}");
        }
        let mut signed = vec![0i64, 1, -1, 63, 64, -64, -65, i64::MAX, i64::MIN, -300];
        signed.extend((0..63).map(|shift| -(1i64 << shift)));
        for value in signed {
            let mut bytes = Vec::new();
            let mut rest = value;
            loop {
                let byte = (rest & 0x7f) as u8;
                rest >>= 7;
                let done = (rest == 0 && byte & 0x40 == 0) || (rest == -1 && byte & 0x40 != 0);
                if done {
                    bytes.push(byte);
                    break;
                }
                bytes.push(byte | 0x80);
            }
            let expected =
                gimli::Reader::read_sleb128(&mut Reader::new(&bytes, RunTimeEndian::Little));
            assert_eq!(reader(&bytes).sleb(), expected.ok(), "{value}");
        }
        // Eleven bytes, or a tenth byte with more than the top bit: gimli's.
        let overlong = [0xffu8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert_eq!(reader(&overlong).uleb(), None);
        assert_eq!(reader(&[0x80]).uleb(), None);
        assert_eq!(reader(&[0x80]).sleb(), None);
    }

    #[test]
    fn reads_stop_at_the_end() {
        let mut entries = reader(&[1, 2, 3]);
        assert_eq!(entries.u16(), Some(0x0201));
        assert_eq!(entries.u16(), None);
        assert_eq!(entries.next_offset(), 2);
        assert_eq!(entries.u8(), Some(3));
        assert!(entries.is_empty());
        let mut entries = reader(b"abc\0def");
        assert_eq!(entries.cstr(), Some(&b"abc"[..]));
        assert_eq!(entries.cstr(), None);
        assert_eq!(entries.next_offset(), 4);
        assert!(entries.seek(7).is_err());
        assert!(entries.seek(1).is_ok());
        assert_eq!(entries.next_offset(), 1);
    }
}
