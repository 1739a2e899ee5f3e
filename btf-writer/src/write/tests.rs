//! Writer tests: every limit of the format is an error, never a
//! truncation. Round trips with the reader live in `read`'s tests.

use super::*;
use crate::error::ErrorKind;
use crate::raw;
use crate::test_types;
use crate::test_types::test_name;
use crate::types::*;

fn one(ty: Type<'static>) -> Btf<'static> {
    let mut btf = Btf::default();
    btf.add(test_types::int("int", 4, IntEncoding::SIGNED));
    btf.add(ty);
    btf
}

fn write_err(btf: &Btf<'_>) -> FormatError {
    write(btf, Endian::Little).unwrap_err()
}

#[test]
fn writer_rejects_what_the_format_cannot_hold() {
    let member = |bit_offset, bitfield_size| Member {
        name: test_name("m"),
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

    let e = write_err(&one(composite(vec![member(0, 0); 0x10000].into(), false)));
    assert_eq!(
        (e.kind, e.type_id),
        (ErrorKind::VlenTooLarge(0x10000), Some(TypeId(2)))
    );
    assert!(write(
        &one(composite(vec![member(0, 0); 0xffff].into(), false)),
        Endian::Little
    )
    .is_ok());

    let e = write_err(&one(composite(vec![member(1 << 24, 1)].into(), true)));
    assert_eq!(
        e.kind,
        ErrorKind::BitfieldOffsetTooLarge {
            member: 0,
            bit_offset: 1 << 24
        }
    );
    let e = write_err(&one(composite(
        vec![member(0, 0), member(8, 1)].into(),
        false,
    )));
    assert_eq!(e.kind, ErrorKind::BitfieldWithoutKindFlag { member: 1 });

    let e = write_err(&one(Type::Enum(Enum {
        name: "e",
        size: 4,
        signed: false,
        values: vec![EnumValue {
            name: "X",
            value: 1 << 32,
        }]
        .into(),
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

/// Writes `btf` with reserve's parallel path forced (even for a few
/// types) and with the sequential one.
fn both_ways(
    btf: &Btf<'_>,
    base: Option<&crate::strings::StringIndex<'_>>,
    table: Option<&crate::strings::StringTable>,
) -> (Result<Vec<u8>, FormatError>, Result<Vec<u8>, FormatError>) {
    let with = |parallel_min_types| {
        let plan = reserve::reserve_from(
            btf,
            base,
            table.cloned(),
            HeaderFormat::Short,
            parallel_min_types,
        )?;
        emit::emit(btf, plan, Endian::Big)
    };
    (with(0), with(usize::MAX))
}

/// Names that repeat, some equal in content but at different addresses,
/// some empty, of both length parities.
fn names_pool() -> Vec<String> {
    (0..300)
        .map(|i| match i % 7 {
            0 => String::new(),
            1 => format!("n{}", i % 11),
            _ => format!("name_{}", "x".repeat(i % 13)),
        })
        .collect()
}

/// Types of every kind with names, taking them from `pool` in a scrambled
/// order, referring to type 1.
fn many_named_types(pool: &[String]) -> Btf<'_> {
    let mut btf = Btf::default();
    btf.add(test_types::int("int", 4, IntEncoding::SIGNED));
    let name = |i: usize| pool[(i * 37) % pool.len()].as_str();
    for i in 0..400 {
        let ty = match i % 5 {
            0 => Type::Struct(Composite {
                name: name(i),
                size: 8,
                members: (0..3)
                    .map(|m| Member {
                        name: test_name(name(i + m + 1)),
                        ty: TypeId(1),
                        bit_offset: 32 * (m as u32 % 2),
                        bitfield_size: 0,
                    })
                    .collect(),
                kind_flag: false,
            }),
            1 => Type::Enum(Enum {
                name: name(i),
                size: 4,
                signed: false,
                values: (0..2)
                    .map(|v| EnumValue {
                        name: name(i * 3 + v),
                        value: v as u64,
                    })
                    .collect(),
            }),
            2 => Type::FuncProto(FuncProto {
                ret: TypeId(1),
                params: vec![Param {
                    name: test_name(name(i + 5)),
                    ty: TypeId(1),
                }]
                .into(),
            }),
            3 => Type::Typedef(Named {
                name: name(i),
                ty: TypeId(1),
            }),
            _ => Type::Ptr(TypeId(1)),
        };
        btf.add(ty);
    }
    btf
}

#[test]
fn parallel_and_sequential_paths_write_the_same_bytes() {
    let pool = names_pool();
    let btf = many_named_types(&pool);
    // The parallel path did not fall back to the sequential one.
    assert!(
        reserve::reserve_from(&btf, None, None, HeaderFormat::Short, 0)
            .unwrap()
            .cut
            .is_some()
    );
    let (parallel, sequential) = both_ways(&btf, None, None);
    let parallel = parallel.unwrap();
    assert_eq!(parallel, sequential.unwrap());
    // The result is valid BTF holding the same types.
    let parsed = crate::read::parse(&parallel, None).unwrap();
    assert_eq!(parsed.btf.types, btf.types);

    // A split whose base already holds some of the names.
    let base_strings = b"\0n3\0name_xx\0int\0";
    let index = crate::strings::StringIndex::from_section(base_strings);
    let mut split = many_named_types(&pool);
    split.base_type_count = 1;
    split.base_str_len = base_strings.len() as u32;
    let (parallel, sequential) = both_ways(&split, Some(&index), None);
    assert_eq!(parallel.unwrap(), sequential.unwrap());

    // A table seeded with an existing section keeps its offsets.
    let seed = crate::strings::StringTable::from_section(0, b"\0name_x\0zz\0n5\0").unwrap();
    let (parallel, sequential) = both_ways(&btf, None, Some(&seed));
    assert_eq!(parallel.unwrap(), sequential.unwrap());
}

#[test]
fn parallel_path_reports_the_sequential_error() {
    let pool = names_pool();
    let mut btf = many_named_types(&pool);
    btf.types[300] = Type::Typedef(Named {
        name: "a\0b",
        ty: TypeId(1),
    });
    btf.types[350] = Type::Ptr(TypeId(9999));
    let (parallel, sequential) = both_ways(&btf, None, None);
    let (parallel, sequential) = (parallel.unwrap_err(), sequential.unwrap_err());
    assert_eq!(parallel.kind, ErrorKind::NameContainsNul);
    assert_eq!(parallel.type_id, Some(TypeId(301)));
    assert_eq!(
        (parallel.kind, parallel.type_id),
        (sequential.kind, sequential.type_id)
    );
}

#[test]
fn parallel_path_handles_types_without_names() {
    let btf = Btf {
        types: vec![Type::Ptr(TypeId(0)); 5],
        base_type_count: 10,
        base_str_len: 20,
    };
    let (parallel, sequential) = both_ways(&btf, None, None);
    let parallel = parallel.unwrap();
    assert_eq!(parallel, sequential.unwrap());
    // A split with no string of its own still has a one-byte section.
    assert_eq!(parallel.last(), Some(&0));
}

/// Writes `btf` with `format`, through reserve's parallel path
/// (`parallel_min_types` 0) or its sequential one.
fn with_format(
    btf: &Btf<'_>,
    format: raw::HeaderFormat,
    endian: Endian,
    parallel: bool,
) -> Vec<u8> {
    let parallel_min_types = if parallel { 0 } else { usize::MAX };
    let plan = reserve::reserve_from(btf, None, None, format, parallel_min_types).unwrap();
    emit::emit(btf, plan, endian).unwrap()
}

#[test]
fn header_formats_change_only_the_header_and_layout_section() {
    use raw::HeaderFormat::*;
    let pool = names_pool();
    let btf = many_named_types(&pool);
    for endian in [Endian::Little, Endian::Big] {
        for parallel in [false, true] {
            let short = with_format(&btf, Short, endian, parallel);
            let type_len =
                short.len() - 24 - crate::read::parse_header(&short).unwrap().strings.len();
            let types = &short[24..24 + type_len];
            let strings = &short[24 + type_len..];

            let long = with_format(&btf, Long, endian, parallel);
            assert_eq!(long.len(), short.len() + 8);
            assert_eq!(
                &long[32..],
                &short[24..],
                "Long: same sections after a longer header"
            );
            assert_eq!(
                &long[24..32],
                &[0; 8],
                "Long: zero layout_off and layout_len"
            );

            let with = with_format(&btf, WithLayout, endian, parallel);
            let mut layout = Vec::new();
            raw::write_layout_section(&mut layout, endian);
            let expected: Vec<u8> = [types, &layout, strings].concat();
            assert_eq!(
                &with[32..],
                &expected[..],
                "WithLayout: types, layout, strings"
            );
            let sections = crate::read::parse_header(&with).unwrap();
            let header = sections.header;
            assert_eq!(
                (
                    header.hdr_len,
                    header.type_len,
                    header.layout_off,
                    header.layout_len,
                    header.str_off
                ),
                (
                    32,
                    type_len as u32,
                    type_len as u32,
                    80,
                    type_len as u32 + 80
                )
            );
            // The whole reader takes each, with the same types.
            let read = |blob: &[u8]| crate::read::parse(blob, None).unwrap().btf.types.len();
            assert_eq!(read(&with), btf.types.len());
            assert_eq!(read(&long), btf.types.len());
        }
    }
}

#[test]
fn split_writes_take_the_long_header_too() {
    let base_btf = one(Type::Ptr(TypeId(1)));
    let base_blob = write(&base_btf, Endian::Little).unwrap();
    let base = crate::read::parse(&base_blob, None).unwrap();
    let mut split = Btf {
        base_type_count: base.total_type_count(),
        base_str_len: base.str_end(),
        ..Btf::default()
    };
    split.add(Type::Const(TypeId(2)));
    let index = base.string_index();
    let blob = write_with(
        &split,
        WriteOptions {
            endian: Endian::Little,
            base_strings: Some(&index),
            header: raw::HeaderFormat::Long,
            ..WriteOptions::default()
        },
    )
    .unwrap();
    let parsed = crate::read::parse(&blob, Some(&base)).unwrap();
    assert_eq!((parsed.header.hdr_len, parsed.header.layout_len), (32, 0));
    assert_eq!(parsed.btf.types.len(), 1);
}
