//! Reading only the attributes the model needs, and turning attribute
//! values of any form into numbers.

use gimli::constants as dw;
use gimli::AttributeValue;

use super::abbrevs::Abbrev;
use super::entries::Entries;
use crate::elf::Reader;

/// A value as the walker keeps it.
pub(crate) type Value<'input> = AttributeValue<Reader<'input>>;

/// The wanted attributes of one DIE, each in its own slot: a lookup by
/// name is a bit test, and forgetting the previous DIE's attributes is
/// clearing one mask.
///
/// How to read a declaration's DIEs is worked out once per distinct
/// declaration (see `abbrevs.rs`), not once per DIE (a kernel unit uses a
/// few hundred abbreviations for tens of thousands of DIEs): a plan of
/// [`Step`]s that skips each run of fixed-size unwanted attributes as one
/// byte count and decodes each wanted attribute by a form-specific reader
/// chosen in advance, instead of gimli's generic per-attribute decoding.
pub(crate) struct Attrs<'input> {
    /// By [`slot_of`] the attribute's name; meaningful where `present`
    /// has the slot's bit.
    values: [Value<'input>; SLOTS],
    present: u32,
}

impl Default for Attrs<'_> {
    fn default() -> Self {
        Attrs {
            values: [AttributeValue::Flag(false); SLOTS],
            present: 0,
        }
    }
}

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
    /// of declarations are kept; see `abbrevs.rs`).
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
const SLOTS: usize = 27;

