//! Decoding the type section into the model.
//!
//! Two passes: [`count_records`] walks the records by their `info` words
//! only (checking kinds and lengths), so that the second pass, [`decode`],
//! knows the number of types and can check every referenced id as it goes.

use super::names::{NameArena, Names};
use crate::error::{ErrorKind, FormatError};
use crate::raw::{self, Endian, Kind};
use crate::types::*;

/// Reads fields of the type section; every read is bounds-checked.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    endian: Endian,
}

impl Cursor<'_> {
    #[inline]
    fn u32(&mut self) -> Result<u32, ErrorKind> {
        let bytes = self
            .data
            .get(self.pos..self.pos + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .ok_or_else(|| ErrorKind::TruncatedType {
                needed: 4,
                available: self.remaining(),
            })?;
        self.pos += 4;
        Ok(self.endian.u32(bytes))
    }

    fn remaining(&self) -> u64 {
        self.data.len().saturating_sub(self.pos) as u64
    }
}

/// Counts the records of the type section, checking each `info` word and
/// that each record lies within the section.
pub(super) fn count_records(
    types: &[u8],
    types_at: u64,
    endian: Endian,
    first_id: u32,
) -> Result<u32, FormatError> {
    let mut cursor = Cursor {
        data: types,
        pos: 0,
        endian,
    };
    let mut count: u32 = 0;
    while cursor.pos < types.len() {
        let start = cursor.pos;
        let id = TypeId(first_id.saturating_add(count));
        let fail = |kind: ErrorKind| {
            FormatError::new(kind)
                .at(types_at + start as u64)
                .for_type(id)
        };
        let needed = raw::TYPE_RECORD_LEN as u64;
        if cursor.remaining() < needed {
            return Err(fail(ErrorKind::TruncatedType {
                needed,
                available: cursor.remaining(),
            }));
        }
        cursor.pos += 4;
        let info = cursor.u32().map_err(fail)?;
        cursor.pos += 4;
        if info & !raw::INFO_MASK != 0 {
            return Err(fail(ErrorKind::InfoReservedBits(info)));
        }
        let kind = raw::info_kind(info);
        let vlen = u32::from(raw::info_vlen(info));
        let trailing = kind
            .trailing_len(vlen)
            .ok_or(ErrorKind::UnknownKind(kind.0))
            .map_err(fail)?;
        if cursor.remaining() < trailing as u64 {
            return Err(fail(ErrorKind::TruncatedType {
                needed: (raw::TYPE_RECORD_LEN + trailing) as u64,
                available: (types.len() - start) as u64,
            }));
        }
        cursor.pos += trailing;
        count = count
            .checked_add(1)
            .ok_or(ErrorKind::TooManyTypes(u64::from(u32::MAX) + 1))
            .map_err(fail)?;
    }
    Ok(count)
}

/// What a record decoder needs to know.
pub(super) struct Context<'n, 'a> {
    pub names: &'n Names<'a>,
    /// Where names that are not UTF-8 go; without one they are errors.
    pub arena: Option<&'a NameArena>,
    /// The largest valid type id (base and own types).
    pub last_id: u32,
    pub endian: Endian,
}

/// The fixed part of a record.
struct Head {
    name_off: u32,
    kind: Kind,
    vlen: u32,
    kind_flag: bool,
    size_or_type: u32,
}

impl Head {
    fn no_name(&self) -> Result<(), ErrorKind> {
        if self.name_off != 0 {
            return Err(ErrorKind::UnexpectedName(self.name_off));
        }
        Ok(())
    }

    fn no_vlen(&self) -> Result<(), ErrorKind> {
        if self.vlen != 0 {
            return Err(ErrorKind::UnexpectedVlen(self.vlen));
        }
        Ok(())
    }

    fn no_kind_flag(&self) -> Result<(), ErrorKind> {
        if self.kind_flag {
            return Err(ErrorKind::UnexpectedKindFlag);
        }
        Ok(())
    }

    /// The checks of kinds that are a (maybe named) reference and nothing
    /// else.
    fn plain(&self) -> Result<(), ErrorKind> {
        self.no_vlen()?;
        self.no_kind_flag()
    }
}

