//! Reading only the attributes the model needs, and turning attribute
//! values of any form into numbers.

use gimli::constants as dw;
use gimli::{AttributeValue, EntriesRaw};

use crate::elf::Reader;

/// A value as the walker keeps it.
pub(crate) type Value<'input> = AttributeValue<Reader<'input>>;

/// The wanted attributes of one DIE. A short list scanned linearly: DIEs
/// have a handful of attributes, and clearing a list costs nothing, unlike
/// a struct with a slot per attribute name.
#[derive(Default)]
pub(crate) struct Attrs<'input> {
    list: Vec<(dw::DwAt, Value<'input>)>,
}

/// Whether the walker ever looks at an attribute (others are skipped
/// without being decoded).
fn is_wanted(name: dw::DwAt) -> bool {
    matches!(
        name,
        dw::DW_AT_name
            | dw::DW_AT_linkage_name
            | dw::DW_AT_MIPS_linkage_name
            | dw::DW_AT_type
            | dw::DW_AT_byte_size
            | dw::DW_AT_bit_size
            | dw::DW_AT_data_member_location
            | dw::DW_AT_data_bit_offset
            | dw::DW_AT_bit_offset
            | dw::DW_AT_const_value
            | dw::DW_AT_encoding
            | dw::DW_AT_declaration
            | dw::DW_AT_external
            | dw::DW_AT_abstract_origin
            | dw::DW_AT_specification
            | dw::DW_AT_inline
            | dw::DW_AT_low_pc
            | dw::DW_AT_ranges
            | dw::DW_AT_calling_convention
            | dw::DW_AT_location
            | dw::DW_AT_count
            | dw::DW_AT_upper_bound
            | dw::DW_AT_lower_bound
            | dw::DW_AT_language
    )
}

impl<'input> Attrs<'input> {
    /// Reads the wanted attributes of the DIE whose abbreviation was just
    /// read, skipping the others.
    pub(crate) fn read(
        &mut self,
        entries: &mut EntriesRaw<'_, Reader<'input>>,
        abbrev: &gimli::Abbreviation,
    ) -> gimli::Result<()> {
        self.list.clear();
        let specs = abbrev.attributes();
        // Unwanted attributes are skipped a run at a time: gimli then adds
        // up the sizes of fixed-size forms instead of stepping over each.
        let mut run_start = 0;
        for (index, spec) in specs.iter().enumerate() {
            if !is_wanted(spec.name()) {
                continue;
            }
            if run_start < index {
                entries.skip_attributes(specs.get(run_start..index).unwrap_or(&[]))?;
            }
            let attr = entries.read_attribute_inline(*spec)?;
            // gimli turns fixed-size constants into `Udata`, losing the
            // width that the sign of DW_AT_bit_offset needs.
            let value = if spec.name() == dw::DW_AT_bit_offset {
                attr.raw_value()
            } else {
                attr.value()
            };
            self.list.push((spec.name(), value));
            run_start = index + 1;
        }
        if run_start < specs.len() {
            entries.skip_attributes(specs.get(run_start..).unwrap_or(&[]))?;
        }
        Ok(())
    }

    /// The value of `name`, if the DIE has it.
    pub(crate) fn get(&self, name: dw::DwAt) -> Option<Value<'input>> {
        self.list.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
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

/// Reads past the attributes of a DIE that is being skipped, returning its
/// `DW_AT_sibling`, the place its subtree ends.
pub(crate) fn skip_returning_sibling<'input>(
    entries: &mut EntriesRaw<'_, Reader<'input>>,
    abbrev: &gimli::Abbreviation,
) -> gimli::Result<Option<gimli::UnitOffset>> {
    let mut sibling = None;
    for spec in abbrev.attributes() {
        if spec.name() == dw::DW_AT_sibling {
            if let AttributeValue::UnitRef(offset) = entries.read_attribute(*spec)?.value() {
                sibling = Some(offset);
            }
        } else {
            entries.skip_attributes(std::slice::from_ref(spec))?;
        }
    }
    Ok(sibling)
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
mod tests {
    use super::*;

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