/// The slot of an attribute the walker looks at; others are skipped
/// without being decoded. `DW_AT_sibling` is only read for DIEs that are
/// skipped.
#[inline(always)]
fn slot_of(name: dw::DwAt) -> Option<usize> {
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
fn needs_typing(name: dw::DwAt) -> bool {
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

/// Decodes one attribute into `slot`; `None` when the bytes run out or
/// gimli fails, which the caller then reports through gimli's own
/// reading. Each value is stored where it is made: returning it through
/// an `Option` costs a copy that stalls on store forwarding.
#[inline(always)]
fn decode_into<'input>(
    entries: &mut Entries<'_, 'input>,
    decode: Decode,
    specs: &[gimli::AttributeSpecification],
    slot: &mut Value<'input>,
) -> Option<()> {
    use gimli::{DebugInfoOffset, DebugLineStrOffset, DebugStrOffset, DebugStrOffsetsIndex};
    use AttributeValue as V;
    let mut push = |value: Value<'input>| *slot = value;
    let unit_ref = |offset: u64| Some(V::UnitRef(gimli::UnitOffset(usize::try_from(offset).ok()?)));
    let str_index = |index: u64| {
        Some(V::DebugStrOffsetsIndex(DebugStrOffsetsIndex(
            usize::try_from(index).ok()?,
        )))
    };
    match decode {
        Decode::Data1 => push(V::Data1(entries.u8()?)),
        Decode::Data2 => push(V::Data2(entries.u16()?)),
        Decode::Data4 => push(V::Data4(entries.u32()?)),
        Decode::Data8 => push(V::Data8(entries.u64()?)),
        Decode::Udata => push(V::Udata(entries.uleb()?)),
        Decode::Sdata => push(V::Sdata(entries.sleb()?)),
        Decode::Flag => push(V::Flag(entries.u8()? != 0)),
        Decode::Present => push(V::Flag(true)),
        Decode::Implicit(position) => push(V::Sdata(
            specs.get(position as usize)?.implicit_const_value()?,
        )),
        Decode::Ref1 => push(unit_ref(entries.u8()?.into())?),
        Decode::Ref2 => push(unit_ref(entries.u16()?.into())?),
        Decode::Ref4 => push(unit_ref(entries.u32()?.into())?),
        Decode::Ref8 => push(unit_ref(entries.u64()?)?),
        Decode::RefUdata => push(unit_ref(entries.uleb()?)?),
        Decode::RefAddr(size) => push(V::DebugInfoRef(DebugInfoOffset(entries.offset(size)?))),
        Decode::Strp(size) => push(V::DebugStrRef(DebugStrOffset(entries.offset(size)?))),
        Decode::LineStrp(size) => push(V::DebugLineStrRef(DebugLineStrOffset(
            entries.offset(size)?,
        ))),
        Decode::Strx1 => push(str_index(entries.u8()?.into())?),
        Decode::Strx2 => push(str_index(entries.u16()?.into())?),
        Decode::Strx4 => push(str_index(entries.u32()?.into())?),
        Decode::Strx => push(str_index(entries.uleb()?)?),
        Decode::String => push(V::String(Reader::new(entries.cstr()?, entries.endian))),
        Decode::Exprloc => push(V::Exprloc(gimli::Expression(Reader::new(
            entries.leb_block()?,
            entries.endian,
        )))),
        Decode::Addr(4) => push(V::Addr(entries.u32()?.into())),
        Decode::Addr(_) => push(V::Addr(entries.u64()?)),
        Decode::MemberOffset1 => push(V::Udata(entries.u8()?.into())),
        Decode::MemberOffset2 => push(V::Udata(entries.u16()?.into())),
        Decode::MemberOffsetUdata => push(V::Udata(entries.uleb()?)),
        Decode::Other { spec, typed } => {
            let attr = entries.gimli_attribute(*specs.get(spec as usize)?).ok()?;
            push(if typed {
                attr.value()
            } else {
                attr.raw_value()
            })
        }
    }
    Some(())
}

impl<'input> Attrs<'input> {
    /// Reads the wanted attributes of the DIE whose abbreviation was just
    /// read, skipping the others.
    pub(crate) fn read(
        &mut self,
        entries: &mut Entries<'_, 'input>,
        abbrev: &Abbrev,
    ) -> gimli::Result<()> {
        self.run(entries, abbrev, Purpose::Visit)
    }

    /// Reads past the attributes of a DIE that is being skipped, returning
    /// its `DW_AT_sibling`, the place its subtree ends, if it has children.
    /// The attributes read before are forgotten.
    pub(crate) fn skip(
        &mut self,
        entries: &mut Entries<'_, 'input>,
        abbrev: &Abbrev,
    ) -> gimli::Result<Option<gimli::UnitOffset>> {
        self.run(entries, abbrev, Purpose::Skip)?;
        Ok(match self.get(dw::DW_AT_sibling) {
            Some(AttributeValue::UnitRef(offset)) => Some(offset),
            _ => None,
        })
    }

    fn run(
        &mut self,
        entries: &mut Entries<'_, 'input>,
        abbrev: &Abbrev,
        purpose: Purpose,
    ) -> gimli::Result<()> {
        let steps = entries.abbrevs().steps(abbrev, purpose);
        let specs = entries.abbrevs().specs(abbrev);
        let before = entries.position();
        if run_steps(steps, specs, entries, &mut self.values, &mut self.present).is_some() {
            return Ok(());
        }
        // Something is wrong with the bytes: read them again the general
        // way, for gimli's error.
        entries.rewind(before);
        self.run_with_gimli(entries, abbrev, purpose)
    }

    /// What `run` does, through gimli's generic decoding only: the
    /// reference the plans are tested against, and the source of errors.
    fn run_with_gimli(
        &mut self,
        entries: &mut Entries<'_, 'input>,
        abbrev: &Abbrev,
        purpose: Purpose,
    ) -> gimli::Result<()> {
        self.present = 0;
        for spec in entries.abbrevs().specs(abbrev) {
            let slot =
                slot_of(spec.name()).filter(|_| wants(abbrev.has_children, purpose, spec.name()));
            // The first of repeated attributes counts.
            let Some(slot) = slot.filter(|&slot| self.present & (1 << slot) == 0) else {
                entries.gimli_skip(std::slice::from_ref(spec))?;
                continue;
            };
            let attr = entries.gimli_attribute(*spec)?;
            let value = if needs_typing(spec.name()) {
                attr.value()
            } else {
                attr.raw_value()
            };
            if let Some(stored) = self.values.get_mut(slot) {
                *stored = value;
                self.present |= 1 << slot;
            }
        }
        Ok(())
    }

    /// The value of `name`, if the DIE has it.
    #[inline(always)]
    pub(crate) fn get(&self, name: dw::DwAt) -> Option<Value<'input>> {
        let slot = slot_of(name)?;
        if self.present & (1 << slot) == 0 {
            return None;
        }
        self.values.get(slot).copied()
    }

    /// The attributes read, by slot, for comparing two reads in tests.
    #[cfg(test)]
    fn read_values(&self) -> Vec<(usize, Value<'input>)> {
        (0..SLOTS)
            .filter(|slot| self.present & (1 << slot) != 0)
            .filter_map(|slot| Some((slot, *self.values.get(slot)?)))
            .collect()
    }

    /// Whether a flag attribute is present and true.
    pub(crate) fn flag(&self, name: dw::DwAt) -> bool {
        matches!(self.get(name), Some(AttributeValue::Flag(true)))
    }

    /// The value of `name` as an unsigned constant.
    pub(crate) fn udata(&self, name: dw::DwAt) -> Option<u64> {
        self.get(name).as_ref().and_then(unsigned)
    }
}

