//! Parsing one raw BTF blob (standalone or split on a base) into
//! [`Parsed`]: the header, the string sections and the type records.

use super::decode;
use super::header;
use super::names::{self, NameArena, StringSection};
use crate::error::{ErrorKind, FormatError};
use crate::raw::{Endian, Header};
use crate::strings::{StringIndex, StringTable};
use crate::types::Btf;

/// A parsed BTF blob.
#[derive(Clone, Debug)]
pub struct Parsed<'a> {
    /// The types; for a split, `base_type_count` and `base_str_len` are the
    /// base's totals.
    pub btf: Btf<'a>,
    /// Byte order of the blob.
    pub endian: Endian,
    /// The header as read.
    pub header: Header,
    /// The string sections names may point into: the bases' first, this
    /// blob's last.
    names: names::Names<'a>,
}

impl<'a> Parsed<'a> {
    /// Number of type ids this BTF and its bases define (excluding void):
    /// the `base_type_count` of a split on top of it.
    pub fn total_type_count(&self) -> u32 {
        self.btf.base_type_count + self.btf.count()
    }

    /// End of the string sections (this blob's and its bases'): the
    /// `base_str_len` of a split on top of it.
    pub fn str_end(&self) -> u32 {
        self.names.sections.last().map_or(0, |s| s.end())
    }

    /// This blob's own string section.
    pub fn strings(&self) -> StringSection<'a> {
        self.names
            .sections
            .last()
            .copied()
            .unwrap_or_else(|| StringSection::new(0, &[]))
    }

    /// The name at absolute string offset `offset` (in this blob or a
    /// base).
    /// A name that is not UTF-8 is an error here.
    pub fn string_at(&self, offset: u32) -> Result<&'a str, FormatError> {
        self.names.get(offset, None)
    }

    /// A name → offset index of all string sections, for writing a split on
    /// top of this BTF with [`crate::write::write_split`].
    pub fn string_index(&self) -> StringIndex<'a> {
        let mut index = StringIndex::new();
        for section in &self.names.sections {
            index.add_section(section.start, section.bytes);
        }
        index
    }

    /// [`Parsed::string_index`] for the strings in `wanted` only (see
    /// [`StringIndex::narrowed_to`]).
    pub fn string_index_for<'w>(
        &self,
        wanted: impl IntoIterator<Item = &'w str>,
    ) -> StringIndex<'a> {
        StringIndex::narrowed_to(
            self.names
                .sections
                .iter()
                .map(|section| (section.start, section.bytes)),
            wanted,
        )
    }

    /// A string table seeded with this blob's own string section: writing
    /// with it (`write::WriteOptions::strings`) keeps every existing
    /// offset, so an unchanged BTF is rewritten byte for byte.
    pub fn string_table(&self) -> Result<StringTable, FormatError> {
        let own = self.strings();
        StringTable::from_section(own.start, own.bytes)
    }
}

/// Parses a raw BTF blob in either byte order. With `base`, the blob is a
/// split BTF on top of it: its type ids continue after the base's, and
/// string offsets below the base's string length name base strings.
///
/// A name that is not UTF-8 is an error ([`ErrorKind::NameNotUtf8`]);
/// [`parse_with`] reads it, as the kernel does.
pub fn parse<'a>(data: &'a [u8], base: Option<&Parsed<'a>>) -> Result<Parsed<'a>, FormatError> {
    parse_in(data, base, None)
}

/// [`parse`], reading names that are not UTF-8 as the kernel does (any
/// bytes: its name checks are the validator's business) into `arena`, in
/// the model's form for them ([`crate::strings::RAW_NAME_MARK`]); writing
/// the result gives them their bytes back.
pub fn parse_with<'a>(
    data: &'a [u8],
    base: Option<&Parsed<'a>>,
    arena: &'a NameArena,
) -> Result<Parsed<'a>, FormatError> {
    parse_in(data, base, Some(arena))
}

fn parse_in<'a>(
    data: &'a [u8],
    base: Option<&Parsed<'a>>,
    arena: Option<&'a NameArena>,
) -> Result<Parsed<'a>, FormatError> {
    let layout = header::parse_header(data)?;
    let strings = layout.strings;
    match strings.first() {
        // libbpf allows an empty string section only for a split.
        None if base.is_none() => {
            return Err(
                FormatError::new(ErrorKind::StringSectionNoLeadingNul).at(layout.strings_at)
            );
        }
        Some(&first) if first != 0 && base.is_none() => {
            return Err(
                FormatError::new(ErrorKind::StringSectionNoLeadingNul).at(layout.strings_at)
            );
        }
        _ => {}
    }
    if strings.last().is_some_and(|&b| b != 0) {
        let last_byte = layout.strings_at + strings.len() as u64 - 1;
        return Err(FormatError::new(ErrorKind::StringSectionNotTerminated).at(last_byte));
    }

    let (base_type_count, base_str_len, mut names) = match base {
        Some(base) => (base.total_type_count(), base.str_end(), base.names.clone()),
        None => (0, 0, names::Names::default()),
    };
    names
        .sections
        .push(StringSection::new(base_str_len, strings));

    let first_id = base_type_count
        .checked_add(1)
        .ok_or(ErrorKind::TooManyTypes(u64::from(u32::MAX) + 1))?;
    let count = decode::count_records(layout.types, layout.types_at, layout.endian, first_id)?;
    let last_id = base_type_count
        .checked_add(count)
        .ok_or(ErrorKind::TooManyTypes(
            u64::from(base_type_count) + u64::from(count),
        ))?;
    let cx = decode::Context {
        names: &names,
        arena,
        last_id,
        endian: layout.endian,
    };
    let mut btf = Btf {
        types: Vec::new(),
        base_type_count,
        base_str_len,
    };
    decode::decode(
        layout.types,
        layout.types_at,
        first_id,
        count,
        &cx,
        &mut btf.types,
    )?;
    Ok(Parsed {
        btf,
        endian: layout.endian,
        header: layout.header,
        names,
    })
}
