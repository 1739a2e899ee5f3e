//! The plan for reading a declaration's DIEs: which attributes the walker
//! wants, and for each the form-specific step that reads or skips it,
//! worked out once per declaration (see `abbrev_cache.rs`) and run per
//! DIE by `attrs.rs`.

use gimli::constants as dw;

/// What a DIE is read for.
#[derive(Clone, Copy)]
pub(super) enum Purpose {
    /// Its wanted attributes.
    Visit = 0,
    /// Only where its subtree ends (`DW_AT_sibling`), to skip it.
    Skip = 1,
}

/// One step of reading a DIE's attributes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Step {
    /// Unwanted attributes of fixed sizes: this many bytes.
    Skip(u32),
    /// An unwanted LEB128 number.
    SkipLeb,
    /// An unwanted block with a LEB128 length (`exprloc`, `block`).
    SkipLebBlock,
    /// An unwanted NUL-terminated string.
    SkipString,
    /// Any other unwanted attribute, skipped by gimli: the position of
    /// its spec in the declaration's. Positions rather than specs keep a
    /// step at 12 bytes instead of 32 (the plans of a worker's thousands
    /// of declarations are kept; see `abbrev_cache.rs`).
    SkipOther(u32),
    /// A wanted attribute, into this slot.
    Read(u8, Decode),
}

/// How a wanted attribute is decoded: each gives the value gimli would.
#[derive(Clone, Copy, Debug)]
pub(super) enum Decode {
    Data1,
    Data2,
    Data4,
    Data8,
    Udata,
    Sdata,
    Flag,
    /// `DW_FORM_flag_present`: true, from no bytes.
    Present,
    /// `DW_FORM_implicit_const`: the value is in the spec at this
    /// position of the declaration's.
    Implicit(u32),
    Ref1,
    Ref2,
    Ref4,
    Ref8,
    RefUdata,
    /// `DW_FORM_ref_addr`, an offset of this many bytes.
    RefAddr(u8),
    /// `DW_FORM_strp`, an offset of this many bytes.
    Strp(u8),
    /// `DW_FORM_line_strp`, an offset of this many bytes.
    LineStrp(u8),
    Strx1,
    Strx2,
    Strx4,
    Strx,
    String,
    Exprloc,
    /// `DW_FORM_addr` of 4 or 8 bytes.
    Addr(u8),
    /// A member offset constant of `data1`, `data2` or `udata` form, which
    /// gimli's attribute-aware decoding turns into `Udata`.
    MemberOffset1,
    MemberOffset2,
    MemberOffsetUdata,
    /// Whatever gimli makes of it: attribute-aware (`typed`, for the
    /// attributes whose meaning depends on the form, see [`needs_typing`])
    /// or as the raw form.
    Other {
        /// The position of its spec in the declaration's.
        spec: u32,
        typed: bool,
    },
}

/// How many attributes the walker ever looks at.
pub(super) const SLOTS: usize = 27;

/// The slot of an attribute the walker looks at; others are skipped
/// without being decoded. `DW_AT_sibling` is only read for DIEs that are
/// skipped.
#[inline(always)]
pub(super) fn slot_of(name: dw::DwAt) -> Option<usize> {
    Some(match name {
        dw::DW_AT_name => 0,
        dw::DW_AT_linkage_name => 1,
        dw::DW_AT_MIPS_linkage_name => 2,
        dw::DW_AT_type => 3,
        dw::DW_AT_byte_size => 4,
        dw::DW_AT_bit_size => 5,
        dw::DW_AT_data_member_location => 6,
        dw::DW_AT_data_bit_offset => 7,
        dw::DW_AT_bit_offset => 8,
        dw::DW_AT_const_value => 9,
        dw::DW_AT_encoding => 10,
        dw::DW_AT_declaration => 11,
        dw::DW_AT_external => 12,
        dw::DW_AT_abstract_origin => 13,
        dw::DW_AT_specification => 14,
        dw::DW_AT_inline => 15,
        dw::DW_AT_low_pc => 16,
        dw::DW_AT_ranges => 17,
        dw::DW_AT_calling_convention => 18,
        dw::DW_AT_location => 19,
        dw::DW_AT_count => 20,
        dw::DW_AT_upper_bound => 21,
        dw::DW_AT_lower_bound => 22,
        dw::DW_AT_language => 23,
        dw::DW_AT_sibling => 24,
        dw::DW_AT_producer => 25,
        dw::DW_AT_import => 26,
        _ => return None,
    })
}