/// Whether an attribute is decoded when a DIE is read for `purpose`.
fn wants(has_children: bool, purpose: Purpose, name: dw::DwAt) -> bool {
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

/// Follows a plan; `None` if the bytes do not fit it.
#[inline]
fn run_steps<'input>(
    steps: &[Step],
    specs: &[gimli::AttributeSpecification],
    entries: &mut Entries<'_, 'input>,
    values: &mut [Value<'input>; SLOTS],
    present: &mut u32,
) -> Option<()> {
    *present = 0;
    for step in steps {
        match *step {
            Step::Skip(count) => {
                entries.take(count as usize)?;
            }
            Step::SkipLeb => entries.skip_leb()?,
            Step::SkipLebBlock => {
                entries.leb_block()?;
            }
            Step::SkipString => {
                entries.cstr()?;
            }
            Step::SkipOther(spec) => {
                let spec = specs.get(spec as usize)?;
                entries.gimli_skip(std::slice::from_ref(spec)).ok()?
            }
            Step::Read(slot, how) => {
                decode_into(entries, how, specs, values.get_mut(usize::from(slot))?)?;
                *present |= 1 << slot;
            }
        }
    }
    Some(())
}

/// A constant of any constant form as an unsigned number. Negative
/// `sdata` and `data16` beyond 64 bits are not unsigned numbers.
pub(crate) fn unsigned(value: &Value<'_>) -> Option<u64> {
    match *value {
        AttributeValue::Data1(v) => Some(v.into()),
        AttributeValue::Data2(v) => Some(v.into()),
        AttributeValue::Data4(v) => Some(v.into()),
        AttributeValue::Data8(v) => Some(v),
        AttributeValue::Data16(v) => u64::try_from(v).ok(),
        AttributeValue::Udata(v) => Some(v),
        AttributeValue::Sdata(v) => u64::try_from(v).ok(),
        // gimli decodes these attributes' constants into their enums.
        AttributeValue::Language(v) => Some(v.0.into()),
        AttributeValue::Encoding(v) => Some(v.0.into()),
        AttributeValue::Inline(v) => Some(v.0.into()),
        AttributeValue::CallingConvention(v) => Some(v.0.into()),
        _ => None,
    }
}

/// A constant as a two's complement number of its form's width: for
/// attributes that are signed by definition (`DW_AT_bit_offset`, which
/// clang writes as `data8 0xfff...f9` for -7).
pub(crate) fn signed(value: &Value<'_>) -> Option<i64> {
    match *value {
        AttributeValue::Data1(v) => Some((v as i8).into()),
        AttributeValue::Data2(v) => Some((v as i16).into()),
        AttributeValue::Data4(v) => Some((v as i32).into()),
        AttributeValue::Data8(v) => Some(v as i64),
        AttributeValue::Sdata(v) => Some(v),
        AttributeValue::Udata(v) => i64::try_from(v).ok(),
        _ => None,
    }
}

/// A constant's 64 bits, and whether it is negative. Only `sdata` (and
/// `implicit_const`, which gimli reads as `sdata`) carries a sign:
/// compilers write every negative enumerator that way, and use the
/// fixed-size data forms for values that fit unsigned (gcc writes 128 in a
/// signed enum as `data1 0x80`), so those are zero-extended, as pahole's
/// `dwarf_formudata` does.
pub(crate) fn constant_bits(value: &Value<'_>) -> Option<(u64, bool)> {
    Some(match *value {
        AttributeValue::Data1(v) => (v.into(), false),
        AttributeValue::Data2(v) => (v.into(), false),
        AttributeValue::Data4(v) => (v.into(), false),
        AttributeValue::Data8(v) => (v, false),
        // Only the low 64 bits fit the model.
        AttributeValue::Data16(v) => (v as u64, false),
        AttributeValue::Sdata(v) => (v as u64, v < 0),
        AttributeValue::Udata(v) => (v, false),
        _ => return None,
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn steps_stay_small() {
        assert!(std::mem::size_of::<Step>() <= 12);
    }

    /// Every committed fixture object, compiled by gcc and clang, DWARF 4
    /// and 5, both byte orders.
    pub(in crate::walk) fn fixture_objects() -> Vec<std::path::PathBuf> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/obj");
        let mut pending = vec![root];
        let mut files = Vec::new();
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).expect("fixtures directory") {
                let path = entry.expect("directory entry").path();
                if path.is_dir() {
                    pending.push(path);
                } else {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
    }

    /// The plans decode every DIE of every fixture exactly as gimli's
    /// generic reading does, and stop at the same byte.
    #[test]
    fn plans_read_what_gimli_reads() {
        let files = fixture_objects();
        assert!(files.len() > 20, "fixtures missing: {files:?}");
        let mut dies = 0;
        for path in files {
            let file = crate::ElfFile::open(&path).expect("fixture opens");
            let dwarf = file.dwarf().expect("fixture has DWARF");
            let mut worker = super::super::abbrevs::Worker::default();
            for header in dwarf.units() {
                let (unit, codes) =
                    super::super::open_unit(&dwarf.gimli, *header, &mut worker).expect("unit");
                let mut entries = Entries::new(&unit, &codes).expect("entries");
                let mut planned = Attrs::default();
                let mut reference = Attrs::default();
                while !entries.is_empty() {
                    let Some(abbrev) = entries.read_abbreviation().expect("abbreviation") else {
                        continue;
                    };
                    dies += 1;
                    for purpose in [Purpose::Skip, Purpose::Visit] {
                        let mut fast = entries;
                        planned
                            .run(&mut fast, abbrev, purpose)
                            .expect("planned read");
                        let mut slow = entries;
                        reference
                            .run_with_gimli(&mut slow, abbrev, purpose)
                            .expect("gimli read");
                        assert_eq!(
                            planned.read_values(),
                            reference.read_values(),
                            "{path:?} {:?}",
                            abbrev.tag
                        );
                        assert_eq!(fast.next_offset(), slow.next_offset(), "{path:?}");
                        if matches!(purpose, Purpose::Visit) {
                            entries = fast;
                        }
                    }
                }
            }
        }
        assert!(dies > 1000, "only {dies} DIEs read");
    }

    /// Bytes that end inside a DIE give gimli's error, not a shorter read.
    #[test]
    fn truncated_attributes_are_gimli_errors() {
        let path = fixture_objects()
            .into_iter()
            .find(|path| path.ends_with("gcc-dwarf5/structs.o"))
            .expect("fixture");
        let file = crate::ElfFile::open(&path).expect("fixture opens");
        let dwarf = file.dwarf().expect("fixture has DWARF");
        let header = dwarf.units().first().expect("a unit");
        let mut worker = super::super::abbrevs::Worker::default();
        let (unit, codes) =
            super::super::open_unit(&dwarf.gimli, *header, &mut worker).expect("unit");
        let mut entries = Entries::new(&unit, &codes).expect("entries");
        let abbrev = entries
            .read_abbreviation()
            .expect("root")
            .expect("root DIE");
        let mut attrs = Attrs::default();
        let mut whole = entries;
        attrs.read(&mut whole, abbrev).expect("root reads");
        let size = whole.next_offset() - entries.next_offset();
        assert!(size > 1);
        entries.truncate_for_test(size - 1);
        let err = attrs.read(&mut entries, abbrev).expect_err("truncated");
        assert!(matches!(err, gimli::Error::UnexpectedEof(_)), "{err:?}");
    }

    #[test]
    fn only_sdata_constants_are_negative() {
        assert_eq!(
            constant_bits(&AttributeValue::Data1(0x80)),
            Some((0x80, false))
        );
        assert_eq!(
            constant_bits(&AttributeValue::Data4(0x8000_0000)),
            Some((0x8000_0000, false))
        );
        assert_eq!(
            constant_bits(&AttributeValue::Sdata(-2)),
            Some(((-2i64) as u64, true))
        );
        assert_eq!(constant_bits(&AttributeValue::Udata(7)), Some((7, false)));
        assert_eq!(unsigned(&AttributeValue::Sdata(-1)), None);
        assert_eq!(unsigned(&AttributeValue::Data16(1 << 70)), None);
        assert_eq!(unsigned(&AttributeValue::Data2(300)), Some(300));
        assert_eq!(
            signed(&AttributeValue::Data8(0xffff_ffff_ffff_fff9)),
            Some(-7)
        );
        assert_eq!(signed(&AttributeValue::Data1(0x10)), Some(16));
        assert_eq!(
            unsigned(&AttributeValue::Language(dw::DW_LANG_C11)),
            Some(0x1d)
        );
        assert_eq!(
            unsigned(&AttributeValue::Inline(dw::DW_INL_inlined)),
            Some(1)
        );
    }
}
