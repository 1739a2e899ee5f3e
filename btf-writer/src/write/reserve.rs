//! Phase one of writing: check every type against the format's limits,
//! intern every name, and size the sections.
//!
//! A big BTF is checked in two halves on two threads and its names are
//! interned by [`super::intern`]; a small one, or one the parallel path
//! finds something wrong with, goes the sequential way, which also names
//! the first type at fault exactly.

use super::intern;
use crate::error::{ErrorKind, FormatError};
use crate::raw::{self, Header, HeaderFormat};
use crate::strings::{StringIndex, StringTable};
use crate::types::{Btf, Composite, Type, TypeId};

/// Below this many types, two threads cost more than they save.
const PARALLEL_MIN_TYPES: usize = 8192;

/// Everything phase two needs besides the types.
#[derive(Debug)]
pub(super) struct Plan {
    /// Every name offset, in the order [`super::emit`] writes them, filed
    /// by [`intern::parity`] of the name (see [`super::intern`]).
    pub name_offsets: [Vec<u32>; 2],
    /// The output: room for the header, the type section and the kind
    /// layout section if any (zeros), then the split's (or standalone's)
    /// own string section.
    pub out: Vec<u8>,
    /// Length of the type section in bytes.
    pub type_len: u32,
    /// Length of the string section in bytes.
    pub str_len: u32,
    /// Where the type section may be cut to emit its halves on two
    /// threads; `None` for a small BTF.
    pub cut: Option<Cut>,
    /// The header to write (and whether a kind layout section follows the
    /// types); `out` has room for it.
    pub format: HeaderFormat,
}

/// A type boundary inside the type section.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cut {
    /// Types before the cut.
    pub types: usize,
    /// Bytes of their records.
    pub bytes: usize,
    /// Their names, per parity.
    pub names: [usize; 2],
}

/// Where [`check_type`] sends each name, in the order emit writes them.
trait Names<'a> {
    fn name(&mut self, name: &'a str) -> Result<(), FormatError>;
}

/// Interns on the spot: the sequential path.
struct Interner<'i, 'b> {
    table: StringTable,
    base: Option<&'i StringIndex<'b>>,
    offsets: [Vec<u32>; 2],
}

impl<'a> Names<'a> for Interner<'_, '_> {
    #[inline]
    fn name(&mut self, name: &'a str) -> Result<(), FormatError> {
        let base_offset = self.base.and_then(|base| base.find(name));
        let offset = match base_offset {
            Some(offset) => offset,
            None => self.table.add(name)?,
        };
        self.offsets[intern::parity(name)].push(offset);
        Ok(())
    }
}

/// Only collects, for [`intern::intern`].
struct Collector<'a> {
    names: Vec<&'a str>,
    per_parity: [usize; 2],
}

impl<'a> Names<'a> for Collector<'a> {
    #[inline]
    fn name(&mut self, name: &'a str) -> Result<(), FormatError> {
        self.names.push(name);
        self.per_parity[intern::parity(name)] += 1;
        Ok(())
    }
}

/// The names writing `btf` looks up, in its order (a type the write would
/// refuse may give only some of its own: the write then fails).
pub(super) fn names_of<'a>(btf: &Btf<'a>) -> Vec<&'a str> {
    let mut names = Collector {
        names: Vec::with_capacity(btf.types.len() * 2),
        per_parity: [0; 2],
    };
    for ty in &btf.types {
        let _ = check_type(ty, u32::MAX, &mut names);
    }
    names.names
}

pub(super) fn reserve(
    btf: &Btf<'_>,
    base: Option<&StringIndex<'_>>,
    strings: Option<StringTable>,
    format: HeaderFormat,
) -> Result<Plan, FormatError> {
    reserve_from(btf, base, strings, format, PARALLEL_MIN_TYPES)
}

/// Where the string section starts in a blob of `format` with `type_len`
/// bytes of types.
fn strings_at(format: HeaderFormat, type_len: u32) -> usize {
    // At most 4 GiB + 120 bytes: fits usize on the 64-bit hosts we build for.
    Header::for_sections(format, type_len, 0).strings_at() as usize
}

/// [`reserve`], on two threads from `parallel_min_types` types on.
pub(super) fn reserve_from(
    btf: &Btf<'_>,
    base: Option<&StringIndex<'_>>,
    strings: Option<StringTable>,
    format: HeaderFormat,
    parallel_min_types: usize,
) -> Result<Plan, FormatError> {
    let last_id = u64::from(btf.base_type_count) + btf.types.len() as u64;
    if last_id > u64::from(raw::MAX_TYPE_ID) {
        return Err(ErrorKind::TooManyTypes(last_id).into());
    }
    // Fits u32: checked just above.
    let last_id = last_id as u32;
    let split = btf.base_type_count > 0 || btf.base_str_len > 0;
    let table = match strings {
        Some(table) => table,
        None if split => StringTable::new_split(btf.base_str_len),
        None => StringTable::new(),
    };
    if btf.types.len() >= parallel_min_types.max(2) {
        if let Some(plan) = reserve_parallel(btf, last_id, base, &table, format) {
            return plan;
        }
    }
    reserve_sequential(btf, last_id, base, table, format)
}