/// Whether the walker looks at attribute `name` at all.
pub(super) fn is_wanted(name: dw::DwAt) -> bool {
    slot_of(name).is_some()
}

/// Section offsets in these mean location or range lists (and DWARF 2-3
/// wrote them as data4/data8): gimli's attribute-aware decoding says
/// which. For every other wanted attribute the form alone decides, and
/// the readers below accept the raw forms as well as gimli's typed ones
/// (`unsigned` takes `Data1` and `Encoding` alike). The raw form also
/// keeps the width that the sign of DW_AT_bit_offset needs.
pub(super) fn needs_typing(name: dw::DwAt) -> bool {
    matches!(
        name,
        dw::DW_AT_location | dw::DW_AT_ranges | dw::DW_AT_data_member_location
    )
}

/// The size of a form whose size does not depend on the DIE.
pub(super) fn fixed_size(form: dw::DwForm, encoding: gimli::Encoding) -> Option<u8> {
    let offset = encoding.format.word_size();
    Some(match form {
        dw::DW_FORM_addr => encoding.address_size,
        dw::DW_FORM_implicit_const | dw::DW_FORM_flag_present => 0,
        dw::DW_FORM_data1
        | dw::DW_FORM_flag
        | dw::DW_FORM_strx1
        | dw::DW_FORM_ref1
        | dw::DW_FORM_addrx1 => 1,
        dw::DW_FORM_data2 | dw::DW_FORM_ref2 | dw::DW_FORM_addrx2 | dw::DW_FORM_strx2 => 2,
        dw::DW_FORM_addrx3 | dw::DW_FORM_strx3 => 3,
        dw::DW_FORM_data4
        | dw::DW_FORM_ref_sup4
        | dw::DW_FORM_ref4
        | dw::DW_FORM_strx4
        | dw::DW_FORM_addrx4 => 4,
        dw::DW_FORM_data8 | dw::DW_FORM_ref8 | dw::DW_FORM_ref_sig8 | dw::DW_FORM_ref_sup8 => 8,
        dw::DW_FORM_data16 => 16,
        dw::DW_FORM_sec_offset
        | dw::DW_FORM_GNU_ref_alt
        | dw::DW_FORM_strp
        | dw::DW_FORM_strp_sup
        | dw::DW_FORM_GNU_strp_alt
        | dw::DW_FORM_line_strp => offset,
        dw::DW_FORM_ref_addr if encoding.version == 2 => encoding.address_size,
        dw::DW_FORM_ref_addr => offset,
        _ => return None,
    })
}

/// The step that skips one variable-size unwanted attribute.
fn skip_step(spec: gimli::AttributeSpecification, position: u32) -> Step {
    match spec.form() {
        dw::DW_FORM_udata
        | dw::DW_FORM_sdata
        | dw::DW_FORM_ref_udata
        | dw::DW_FORM_strx
        | dw::DW_FORM_GNU_str_index
        | dw::DW_FORM_addrx
        | dw::DW_FORM_GNU_addr_index
        | dw::DW_FORM_loclistx
        | dw::DW_FORM_rnglistx => Step::SkipLeb,
        dw::DW_FORM_exprloc | dw::DW_FORM_block => Step::SkipLebBlock,
        dw::DW_FORM_string => Step::SkipString,
        _ => Step::SkipOther(position),
    }
}

