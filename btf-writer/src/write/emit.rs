//! Phase two of writing: header, type records and strings, into a buffer of
//! the exact size. Every limit was checked by `reserve`; what could still
//! not fit is reported, not truncated.

use super::reserve::Plan;
use crate::error::{Error, ErrorKind};
use crate::raw::{self, Endian, Header, Kind};
use crate::types::{Btf, Composite, Enum, Type, TypeId};

struct Out<'p> {
    bytes: Vec<u8>,
    endian: Endian,
    names: std::slice::Iter<'p, u32>,
}

impl Out<'_> {
    #[inline]
    fn u32(&mut self, value: u32) {
        self.bytes.extend_from_slice(&self.endian.u32_bytes(value));
    }

    /// The next interned name offset, in the order `reserve` interned them.
    #[inline]
    fn name(&mut self) -> Result<u32, Error> {
        // Running out would mean reserve and emit disagree: a bug, reported
        // rather than panicking.
        self.names
            .next()
            .copied()
            .ok_or_else(|| ErrorKind::Internal("writer ran out of interned names").into())
    }

    #[inline]
    fn head(&mut self, name_off: u32, kind: Kind, vlen: usize, kind_flag: bool, size_or_type: u32) {
        // vlen was checked against MAX_VLEN by reserve.
        let vlen = u16::try_from(vlen).unwrap_or(u16::MAX);
        self.u32(name_off);
        self.u32(raw::info(kind, vlen, kind_flag));
        self.u32(size_or_type);
    }

    /// A record whose name comes first and whose third word is a size or
    /// type id, without trailing data.
    #[inline]
    fn named(&mut self, kind: Kind, kind_flag: bool, size_or_type: u32) -> Result<(), Error> {
        let name = self.name()?;
        self.head(name, kind, 0, kind_flag, size_or_type);
        Ok(())
    }
}

pub(super) fn emit(btf: &Btf<'_>, plan: &Plan, endian: Endian) -> Result<Vec<u8>, Error> {
    let str_len = u32::try_from(plan.strings.len())
        .map_err(|_| ErrorKind::SectionTooLarge(plan.strings.len() as u64))?;
    let header = Header::new(plan.type_len, str_len);
    let total = raw::HEADER_LEN as usize + plan.type_len as usize + plan.strings.len();
    let mut out = Out {
        bytes: Vec::with_capacity(total),
        endian,
        names: plan.name_offsets.iter(),
    };
    header.write_to(&mut out.bytes, endian);
    for (index, ty) in btf.types.iter().enumerate() {
        let id = TypeId(btf.base_type_count + 1 + index as u32);
        emit_type(&mut out, ty).map_err(|e| e.for_type(id))?;
    }
    let written = out.bytes.len() - raw::HEADER_LEN as usize;
    if written != plan.type_len as usize {
        return Err(ErrorKind::Internal("type section size differs from the reserved size").into());
    }
    out.bytes.extend_from_slice(plan.strings.as_bytes());
    Ok(out.bytes)
}

fn emit_type(out: &mut Out<'_>, ty: &Type<'_>) -> Result<(), Error> {
    let kind = Kind::of(ty);
    match ty {
        Type::Int(t) => {
            out.named(kind, false, t.size)?;
            out.u32(raw::int_data(t.encoding.0, t.offset, t.bits));
        }
        Type::Ptr(to) | Type::Volatile(to) | Type::Const(to) | Type::Restrict(to) => {
            out.head(0, kind, 0, false, to.0);
        }
        Type::Array(a) => {
            out.head(0, kind, 0, false, 0);
            out.u32(a.elem.0);
            out.u32(a.index.0);
            out.u32(a.nelems);
        }
        Type::Struct(c) | Type::Union(c) => emit_composite(out, kind, c)?,
        Type::Enum(e) => {
            emit_enum_head(out, kind, e)?;
            for v in &e.values {
                let name = out.name()?;
                out.u32(name);
                // Low 32 bits; reserve checked the value fits.
                out.u32(v.value as u32);
            }
        }
        Type::Enum64(e) => {
            emit_enum_head(out, kind, e)?;
            for v in &e.values {
                let name = out.name()?;
                out.u32(name);
                let (lo32, hi32) = raw::enum64_halves(v.value);
                out.u32(lo32);
                out.u32(hi32);
            }
        }
        Type::Fwd(f) => out.named(kind, f.union, 0)?,
        Type::Typedef(n) | Type::TypeTag(n) => out.named(kind, false, n.ty.0)?,
        Type::Func(o) => {
            let name = out.name()?;
            // FUNC keeps its linkage in vlen.
            out.head(
                name,
                kind,
                raw::linkage_value(o.linkage) as usize,
                false,
                o.ty.0,
            );
        }
        Type::Var(o) => {
            out.named(kind, false, o.ty.0)?;
            out.u32(raw::linkage_value(o.linkage));
        }
        Type::FuncProto(p) => {
            out.head(0, kind, p.params.len(), false, p.ret.0);
            for param in &p.params {
                let name = out.name()?;
                out.u32(name);
                out.u32(param.ty.0);
            }
        }
        Type::Datasec(d) => {
            let name = out.name()?;
            out.head(name, kind, d.vars.len(), false, d.size);
            for v in &d.vars {
                out.u32(v.ty.0);
                out.u32(v.offset);
                out.u32(v.size);
            }
        }
        Type::Float(f) => out.named(kind, false, f.size)?,
        Type::DeclTag(t) => {
            out.named(kind, false, t.ty.0)?;
            out.u32(t.component_idx as u32);
        }
    }
    Ok(())
}

fn emit_enum_head(out: &mut Out<'_>, kind: Kind, e: &Enum<'_>) -> Result<(), Error> {
    let name = out.name()?;
    out.head(name, kind, e.values.len(), e.signed, e.size);
    Ok(())
}

fn emit_composite(out: &mut Out<'_>, kind: Kind, c: &Composite<'_>) -> Result<(), Error> {
    let name = out.name()?;
    out.head(name, kind, c.members.len(), c.kind_flag, c.size);
    for (index, m) in c.members.iter().enumerate() {
        let offset = raw::member_offset(c.kind_flag, m.bitfield_size, m.bit_offset).ok_or(
            ErrorKind::BitfieldOffsetTooLarge {
                member: index,
                bit_offset: m.bit_offset,
            },
        )?;
        let name = out.name()?;
        out.u32(name);
        out.u32(m.ty.0);
        out.u32(offset);
    }
    Ok(())
}
