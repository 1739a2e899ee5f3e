//! Phase one of writing: check every type against the format's limits,
//! intern every name, and size the sections.

use crate::error::{Error, ErrorKind};
use crate::raw::{self, Kind};
use crate::strings::{StringIndex, StringTable};
use crate::types::{Btf, Composite, Type, TypeId};

/// Everything phase two needs besides the types.
#[derive(Debug)]
pub(super) struct Plan {
    /// Every name offset, in the order [`super::emit`] writes them.
    pub name_offsets: Vec<u32>,
    /// The split's (or standalone's) own string section.
    pub strings: StringTable,
    /// Length of the type section in bytes.
    pub type_len: u32,
}

struct Interner<'i, 'b> {
    table: StringTable,
    base: Option<&'i StringIndex<'b>>,
    offsets: Vec<u32>,
}

impl Interner<'_, '_> {
    #[inline]
    fn name(&mut self, name: &str) -> Result<(), Error> {
        let base_offset = self.base.and_then(|base| base.find(name));
        let offset = match base_offset {
            Some(offset) => offset,
            None => self.table.add(name)?,
        };
        self.offsets.push(offset);
        Ok(())
    }
}

pub(super) fn reserve(
    btf: &Btf<'_>,
    base: Option<&StringIndex<'_>>,
    strings: Option<StringTable>,
) -> Result<Plan, Error> {
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
    let mut interner = Interner {
        table,
        base,
        offsets: Vec::with_capacity(btf.types.len() * 2),
    };
    let mut type_len: u64 = 0;
    for (index, ty) in btf.types.iter().enumerate() {
        let id = TypeId(btf.base_type_count + 1 + index as u32);
        type_len += check_type(ty, last_id, &mut interner).map_err(|e| e.for_type(id))?;
    }
    let type_len = u32::try_from(type_len).map_err(|_| ErrorKind::SectionTooLarge(type_len))?;
    let mut strings = interner.table;
    strings.ensure_not_empty();
    let end = u64::from(strings.start()) + strings.len() as u64;
    if end - 1 > u64::from(raw::MAX_NAME_OFFSET) {
        return Err(ErrorKind::StringsTooLarge(end).into());
    }
    Ok(Plan {
        name_offsets: interner.offsets,
        strings,
        type_len,
    })
}

/// Checks one type, interns its names, returns its record length.
fn check_type(ty: &Type<'_>, last_id: u32, names: &mut Interner<'_, '_>) -> Result<u64, Error> {
    let check_ref = |id: TypeId| -> Result<(), Error> {
        if id.0 > last_id {
            Err(ErrorKind::TypeIdOutOfRange(id.0).into())
        } else {
            Ok(())
        }
    };
    let vlen = |n: usize| -> Result<u32, Error> {
        if n > raw::MAX_VLEN as usize {
            Err(ErrorKind::VlenTooLarge(n).into())
        } else {
            Ok(n as u32)
        }
    };
    let kind = Kind::of(ty);
    let entries = match ty {
        Type::Int(t) => {
            raw::check_int(t.size, t.encoding.0, t.offset, t.bits).map_err(ErrorKind::BadInt)?;
            names.name(t.name)?;
            0
        }
        Type::Ptr(to) | Type::Volatile(to) | Type::Const(to) | Type::Restrict(to) => {
            check_ref(*to)?;
            0
        }
        Type::Array(a) => {
            check_ref(a.elem)?;
            check_ref(a.index)?;
            0
        }
        Type::Struct(c) | Type::Union(c) => {
            names.name(c.name)?;
            check_members(c, &check_ref, names)?;
            vlen(c.members.len())?
        }
        Type::Enum(e) => {
            names.name(e.name)?;
            for v in &e.values {
                if !raw::enum_value_fits(v.value) {
                    return Err(ErrorKind::EnumValueTooLarge(v.value).into());
                }
                names.name(v.name)?;
            }
            vlen(e.values.len())?
        }
        Type::Enum64(e) => {
            names.name(e.name)?;
            for v in &e.values {
                names.name(v.name)?;
            }
            vlen(e.values.len())?
        }
        Type::Fwd(f) => {
            names.name(f.name)?;
            0
        }
        Type::Typedef(n) | Type::TypeTag(n) => {
            names.name(n.name)?;
            check_ref(n.ty)?;
            0
        }
        Type::Func(o) | Type::Var(o) => {
            names.name(o.name)?;
            check_ref(o.ty)?;
            0
        }
        Type::FuncProto(p) => {
            check_ref(p.ret)?;
            for param in &p.params {
                names.name(param.name)?;
                check_ref(param.ty)?;
            }
            vlen(p.params.len())?
        }
        Type::Datasec(d) => {
            names.name(d.name)?;
            for v in &d.vars {
                check_ref(v.ty)?;
            }
            vlen(d.vars.len())?
        }
        Type::Float(f) => {
            names.name(f.name)?;
            0
        }
        Type::DeclTag(t) => {
            names.name(t.name)?;
            check_ref(t.ty)?;
            0
        }
    };
    let trailing = kind
        .trailing_len(entries)
        .ok_or(ErrorKind::UnknownKind(kind.0))?;
    Ok((raw::TYPE_RECORD_LEN + trailing) as u64)
}

fn check_members(
    c: &Composite<'_>,
    check_ref: &impl Fn(TypeId) -> Result<(), Error>,
    names: &mut Interner<'_, '_>,
) -> Result<(), Error> {
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
        names.name(m.name)?;
        check_ref(m.ty)?;
    }
    Ok(())
}