/// How to decode a wanted attribute, chosen from its name and form.
fn decode_for(
    spec: gimli::AttributeSpecification,
    position: u32,
    encoding: gimli::Encoding,
) -> Decode {
    let name = spec.name();
    let offset = encoding.format.word_size();
    let other = Decode::Other {
        spec: position,
        typed: needs_typing(name),
    };
    if needs_typing(name) {
        return match (name, spec.form()) {
            (dw::DW_AT_data_member_location, dw::DW_FORM_data1) => Decode::MemberOffset1,
            (dw::DW_AT_data_member_location, dw::DW_FORM_data2) => Decode::MemberOffset2,
            (dw::DW_AT_data_member_location, dw::DW_FORM_udata) => Decode::MemberOffsetUdata,
            (dw::DW_AT_location, dw::DW_FORM_exprloc) => Decode::Exprloc,
            _ => other,
        };
    }
    match spec.form() {
        dw::DW_FORM_data1 => Decode::Data1,
        dw::DW_FORM_data2 => Decode::Data2,
        // DWARF 2-3 section offsets in data4/data8 are only seen in the
        // attributes that need typing (handled above).
        dw::DW_FORM_data4 => Decode::Data4,
        dw::DW_FORM_data8 => Decode::Data8,
        dw::DW_FORM_udata => Decode::Udata,
        dw::DW_FORM_sdata => Decode::Sdata,
        dw::DW_FORM_flag => Decode::Flag,
        dw::DW_FORM_flag_present => Decode::Present,
        dw::DW_FORM_implicit_const => match spec.implicit_const_value() {
            Some(_) => Decode::Implicit(position),
            None => other,
        },
        dw::DW_FORM_ref1 => Decode::Ref1,
        dw::DW_FORM_ref2 => Decode::Ref2,
        dw::DW_FORM_ref4 => Decode::Ref4,
        dw::DW_FORM_ref8 => Decode::Ref8,
        dw::DW_FORM_ref_udata => Decode::RefUdata,
        dw::DW_FORM_ref_addr => match fixed_size(dw::DW_FORM_ref_addr, encoding) {
            Some(size @ (4 | 8)) => Decode::RefAddr(size),
            _ => other,
        },
        dw::DW_FORM_strp => Decode::Strp(offset),
        dw::DW_FORM_line_strp => Decode::LineStrp(offset),
        dw::DW_FORM_strx1 => Decode::Strx1,
        dw::DW_FORM_strx2 => Decode::Strx2,
        dw::DW_FORM_strx4 => Decode::Strx4,
        dw::DW_FORM_strx | dw::DW_FORM_GNU_str_index => Decode::Strx,
        dw::DW_FORM_string => Decode::String,
        dw::DW_FORM_exprloc => Decode::Exprloc,
        dw::DW_FORM_addr if matches!(encoding.address_size, 4 | 8) => {
            Decode::Addr(encoding.address_size)
        }
        _ => other,
    }
}

/// Whether an attribute is decoded when a DIE is read for `purpose`.
pub(super) fn wants(has_children: bool, purpose: Purpose, name: dw::DwAt) -> bool {
    match purpose {
        Purpose::Visit => name != dw::DW_AT_sibling && slot_of(name).is_some(),
        // Only a DIE with children has a subtree to jump over.
        Purpose::Skip => has_children && name == dw::DW_AT_sibling,
    }
}

/// Appends to `steps` the plan for reading DIEs of a declaration with
/// `specs` for `purpose`, returning where it starts and how many steps
/// it has.
pub(super) fn plan(
    specs: &[gimli::AttributeSpecification],
    has_children: bool,
    purpose: Purpose,
    encoding: gimli::Encoding,
    steps: &mut Vec<Step>,
) -> (u32, u32) {
    let start = steps.len() as u32;
    let mut skip = 0u32;
    let mut planned = 0u32;
    for (position, spec) in (0u32..).zip(specs) {
        let slot = slot_of(spec.name())
            .filter(|_| wants(has_children, purpose, spec.name()))
            // The first of repeated attributes counts.
            .filter(|&slot| planned & (1 << slot) == 0);
        if let Some(slot) = slot {
            planned |= 1 << slot;
            if skip > 0 {
                steps.push(Step::Skip(std::mem::take(&mut skip)));
            }
            steps.push(Step::Read(
                slot as u8,
                decode_for(*spec, position, encoding),
            ));
        } else if let Some(size) = fixed_size(spec.form(), encoding) {
            // Saturates on absurd abbreviations: the read then fails
            // and gimli reports the error.
            skip = skip.saturating_add(u32::from(size));
        } else {
            if skip > 0 {
                steps.push(Step::Skip(std::mem::take(&mut skip)));
            }
            steps.push(skip_step(*spec, position));
        }
    }
    if skip > 0 {
        steps.push(Step::Skip(skip));
    }
    (start, steps.len() as u32 - start)
}
