//! Builders for the types tests write by hand, where spelling out every
//! field would bury what the test is about.

use crate::types::{Int, IntEncoding, Member, Name, Type, TypeId};

/// An INT of `size` bytes that uses all its bits, with `encoding`
/// ([`IntEncoding::SIGNED`], [`IntEncoding::BOOL`], ... or 0).
pub(crate) fn int(name: &str, size: u32, encoding: u8) -> Type<'_> {
    Type::Int(Int {
        name,
        size,
        encoding: IntEncoding(encoding),
        offset: 0,
        bits: (size * 8) as u8,
    })
}

/// `text` as a member's or parameter's [`Name`]; test names are short.
pub(crate) fn test_name(text: &str) -> Name<'_> {
    Name::new(text).expect("a test name fits in u32")
}

/// Members named and typed as `pairs` say, at offset 0 and no bitfield
/// (a union's, or a struct's where offsets do not matter to the test).
pub(crate) fn members<'a>(pairs: &[(&'a str, u32)]) -> Box<[Member<'a>]> {
    pairs
        .iter()
        .map(|&(name, ty)| Member {
            name: test_name(name),
            ty: TypeId(ty),
            bit_offset: 0,
            bitfield_size: 0,
        })
        .collect()
}
