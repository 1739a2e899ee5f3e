//! Serialization of a [`Btf`] into a raw BTF blob, in either byte order.
//!
//! Two phases, as the `object` crate writes files: `reserve` walks the
//! types once, checks every limit of the format and interns every name
//! (so the string section and all offsets are known), then `emit` writes
//! header, type records and strings into a buffer of the exact size. Input
//! that the format cannot hold is an [`FormatError`], never a truncation.
//!
//! The output is a function of the input only: names are interned in type
//! order (the type's name, then its members', values' or parameters'), and
//! no hash order leaks out. A big BTF is reserved and emitted on two
//! threads (see `intern` for how the names are split between them), with
//! the same bytes as one thread would write.
//!
//! pahole's string section is in a different order: `btf__dedup` dedups
//! strings *before* types, visiting the pre-dedup types in id order, and
//! keeps the strings of types it then drops. To reproduce it byte for byte,
//! intern every name of the pre-dedup types into a [`StringTable`] in that
//! order and pass it as [`WriteOptions::strings`]; the writer then only
//! looks names up (and appends the rare new one).
//!
//! Split BTF (`btf.base_type_count > 0`): type ids are absolute already;
//! the split's strings start at `btf.base_str_len`. With
//! [`write_split`], a name the base already holds reuses the base's offset,
//! as libbpf does for split BTF; [`write()`] always adds names to the split's
//! own section. [`write_with`] takes [`WriteOptions`] for the rest: a
//! string table to start from (to keep an existing section's offsets, e.g.
//! when rewriting a parsed BTF; see `read::Parsed::string_table`).

mod emit;
mod intern;
mod reserve;

use crate::error::{ErrorKind, FormatError};
use crate::raw::{Endian, HeaderFormat};
use crate::strings::{StringIndex, StringTable};
use crate::types::Btf;

/// How [`write_with`] writes.
#[derive(Debug, Default)]
pub struct WriteOptions<'i, 'b> {
    /// Byte order of the output.
    pub endian: Endian,
    /// For a split: the base's strings. A name found there is written with
    /// the base's offset instead of being added to the split. Must end at
    /// `btf.base_str_len`.
    pub base_strings: Option<&'i StringIndex<'b>>,
    /// The table to add names to; its existing strings keep their offsets.
    /// Must start at 0 for a standalone BTF and at `btf.base_str_len` for a
    /// split. Default: an empty table.
    pub strings: Option<StringTable>,
    /// The header (24 or 32 bytes) and whether a kind layout section
    /// follows the types. Default: the 24-byte header.
    pub header: HeaderFormat,
}

/// Serializes `btf` (standalone, or split without base string reuse).
pub fn write(btf: &Btf<'_>, endian: Endian) -> Result<Vec<u8>, FormatError> {
    write_with(
        btf,
        WriteOptions {
            endian,
            ..WriteOptions::default()
        },
    )
}

/// Serializes a split `btf`, looking every name up in the base's strings
/// first, as libbpf does. `base` must index the base's string sections,
/// ending at `btf.base_str_len` (e.g. `read::Parsed::string_index` of the
/// base).
pub fn write_split(
    btf: &Btf<'_>,
    base: &StringIndex<'_>,
    endian: Endian,
) -> Result<Vec<u8>, FormatError> {
    write_with(
        btf,
        WriteOptions {
            endian,
            base_strings: Some(base),
            ..WriteOptions::default()
        },
    )
}

/// Every name [`write_with`] looks up in `base_strings` to write `btf`:
/// what a [`StringIndex`] for it needs to know (see
/// [`StringIndex::narrowed_to`]).
pub fn names_looked_up<'a>(btf: &Btf<'a>) -> Vec<&'a str> {
    reserve::names_of(btf)
}

/// Serializes `btf` as `options` say.
pub fn write_with(btf: &Btf<'_>, options: WriteOptions<'_, '_>) -> Result<Vec<u8>, FormatError> {
    if let Some(base) = options.base_strings {
        if base.end() != btf.base_str_len {
            return Err(ErrorKind::BaseStringsMismatch {
                expected: btf.base_str_len,
                found: base.end(),
            }
            .into());
        }
    }
    if let Some(table) = &options.strings {
        if table.start() != btf.base_str_len {
            return Err(ErrorKind::BaseStringsMismatch {
                expected: btf.base_str_len,
                found: table.start(),
            }
            .into());
        }
    }
    let plan = reserve::reserve(btf, options.base_strings, options.strings, options.header)?;
    emit::emit(btf, plan, options.endian)
}

#[cfg(test)]
mod tests;
