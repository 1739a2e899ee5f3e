//! Base types: which BTF kind and size a DWARF base type lowers to
//! (pahole's `add_base_type`), the one place these rules live; the member
//! checks and the lowering of the base types themselves both ask here.

use dwarf::model::BaseEncoding;

use super::error::Error;
use super::features::Features;
use crate::types::{Float, Int, IntEncoding, Type};

/// `DW_ATE_complex_float`.
pub(super) const DW_ATE_COMPLEX_FLOAT: u8 = 0x03;
/// `DW_ATE_imaginary_float`.
const DW_ATE_IMAGINARY_FLOAT: u8 = 0x09;
/// `DW_ATE_decimal_float`.
const DW_ATE_DECIMAL_FLOAT: u8 = 0x0f;

/// Name pahole gives integer types whose size is no BTF INT size (DWARF 5
/// `DW_ATE_unsigned_24` and the like, used only in location expressions).
pub const SANITIZED_INT_NAME: &str = "__SANITIZED_FAKE_INT__";

/// The size of the BTF INT a DWARF base type of `byte_size` bytes lowers
/// to: BTF INTs are 1, 2, 4, 8 or 16 bytes; DWARF 5 also has odd sizes
/// used only by location expressions, which pahole replaces by a 4-byte
/// fake int ([`SANITIZED_INT_NAME`]).
pub(super) fn int_size(byte_size: u32) -> u32 {
    if byte_size == 0 || !byte_size.is_power_of_two() || byte_size > 16 {
        4
    } else {
        byte_size
    }
}

/// Whether a base type of `encoding` lowers to a FLOAT: a float, with the
/// `float` feature on (`float`); without it, floats are INTs (see
/// [`lower_base`]). Every question about a base type's BTF kind asks this.
pub(super) fn lowers_to_float(encoding: BaseEncoding, float: bool) -> bool {
    float && encoding == BaseEncoding::Float
}

/// A base type: INT (with pahole's encoding bits and size sanitizing) or
/// FLOAT.
pub(super) fn lower_base<'input>(
    name: &'input str,
    byte_size: u32,
    encoding: BaseEncoding,
    features: &Features,
    cu_offset: u64,
) -> Result<Type<'input>, Error> {
    let encoding_bits = match encoding {
        // pahole's is_signed covers both; it never sets BTF_INT_CHAR.
        BaseEncoding::Signed | BaseEncoding::SignedChar => IntEncoding::SIGNED,
        BaseEncoding::Boolean => IntEncoding::BOOL,
        _ if lowers_to_float(encoding, features.float) => {
            return Ok(Type::Float(Float {
                name,
                size: byte_size,
            }))
        }
        BaseEncoding::Other(
            DW_ATE_COMPLEX_FLOAT | DW_ATE_IMAGINARY_FLOAT | DW_ATE_DECIMAL_FLOAT,
        ) if features.float => {
            return Err(Error::UnsupportedFloat {
                cu_offset,
                name: name.to_string(),
            })
        }
        // Without the float feature floats stay INTs with no encoding, as
        // BTF had no FLOAT kind before.
        BaseEncoding::Unsigned
        | BaseEncoding::UnsignedChar
        | BaseEncoding::Float
        | BaseEncoding::Other(_) => 0,
    };
    let size = int_size(byte_size);
    let name = if size == byte_size {
        name
    } else {
        SANITIZED_INT_NAME
    };
    Ok(Type::Int(Int {
        name,
        size,
        encoding: IntEncoding(encoding_bits),
        offset: 0,
        bits: (size * 8) as u8,
    }))
}
