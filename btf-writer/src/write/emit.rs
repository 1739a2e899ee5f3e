//! Phase two of writing: header, type records and strings, into a buffer of
//! the exact size. Every limit was checked by `reserve`; what could still
//! not fit is reported, not truncated. A big type section is written in
//! two halves on two threads, each into its own part of the buffer.

use super::intern;
use super::reserve::Plan;
use crate::error::{ErrorKind, FormatError};
use crate::raw::{self, Endian, Header, HeaderFormat};
use crate::types::{Btf, Composite, Type, TypeId};

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
    fn name(&mut self, name: &str) -> Result<u32, FormatError> {
        // Running out would mean reserve and emit disagree: a bug, reported
        // rather than panicking.
        self.names[intern::parity(name)]
            .next()
            .copied()
            .ok_or_else(|| ErrorKind::Internal("writer ran out of interned names").into())
    }

    /// The 12-byte `btf_type`: the name's offset (0 for kinds without a
    /// name), then the model's own `info` and `size`/`type` words.
    #[inline]
    fn head(&mut self, ty: &Type<'_>) -> Result<(), FormatError> {
        let name_off = match ty.name_field() {
            Some(name) => self.name(name)?,
            None => 0,
        };
        // vlen was checked against MAX_VLEN by reserve.
        self.u32(name_off);
        self.u32(ty.info());
        self.u32(ty.size_or_type());
        Ok(())
    }
}

/// Fills the header and type section of `plan.out`.
pub(super) fn emit(btf: &Btf<'_>, plan: Plan, endian: Endian) -> Result<Vec<u8>, FormatError> {
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
) -> Result<(), FormatError> {
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

/// One record: the head every kind shares, then the kind's own trailing
/// data.
fn emit_type(out: &mut Out<'_, '_>, ty: &Type<'_>) -> Result<(), FormatError> {
    out.head(ty)?;
    match ty {
        Type::Int(t) => out.u32(raw::int_data(t.encoding.0, t.offset, t.bits)),
        Type::Array(a) => {
            out.u32(a.elem.0);
            out.u32(a.index.0);
            out.u32(a.nelems);
        }
        Type::Struct(c) | Type::Union(c) => emit_members(out, c)?,
        Type::Enum(e) => {
            for v in &e.values {
                let name = out.name(v.name)?;
                out.u32(name);
                // Low 32 bits; reserve checked the value fits.
                out.u32(v.value as u32);
            }
        }
        Type::Enum64(e) => {
            for v in &e.values {
                let name = out.name(v.name)?;
                out.u32(name);
                let (lo32, hi32) = raw::enum64_halves(v.value);
                out.u32(lo32);
                out.u32(hi32);
            }
        }
        Type::Var(o) => out.u32(raw::linkage_value(o.linkage)),
        Type::FuncProto(p) => {
            for param in &p.params {
                let name = out.name(&param.name)?;
                out.u32(name);
                out.u32(param.ty.0);
            }
        }
        Type::Datasec(d) => {
            for v in &d.vars {
                out.u32(v.ty.0);
                out.u32(v.offset);
                out.u32(v.size);
            }
        }
        Type::DeclTag(t) => out.u32(t.component_idx as u32),
        Type::Ptr(_)
        | Type::Volatile(_)
        | Type::Const(_)
        | Type::Restrict(_)
        | Type::Fwd(_)
        | Type::Typedef(_)
        | Type::TypeTag(_)
        | Type::Func(_)
        | Type::Float(_) => {}
    }
    Ok(())
}

fn emit_members(out: &mut Out<'_, '_>, c: &Composite<'_>) -> Result<(), FormatError> {
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
