//! Phase two of writing: header, type records and strings, into a buffer of
//! the exact size. Every limit was checked by `reserve`; what could still
//! not fit is reported, not truncated. A big type section is written in
//! two halves on two threads, each into its own part of the buffer.

use super::intern;
use super::reserve::Plan;
use crate::error::{Error, ErrorKind};
use crate::raw::{self, Endian, Header, HeaderFormat, Kind};
use crate::types::{Btf, Composite, Enum, Type, TypeId};

struct Out<'b, 'p> {
    /// What is left of this writer's part of the buffer.
    rest: &'b mut [u8],
    /// Set when a word did not fit `rest`.
    overflow: bool,
    endian: Endian,
    /// The name offsets left, per [`intern::parity`].
    names: [std::slice::Iter<'p, u32>; 2],
}

impl Out<'_, '_> {
    #[inline]
    fn u32(&mut self, value: u32) {
        match std::mem::take(&mut self.rest).split_first_chunk_mut::<4>() {
            Some((word, rest)) => {
                *word = self.endian.u32_bytes(value);
                self.rest = rest;
            }
            None => self.overflow = true,
        }
    }

    /// The offset of `name`: the next one `reserve` interned for names of
    /// its parity.
    #[inline]
    fn name(&mut self, name: &str) -> Result<u32, Error> {
        // Running out would mean reserve and emit disagree: a bug, reported
        // rather than panicking.
        self.names[intern::parity(name)]
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
    fn named(
        &mut self,
        name: &str,
        kind: Kind,
        kind_flag: bool,
        size_or_type: u32,
    ) -> Result<(), Error> {
        let name = self.name(name)?;
        self.head(name, kind, 0, kind_flag, size_or_type);
        Ok(())
    }
}

/// Fills the header and type section of `plan.out`.
pub(super) fn emit(btf: &Btf<'_>, plan: Plan, endian: Endian) -> Result<Vec<u8>, Error> {
    let Plan {
        name_offsets,
        mut out,
        type_len,
        str_len,
        cut,
        format,
    } = plan;
    let fields = Header::for_sections(format, type_len, str_len);
    // The header, and the kind layout section if any, go where `fields`
    // says; reserve left room for both.
    let mut header = Vec::with_capacity(fields.hdr_len as usize);
    fields.write_to(&mut header, endian);
    let mut layout = Vec::with_capacity(fields.layout_len as usize);
    if format == HeaderFormat::WithLayout {
        raw::write_layout_section(&mut layout, endian);
    }
    let layout_at = fields.layout_at() as usize;
    let layout_out = out.get_mut(layout_at..layout_at + layout.len());
    let Some(layout_out) = layout_out.filter(|o| o.len() == layout.len()) else {
        return Err(ErrorKind::Internal("output buffer smaller than reserved").into());
    };
    layout_out.copy_from_slice(&layout);
    let header_len = header.len().min(out.len());
    let (header_out, rest) = out.split_at_mut(header_len);
    let types_out = rest.get_mut(..type_len as usize);
    let (Some(types_out), true) = (types_out, header_out.len() == header.len()) else {
        return Err(ErrorKind::Internal("output buffer smaller than reserved").into());
    };
    header_out.copy_from_slice(&header);
    let names = |from: [usize; 2]| {
        [0, 1].map(|parity| {
            name_offsets[parity]
                .get(from[parity]..)
                .unwrap_or_default()
                .iter()
        })
    };
    let first_id = btf.base_type_count + 1;
    match cut {
        Some(cut) if cut.types <= btf.types.len() && cut.bytes <= types_out.len() => {
            let (first_types, second_types) = btf.types.split_at(cut.types);
            let (first_out, second_out) = types_out.split_at_mut(cut.bytes);
            let second_id = first_id + cut.types as u32;
            let (first, second) = rayon::join(
                || emit_types(first_types, first_id, first_out, endian, names([0, 0])),
                || {
                    emit_types(
                        second_types,
                        second_id,
                        second_out,
                        endian,
                        names(cut.names),
                    )
                },
            );
            first?;
            second?;
        }
        _ => emit_types(&btf.types, first_id, types_out, endian, names([0, 0]))?,
    }
    Ok(out)
}

/// Writes `types`, the first of which has id `first_id`, filling `out`
/// exactly.
fn emit_types<'p>(
    types: &[Type<'_>],
    first_id: u32,
    out: &mut [u8],
    endian: Endian,
    names: [std::slice::Iter<'p, u32>; 2],
) -> Result<(), Error> {
    let mut out = Out {
        rest: out,
        overflow: false,
        endian,
        names,
    };
    for (index, ty) in types.iter().enumerate() {
        let id = TypeId(first_id + index as u32);
        emit_type(&mut out, ty).map_err(|e| e.for_type(id))?;
    }
    if out.overflow || !out.rest.is_empty() {
        return Err(ErrorKind::Internal("type section size differs from the reserved size").into());
    }
    Ok(())
}

fn emit_type(out: &mut Out<'_, '_>, ty: &Type<'_>) -> Result<(), Error> {
    let kind = Kind::of(ty);
    match ty {
        Type::Int(t) => {
            out.named(t.name, kind, false, t.size)?;
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
                let name = out.name(v.name)?;
                out.u32(name);
                // Low 32 bits; reserve checked the value fits.
                out.u32(v.value as u32);
            }
        }
        Type::Enum64(e) => {
            emit_enum_head(out, kind, e)?;
            for v in &e.values {
                let name = out.name(v.name)?;
                out.u32(name);
                let (lo32, hi32) = raw::enum64_halves(v.value);
                out.u32(lo32);
                out.u32(hi32);
            }
        }
        Type::Fwd(f) => out.named(f.name, kind, f.union, 0)?,
        Type::Typedef(n) => out.named(n.name, kind, false, n.ty.0)?,
        Type::TypeTag(t) => out.named(t.name, kind, t.attribute, t.ty.0)?,
        Type::Func(o) => {
            let name = out.name(o.name)?;
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
            out.named(o.name, kind, false, o.ty.0)?;
            out.u32(raw::linkage_value(o.linkage));
        }
        Type::FuncProto(p) => {
            out.head(0, kind, p.params.len(), false, p.ret.0);
            for param in &p.params {
                let name = out.name(&param.name)?;
                out.u32(name);
                out.u32(param.ty.0);
            }
        }
        Type::Datasec(d) => {
            let name = out.name(d.name)?;
            out.head(name, kind, d.vars.len(), false, d.size);
            for v in &d.vars {
                out.u32(v.ty.0);
                out.u32(v.offset);
                out.u32(v.size);
            }
        }
        Type::Float(f) => out.named(f.name, kind, false, f.size)?,
        Type::DeclTag(t) => {
            out.named(t.name, kind, t.attribute, t.ty.0)?;
            out.u32(t.component_idx as u32);
        }
    }
    Ok(())
}

fn emit_enum_head(out: &mut Out<'_, '_>, kind: Kind, e: &Enum<'_>) -> Result<(), Error> {
    let name = out.name(e.name)?;
    out.head(name, kind, e.values.len(), e.signed, e.size);
    Ok(())
}

fn emit_composite(out: &mut Out<'_, '_>, kind: Kind, c: &Composite<'_>) -> Result<(), Error> {
    let name = out.name(c.name)?;
    out.head(name, kind, c.members.len(), c.kind_flag, c.size);
    for (index, m) in c.members.iter().enumerate() {
        let offset = raw::member_offset(c.kind_flag, m.bitfield_size, m.bit_offset).ok_or(
            ErrorKind::BitfieldOffsetTooLarge {
                member: index,
                bit_offset: m.bit_offset,
            },
        )?;
        let name = out.name(&m.name)?;
        out.u32(name);
        out.u32(m.ty.0);
        out.u32(offset);
    }
    Ok(())
}
