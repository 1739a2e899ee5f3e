//! Pure DWARF rules: what the standard (and the compilers' use of it)
//! says a tag, a constant or a pair of attributes means. A leaf: it knows
//! nothing of the walker, and every other part of the walk may use it.

use gimli::constants as dw;
use gimli::AttributeValue;

use crate::model::{BaseEncoding, Language};
use crate::reader::Reader;

/// A value as the walker keeps it.
pub(crate) type Value<'input> = AttributeValue<Reader<'input>>;

/// `DW_TAG_LLVM_annotation`, clang's carrier of `btf_type_tag` and
/// `btf_decl_tag` (not in gimli's constants under this name).
pub(super) const DW_TAG_LLVM_ANNOTATION: dw::DwTag = dw::DwTag(0x6000);

/// Tags of DIEs that are types, wherever they appear.
pub(super) fn is_type_tag(tag: dw::DwTag) -> bool {
    matches!(
        tag,
        dw::DW_TAG_base_type
            | dw::DW_TAG_unspecified_type
            | dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type
            | dw::DW_TAG_const_type
            | dw::DW_TAG_volatile_type
            | dw::DW_TAG_restrict_type
            | dw::DW_TAG_atomic_type
            | dw::DW_TAG_immutable_type
            | dw::DW_TAG_packed_type
            | dw::DW_TAG_shared_type
            | dw::DW_TAG_typedef
            | dw::DW_TAG_array_type
            | dw::DW_TAG_structure_type
            | dw::DW_TAG_union_type
            | dw::DW_TAG_class_type
            | dw::DW_TAG_interface_type
            | dw::DW_TAG_enumeration_type
            | dw::DW_TAG_subroutine_type
            | dw::DW_TAG_ptr_to_member_type
            | dw::DW_TAG_string_type
            | dw::DW_TAG_set_type
            | dw::DW_TAG_file_type
            | dw::DW_TAG_coarray_type
            | dw::DW_TAG_dynamic_type
    )
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

/// The number of elements from `lower` to `upper` inclusive; 0 (unknown)
/// when that does not fit 32 bits, as for `upper` -1 of a zero-length
/// array.
pub(super) fn count_of_bounds(upper: u64, lower: u64) -> u64 {
    let count = upper.wrapping_sub(lower).wrapping_add(1);
    if u32::try_from(count).is_ok() {
        count
    } else {
        0
    }
}

/// Bit offset of a DWARF 2-4 bitfield (`DW_AT_bit_offset` counts from the
/// most significant bit of a `storage`-byte unit at `location_bits`, and is
/// negative when gcc packs a field across the end of that unit).
pub(super) fn dwarf4_bit_offset(
    big_endian: bool,
    location_bits: u64,
    storage: u64,
    bit_offset: i64,
    bit_size: u64,
) -> Option<u64> {
    let location = i128::from(location_bits);
    let offset = if big_endian {
        location + i128::from(bit_offset)
    } else {
        location + i128::from(storage) * 8 - i128::from(bit_offset) - i128::from(bit_size)
    };
    u64::try_from(offset).ok()
}

pub(super) fn base_encoding(encoding: u64) -> BaseEncoding {
    let encoding = u8::try_from(encoding).unwrap_or(u8::MAX);
    match dw::DwAte(encoding) {
        dw::DW_ATE_signed => BaseEncoding::Signed,
        dw::DW_ATE_unsigned => BaseEncoding::Unsigned,
        dw::DW_ATE_signed_char => BaseEncoding::SignedChar,
        dw::DW_ATE_unsigned_char => BaseEncoding::UnsignedChar,
        dw::DW_ATE_boolean => BaseEncoding::Boolean,
        dw::DW_ATE_float => BaseEncoding::Float,
        _ => BaseEncoding::Other(encoding),
    }
}

/// `DW_AT_language` as the model keeps it; a value past `u16` (the
/// attribute is a 16-bit code) as `u16::MAX`, a user value like any other.
pub(super) fn language(lang: u64) -> Language {
    Language(u16::try_from(lang).unwrap_or(u16::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dwarf4_bitfield_positions() {
        // struct { int a:3; int b:5; } on little-endian: a at bit 0, b at 3.
        assert_eq!(dwarf4_bit_offset(false, 0, 4, 29, 3), Some(0));
        assert_eq!(dwarf4_bit_offset(false, 0, 4, 24, 5), Some(3));
        // Big-endian counts from the same end as DW_AT_bit_offset.
        assert_eq!(dwarf4_bit_offset(true, 32, 4, 3, 5), Some(35));
        assert_eq!(dwarf4_bit_offset(false, 0, 1, 9, 3), None);
        // gcc's packed field across its storage unit: negative bit offset.
        assert_eq!(dwarf4_bit_offset(false, 0, 4, -7, 31), Some(8));
        // clang's straddling bitfield in a packed struct: offset -8.
        assert_eq!(dwarf4_bit_offset(false, 0, 4, -8, 10), Some(30));
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