/// Decodes `count` records into `out`.
pub(super) fn decode<'a>(
    types: &'a [u8],
    types_at: u64,
    first_id: u32,
    count: u32,
    cx: &Context<'_, 'a>,
    out: &mut Vec<Type<'a>>,
) -> Result<(), FormatError> {
    out.reserve(count as usize);
    let mut cursor = Cursor {
        data: types,
        pos: 0,
        endian: cx.endian,
    };
    for index in 0..count {
        // The field being decoded, so that an error points at it.
        let start = cursor.pos;
        let id = TypeId(first_id.saturating_add(index));
        let ty = decode_one(&mut cursor, cx)
            .map_err(|e| FormatError::new(e).at(types_at + start as u64).for_type(id))?;
        out.push(ty);
    }
    Ok(())
}

fn decode_one<'a>(c: &mut Cursor<'a>, cx: &Context<'_, 'a>) -> Result<Type<'a>, ErrorKind> {
    let name_off = c.u32()?;
    let info = c.u32()?;
    let size_or_type = c.u32()?;
    let head = Head {
        name_off,
        kind: raw::info_kind(info),
        vlen: u32::from(raw::info_vlen(info)),
        kind_flag: raw::info_kind_flag(info),
        size_or_type,
    };
    let name = |off: u32| cx.names.get(off, cx.arena).map_err(|e| e.kind);
    // A member's or parameter's name. A string section is at most 4 GiB, so
    // the error is for a string section that somehow is not.
    let short_name = |off: u32| {
        let text = name(off)?;
        match Name::new(text) {
            Some(name) => Ok(name),
            None => Err(ErrorKind::StringsTooLarge(text.len() as u64)),
        }
    };
    let reference = |id: u32| -> Result<TypeId, ErrorKind> {
        if id > cx.last_id {
            return Err(ErrorKind::TypeIdOutOfRange(id));
        }
        Ok(TypeId(id))
    };
    let ty = match head.kind {
        Kind::INT => {
            head.plain()?;
            let data = c.u32()?;
            // The kernel refuses bits 28-31 (`BTF_INT_MASK`,
            // btf_int_check_meta) and lets bits 8-15 through, which mean
            // nothing to it or to libbpf: they are read as clear (writing
            // the type back clears them).
            if data & 0xf000_0000 != 0 {
                return Err(ErrorKind::BadInt("reserved bits set"));
            }
            let data = data & raw::INT_DATA_MASK;
            let (encoding, offset, bits) = (
                raw::int_encoding(data),
                raw::int_offset(data),
                raw::int_bits(data),
            );
            raw::check_int(head.size_or_type, encoding, offset, bits).map_err(ErrorKind::BadInt)?;
            Type::Int(Int {
                name: name(head.name_off)?,
                size: head.size_or_type,
                encoding: IntEncoding(encoding),
                offset,
                bits,
            })
        }
        Kind::PTR | Kind::VOLATILE | Kind::CONST | Kind::RESTRICT => {
            head.no_name()?;
            head.plain()?;
            let to = reference(head.size_or_type)?;
            match head.kind {
                Kind::PTR => Type::Ptr(to),
                Kind::VOLATILE => Type::Volatile(to),
                Kind::CONST => Type::Const(to),
                _ => Type::Restrict(to),
            }
        }
        Kind::ARRAY => {
            head.no_name()?;
            head.plain()?;
            if head.size_or_type != 0 {
                return Err(ErrorKind::NonZeroField(head.size_or_type));
            }
            let elem = reference(c.u32()?)?;
            let index = reference(c.u32()?)?;
            Type::Array(Array {
                elem,
                index,
                nelems: c.u32()?,
            })
        }
        Kind::STRUCT | Kind::UNION => {
            let mut members = Vec::with_capacity(head.vlen as usize);
            for _ in 0..head.vlen {
                let name = short_name(c.u32()?)?;
                let ty = reference(c.u32()?)?;
                let (bitfield_size, bit_offset) = raw::member_bitfield(head.kind_flag, c.u32()?);
                members.push(Member {
                    name,
                    ty,
                    bit_offset,
                    bitfield_size,
                });
            }
            let composite = Composite {
                name: name(head.name_off)?,
                size: head.size_or_type,
                members: members.into_boxed_slice(),
                kind_flag: head.kind_flag,
            };
            if head.kind == Kind::STRUCT {
                Type::Struct(composite)
            } else {
                Type::Union(composite)
            }
        }
        Kind::ENUM | Kind::ENUM64 => {
            let wide = head.kind == Kind::ENUM64;
            let mut values = Vec::with_capacity(head.vlen as usize);
            for _ in 0..head.vlen {
                let name = name(c.u32()?)?;
                let low = c.u32()?;
                let value = if wide {
                    raw::enum64_value(low, c.u32()?)
                } else {
                    raw::enum_value_widen(low, head.kind_flag)
                };
                values.push(EnumValue { name, value });
            }
            let e = Enum {
                name: name(head.name_off)?,
                size: head.size_or_type,
                signed: head.kind_flag,
                values: values.into_boxed_slice(),
            };
            if wide {
                Type::Enum64(e)
            } else {
                Type::Enum(e)
            }
        }
        Kind::FWD => {
            head.no_vlen()?;
            if head.size_or_type != 0 {
                return Err(ErrorKind::NonZeroField(head.size_or_type));
            }
            Type::Fwd(Fwd {
                name: name(head.name_off)?,
                union: head.kind_flag,
            })
        }
        Kind::TYPEDEF => {
            head.plain()?;
            Type::Typedef(Named {
                name: name(head.name_off)?,
                ty: reference(head.size_or_type)?,
            })
        }
        Kind::TYPE_TAG => {
            // kind_flag: an attribute (the kernel accepts it since the BTF
            // attributes of 6.x; Linux 7.x vmlinux has `address_space(1)`).
            head.no_vlen()?;
            Type::TypeTag(TypeTag {
                name: name(head.name_off)?,
                ty: reference(head.size_or_type)?,
                attribute: head.kind_flag,
            })
        }
        Kind::FUNC => {
            head.no_kind_flag()?;
            let linkage =
                raw::linkage_from_value(head.vlen).ok_or(ErrorKind::BadLinkage(head.vlen))?;
            Type::Func(Object {
                name: name(head.name_off)?,
                ty: reference(head.size_or_type)?,
                linkage,
            })
        }
        Kind::FUNC_PROTO => {
            head.no_name()?;
            head.no_kind_flag()?;
            let ret = reference(head.size_or_type)?;
            let mut params = Vec::with_capacity(head.vlen as usize);
            for _ in 0..head.vlen {
                let name = short_name(c.u32()?)?;
                params.push(Param {
                    name,
                    ty: reference(c.u32()?)?,
                });
            }
            Type::FuncProto(FuncProto {
                ret,
                params: params.into_boxed_slice(),
            })
        }
        Kind::VAR => {
            head.plain()?;
            let ty = reference(head.size_or_type)?;
            let value = c.u32()?;
            let linkage = raw::linkage_from_value(value).ok_or(ErrorKind::BadLinkage(value))?;
            Type::Var(Object {
                name: name(head.name_off)?,
                ty,
                linkage,
            })
        }
        Kind::DATASEC => {
            head.no_kind_flag()?;
            let mut vars = Vec::with_capacity(head.vlen as usize);
            for _ in 0..head.vlen {
                let ty = reference(c.u32()?)?;
                let offset = c.u32()?;
                vars.push(VarSecInfo {
                    ty,
                    offset,
                    size: c.u32()?,
                });
            }
            Type::Datasec(Datasec {
                name: name(head.name_off)?,
                size: head.size_or_type,
                vars: vars.into_boxed_slice(),
            })
        }
        Kind::FLOAT => {
            head.plain()?;
            Type::Float(Float {
                name: name(head.name_off)?,
                size: head.size_or_type,
            })
        }
        Kind::DECL_TAG => {
            // kind_flag: an attribute, as for TYPE_TAG.
            head.no_vlen()?;
            let ty = reference(head.size_or_type)?;
            let component_idx = c.u32()? as i32;
            Type::DeclTag(DeclTag {
                name: name(head.name_off)?,
                ty,
                component_idx,
                attribute: head.kind_flag,
            })
        }
        other => return Err(ErrorKind::UnknownKind(other.0)),
    };
    Ok(ty)
}