fn reserve_sequential(
    btf: &Btf<'_>,
    last_id: u32,
    base: Option<&StringIndex<'_>>,
    table: StringTable,
    format: HeaderFormat,
) -> Result<Plan, FormatError> {
    let mut interner = Interner {
        table,
        base,
        // About two names a type, one of each parity.
        offsets: [(); 2].map(|()| Vec::with_capacity(btf.types.len())),
    };
    let mut type_len: u64 = 0;
    for (index, ty) in btf.types.iter().enumerate() {
        let id = TypeId(btf.base_type_count + 1 + index as u32);
        type_len += check_type(ty, last_id, &mut interner).map_err(|e| e.for_type(id))?;
    }
    let type_len = u32::try_from(type_len).map_err(|_| ErrorKind::SectionTooLarge(type_len))?;
    let mut strings = interner.table;
    strings.ensure_not_empty();
    let start = strings.start();
    let strings = strings.into_bytes();
    let str_len = check_strings(start, strings.len())?;
    let mut out = vec![0; strings_at(format, type_len)];
    out.extend_from_slice(&strings);
    Ok(Plan {
        name_offsets: interner.offsets,
        out,
        type_len,
        str_len,
        cut: None,
        format,
    })
}

/// The plan, or `None` if some type or name is at fault (the sequential
/// path then says which).
fn reserve_parallel<'a>(
    btf: &Btf<'a>,
    last_id: u32,
    base: Option<&StringIndex<'_>>,
    table: &StringTable,
    format: HeaderFormat,
) -> Option<Result<Plan, FormatError>> {
    let (first, second) = btf.types.split_at(btf.types.len() / 2);
    let collect = |types: &[Type<'a>]| {
        // About two names a type (vmlinux: 1.9): few regrowths.
        let mut names = Collector {
            names: Vec::with_capacity(types.len() * 2),
            per_parity: [0; 2],
        };
        let mut type_len: u64 = 0;
        for ty in types {
            type_len += check_type(ty, last_id, &mut names).ok()?;
        }
        Some((names, type_len))
    };
    let (first, second) = rayon::join(|| collect(first), || collect(second));
    let ((first, first_len), (second, second_len)) = (first?, second?);
    let type_len = u32::try_from(first_len + second_len).ok()?;
    let cut = Cut {
        types: btf.types.len() / 2,
        bytes: usize::try_from(first_len).ok()?,
        names: first.per_parity,
    };
    let per_parity = [
        first.per_parity[0] + second.per_parity[0],
        first.per_parity[1] + second.per_parity[1],
    ];
    let strings_at = strings_at(format, type_len);
    let names = [first.names.as_slice(), second.names.as_slice()];
    let interned = intern::intern(&names, per_parity, base, table, strings_at)?;
    let str_len = interned.out.len() - strings_at;
    Some(check_strings(table.start(), str_len).map(|str_len| Plan {
        name_offsets: interned.offsets,
        out: interned.out,
        type_len,
        str_len,
        cut: Some(cut),
        format,
    }))
}

/// Checks the kernel's limit on string offsets against a (non-empty)
/// section of `len` bytes that starts at absolute offset `start`; returns
/// the length.
fn check_strings(start: u32, len: usize) -> Result<u32, FormatError> {
    let end = u64::from(start) + len as u64;
    if end.saturating_sub(1) > u64::from(raw::MAX_NAME_OFFSET) {
        return Err(ErrorKind::StringsTooLarge(end).into());
    }
    // Fits u32: below MAX_NAME_OFFSET.
    Ok(len as u32)
}

/// Checks one type, sends its names to `names` (the record's own, then
/// its entries', in the order `emit` writes them), returns its record
/// length.
fn check_type<'a>(
    ty: &Type<'a>,
    last_id: u32,
    names: &mut impl Names<'a>,
) -> Result<u64, FormatError> {
    if let Some(name) = ty.name_field() {
        names.name(name)?;
    }
    match ty {
        Type::Int(t) => {
            raw::check_int(t.size, t.encoding.0, t.offset, t.bits).map_err(ErrorKind::BadInt)?;
        }
        Type::Struct(c) | Type::Union(c) => check_members(c, names)?,
        Type::Enum(e) => {
            for v in &e.values {
                if !raw::enum_value_fits(v.value) {
                    return Err(ErrorKind::EnumValueTooLarge(v.value).into());
                }
                names.name(v.name)?;
            }
        }
        Type::Enum64(e) => {
            for v in &e.values {
                names.name(v.name)?;
            }
        }
        Type::FuncProto(p) => {
            for param in &p.params {
                names.name(param.name.as_str())?;
            }
        }
        _ => {}
    }
    let mut bad_ref = None;
    ty.for_each_ref(|id| {
        if bad_ref.is_none() && id.0 > last_id {
            bad_ref = Some(id.0);
        }
    });
    if let Some(id) = bad_ref {
        return Err(ErrorKind::TypeIdOutOfRange(id).into());
    }
    let vlen = ty.vlen();
    if vlen > raw::MAX_VLEN as usize {
        return Err(ErrorKind::VlenTooLarge(vlen).into());
    }
    let kind = ty.kind();
    let trailing = kind
        .trailing_len(vlen as u32)
        .ok_or(ErrorKind::UnknownKind(kind.0))?;
    Ok((raw::TYPE_RECORD_LEN + trailing) as u64)
}

fn check_members<'a>(c: &Composite<'a>, names: &mut impl Names<'a>) -> Result<(), FormatError> {
    for (index, m) in c.members.iter().enumerate() {
        if raw::member_offset(c.kind_flag, m.bitfield_size, m.bit_offset).is_none() {
            let kind = if c.kind_flag {
                ErrorKind::BitfieldOffsetTooLarge {
                    member: index,
                    bit_offset: m.bit_offset,
                }
            } else {
                ErrorKind::BitfieldWithoutKindFlag { member: index }
            };
            return Err(kind.into());
        }
        names.name(m.name.as_str())?;
    }
    Ok(())
}
