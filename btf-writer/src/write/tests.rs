//! Writer tests: every limit of the format is an error, never a
//! truncation. Round trips with the reader live in `read`'s tests.

use super::*;
use crate::error::ErrorKind;
use crate::raw;
use crate::test_types;
use crate::types::*;

fn one(ty: Type<'static>) -> Btf<'static> {
    let mut btf = Btf::default();
    btf.add(test_types::int("int", 4, IntEncoding::SIGNED));
    btf.add(ty);
    btf
}

fn write_err(btf: &Btf<'_>) -> Error {
    write(btf, Endian::Little).unwrap_err()
}

#[test]
fn writer_rejects_what_the_format_cannot_hold() {
    let member = |bit_offset, bitfield_size| Member {
        name: "m",
        ty: TypeId(1),
        bit_offset,
        bitfield_size,
    };
    let composite = |members, kind_flag| {
        Type::Struct(Composite {
            name: "s",
            size: 4,
            members,
            kind_flag,
        })
    };

    let e = write_err(&one(composite(vec![member(0, 0); 0x10000], false)));
    assert_eq!(
        (e.kind, e.type_id),
        (ErrorKind::VlenTooLarge(0x10000), Some(TypeId(2)))
    );
    assert!(write(
        &one(composite(vec![member(0, 0); 0xffff], false)),
        Endian::Little
    )
    .is_ok());

    let e = write_err(&one(composite(vec![member(1 << 24, 1)], true)));
    assert_eq!(
        e.kind,
        ErrorKind::BitfieldOffsetTooLarge {
            member: 0,
            bit_offset: 1 << 24
        }
    );
    let e = write_err(&one(composite(vec![member(0, 0), member(8, 1)], false)));
    assert_eq!(e.kind, ErrorKind::BitfieldWithoutKindFlag { member: 1 });

    let e = write_err(&one(Type::Enum(Enum {
        name: "e",
        size: 4,
        signed: false,
        values: vec![EnumValue {
            name: "X",
            value: 1 << 32,
        }],
    })));
    assert_eq!(e.kind, ErrorKind::EnumValueTooLarge(1 << 32));

    let e = write_err(&one(Type::Ptr(TypeId(3))));
    assert_eq!(e.kind, ErrorKind::TypeIdOutOfRange(3));

    let e = write_err(&one(Type::Int(Int {
        name: "i",
        size: 4,
        encoding: IntEncoding(3),
        offset: 0,
        bits: 8,
    })));
    assert!(matches!(e.kind, ErrorKind::BadInt(_)));
    let e = write_err(&one(Type::Int(Int {
        name: "i",
        size: 4,
        encoding: IntEncoding(0),
        offset: 0,
        bits: 33,
    })));
    assert!(matches!(e.kind, ErrorKind::BadInt(_)));

    let e = write_err(&one(Type::Typedef(Named {
        name: "a\0b",
        ty: TypeId(1),
    })));
    assert_eq!(e.kind, ErrorKind::NameContainsNul);

    let many = Btf {
        types: vec![Type::Ptr(TypeId(0)); 10],
        base_type_count: raw::MAX_TYPE_ID - 5,
        base_str_len: 1,
    };
    assert!(matches!(write_err(&many).kind, ErrorKind::TooManyTypes(_)));
}

#[test]
fn writer_rejects_string_section_past_max_name_offset() {
    let split = Btf {
        types: vec![Type::Typedef(Named {
            name: "x",
            ty: TypeId(1),
        })],
        base_type_count: 1,
        base_str_len: raw::MAX_NAME_OFFSET,
    };
    assert!(matches!(
        write_err(&split).kind,
        ErrorKind::StringsTooLarge(_)
    ));
}
