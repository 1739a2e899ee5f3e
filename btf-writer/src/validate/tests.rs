//! Hand-made blobs, each breaking one rule the kernel's log names.

use super::*;

/// A little-endian blob from type words and a string section.
fn blob(types: &[u32], strings: &[u8]) -> Vec<u8> {
    let type_len = (types.len() * 4) as u32;
    let mut out = Vec::new();
    crate::raw::Header::new(type_len, strings.len() as u32).write_to(&mut out, Endian::Little);
    for w in types {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(strings);
    out
}

fn info(kind: u8, vlen: u32, kflag: bool) -> u32 {
    (u32::from(kflag) << 31) | (u32::from(kind) << 24) | vlen
}

const INT: [u32; 4] = [1, 1 << 24, 4, (1 << 24) | 32];
const STRS: &[u8] = b"\0int\0s\0a\0b\0";

fn check(types: &[u32]) -> Result<(), String> {
    let data = blob(types, STRS);
    validate(&data, None, Options::default())
        .map(|_| ())
        .map_err(|v| v[0].message.clone())
}

#[test]
fn int_alone_passes() {
    assert_eq!(check(&INT), Ok(()));
}

#[test]
fn struct_member_past_its_size_is_rejected() {
    let mut t = INT.to_vec();
    // struct s { int a; } of size 2
    t.extend([5, info(kind::STRUCT, 1, false), 2, 7, 1, 0]);
    assert_eq!(
        check(&t),
        Err("member a: Member exceeds struct_size".into())
    );
}

#[test]
fn typedef_loop_is_detected() {
    let mut t = INT.to_vec();
    t.extend([5, info(kind::TYPEDEF, 0, false), 3]);
    t.extend([7, info(kind::TYPEDEF, 0, false), 2]);
    assert_eq!(check(&t), Err("Loop detected".into()));
}

#[test]
fn pointer_chain_deeper_than_32_is_rejected_and_32_passes() {
    for (depth, ok) in [(31u32, true), (40, false)] {
        let mut t = INT.to_vec();
        // ptr 2 -> ptr 3 -> ... -> int
        for i in 0..depth {
            let target = if i + 1 == depth { 1 } else { i + 3 };
            t.extend([0, info(kind::PTR, 0, false), target]);
        }
        let got = check(&t);
        assert_eq!(got.is_ok(), ok, "depth {depth}: {got:?}");
    }
}

#[test]
fn header_and_strings() {
    let mut data = blob(&INT, STRS);
    data[0] = 0;
    assert_eq!(
        validate(&data, None, Options::default()).unwrap_err()[0].message,
        "Invalid magic"
    );
    let mut data = blob(&INT, STRS);
    *data.last_mut().unwrap() = b'x';
    assert_eq!(
        validate(&data, None, Options::default()).unwrap_err()[0].message,
        "Invalid string section"
    );
}

#[test]
fn enum_size_three_is_rejected() {
    let mut t = INT.to_vec();
    t.extend([5, info(kind::ENUM, 1, false), 3, 7, 0]);
    assert_eq!(check(&t), Err("Unexpected size".into()));
}

/// A split whose header says `type_len` bytes of `types` and `strings`.
fn split_blob(types: &[u32], strings: &[u8]) -> Vec<u8> {
    blob(types, strings)
}

#[test]
fn split_is_checked_on_its_base_as_btf_parse_module_does() {
    let base_data = blob(&INT, STRS);
    let base = validate(&base_data, None, Options::default()).unwrap();
    assert_eq!(base.total_types(), 2);
    // [2] PTR -> [1] int (a base type); [3] STRUCT "s2" (split string at
    // base str_len + 1) { int a; } with "a" in the base strings.
    let base_len = STRS.len() as u32;
    let split_types = [
        0,
        info(kind::PTR, 0, false),
        1,
        base_len + 1,
        info(kind::STRUCT, 1, false),
        4,
        7,
        1,
        0,
    ];
    let split = split_blob(&split_types, b"\0s2\0");
    assert!(validate(&split, Some(&base), Options::default()).is_ok());
    // A split may have an empty string section and need not start with NUL.
    let no_strings = split_blob(&[0, info(kind::PTR, 0, false), 1], b"");
    assert!(validate(&no_strings, Some(&base), Options::default()).is_ok());
    // A reference past the last type is caught in resolution.
    let dangling = split_blob(&[0, info(kind::PTR, 0, false), 9], b"");
    let v = validate(&dangling, Some(&base), Options::default()).unwrap_err();
    assert_eq!(
        (v[0].type_id, v[0].message.as_str()),
        (2, "Invalid type_id")
    );
    // Standalone, an empty string section is refused, and the split's
    // names point past its own strings.
    let v = validate(&no_strings, None, Options::default()).unwrap_err();
    assert_eq!(v[0].message, "Invalid string section");
    let v = validate(&split, None, Options::default()).unwrap_err();
    assert_eq!(v[0].message, "[2] Invalid name_offset:12");
}

/// A split on a base whose references were not resolved up front
/// ([`validate_split_on`]): the base types it reaches are resolved, with
/// the kernel's rules and wording, and what they resolve to counts in the
/// split's own checks; a base type it does not reach is not looked at.
#[test]
fn split_on_an_unresolved_base_resolves_what_it_reaches() {
    let mut base_types = INT.to_vec();
    // [2] typedef a -> [3], [3] typedef b -> [2]: a loop.
    base_types.extend([7, info(kind::TYPEDEF, 0, false), 3]);
    base_types.extend([9, info(kind::TYPEDEF, 0, false), 2]);
    // [4] PTR -> int, [5] typedef s -> [4] (8 bytes once resolved).
    base_types.extend([0, info(kind::PTR, 0, false), 1]);
    base_types.extend([5, info(kind::TYPEDEF, 0, false), 4]);
    let base_data = blob(&base_types, STRS);
    let whole = validate(&base_data, None, Options::default()).unwrap_err();
    assert_eq!(whole[0].message, "Loop detected");
    let base = validate_base_records(&base_data, Options::default()).unwrap();

    let base_len = STRS.len() as u32;
    // [6] struct s2 { s a; } of `size` bytes.
    let split_with = |size: u32| {
        split_blob(
            &[base_len + 1, info(kind::STRUCT, 1, false), size, 7, 5, 0],
            b"\0s2\0",
        )
    };
    assert!(validate_split_on(&split_with(8), &base, Options::default()).is_ok());
    match validate_split_on(&split_with(4), &base, Options::default()) {
        Err(SplitRejected::Split(v)) => {
            assert_eq!(
                (v[0].type_id, v[0].message.as_str()),
                (6, "member a: Member exceeds struct_size")
            )
        }
        other => panic!("{other:?}"),
    }
    // [6] PTR -> [2]: the loop is reached, and is the base's fault.
    let into_loop = split_blob(&[0, info(kind::PTR, 0, false), 2], b"");
    match validate_split_on(&into_loop, &base, Options::default()) {
        Err(SplitRejected::Base(v)) => {
            assert_eq!((v[0].type_id, v[0].message.as_str()), (2, "Loop detected"))
        }
        other => panic!("{other:?}"),
    }
    // The split's own records are checked before anything is resolved.
    let bad_split = split_blob(&[0, info(kind::PTR, 1, false), 2], b"");
    match validate_split_on(&bad_split, &base, Options::default()) {
        Err(SplitRejected::Split(v)) => assert_eq!(v[0].message, "vlen != 0"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn big_endian_blob_is_read_in_its_order_only_when_asked() {
    let mut data = Vec::new();
    crate::raw::Header::new(16, STRS.len() as u32).write_to(&mut data, Endian::Big);
    for w in INT {
        data.extend_from_slice(&w.to_be_bytes());
    }
    data.extend_from_slice(STRS);
    let as_written = Options {
        byte_order: ByteOrder::FromMagic,
        size_limit: false,
        layout_section: false,
    };
    assert!(validate(&data, None, as_written).is_ok());
    // The kernel reads hdr_len before the magic: 24 big-endian is 0x18000000
    // little-endian, past the end of the blob.
    let v = validate(&data, None, Options::default()).unwrap_err();
    assert_eq!(v[0].message, "btf_header not found");
}

/// `--btf_features=layout` output (libbpf 1.8's 32-byte header and kind
/// layout section): refused as the running 6.x kernel refuses any header
/// byte past the 24th, taken by Linux 7.1's rules when asked, and still
/// refused there when the section is broken.
#[test]
fn layout_section_is_taken_only_by_7_1_rules() {
    let data = blob(&INT, STRS);
    let parsed = crate::read::parse(&data, None).expect("a hand-made blob parses");
    let options = crate::write::WriteOptions {
        endian: Endian::Little,
        base_strings: None,
        strings: None,
        header: crate::raw::HeaderFormat::WithLayout,
    };
    let with_layout = crate::write::write_with(&parsed.btf, options).expect("write with layout");
    assert!(
        with_layout.len() > data.len() + 8,
        "no layout section was written"
    );
    let as_6_18 = validate(&with_layout, None, Options::default());
    assert_eq!(
        as_6_18.map(|_| ()).map_err(|v| v[0].message.clone()),
        Err("Unsupported btf_header".to_string())
    );
    let as_7_1 = Options {
        layout_section: true,
        ..Options::default()
    };
    assert!(validate(&with_layout, None, as_7_1).is_ok());
    // A layout section that overlaps the strings.
    let mut broken = with_layout.clone();
    let layout_len = u32::from_le_bytes([broken[28], broken[29], broken[30], broken[31]]);
    broken[28..32].copy_from_slice(&(layout_len + 4).to_le_bytes());
    assert!(validate(&broken, None, as_7_1).is_err());
}

/// A little-endian BTF of `types` and `strings` (see [`blob`]) as
/// `validate` sets it up before the meta checks, with no base.
fn unchecked<'a>(data: &'a [u8], types: &[u32], strings: &[u8]) -> Checked<'a> {
    Checked {
        data,
        endian: Endian::Little,
        strings_at: 24 + types.len() * 4,
        str_len: strings.len() as u32,
        identifiers: Default::default(),
        type_at: Vec::new(),
        start_id: 0,
        start_str_off: 0,
        resolved_ids: Vec::new(),
        resolved_sizes: Vec::new(),
        base: None,
    }
}

/// Records of every length rule (INT, PTR, STRUCT, FUNC_PROTO, ENUM),
/// thousands of them, so that several tasks check their share: the
/// parallel meta checks find the records where the kernel's order finds
/// them. One bad record leaves the parallel checks without an answer, for
/// the kernel's order to find and word.
#[test]
fn parallel_meta_checks_find_the_records_the_kernel_order_finds() {
    let strings = b"\0int\0s\0a\0e\0";
    let mut types = vec![1, info(kind::INT, 0, false), 4, (1 << 24) | 32];
    for i in 0..3000u32 {
        let target = 1 + (i % 7);
        types.extend([0, info(kind::PTR, 0, false), target]);
        types.extend([5, info(kind::STRUCT, 1, false), 4, 7, 1, 0]);
        types.extend([0, info(kind::FUNC_PROTO, 2, false), 1, 7, 1, 0, 1]);
        types.extend([9, info(kind::ENUM, 1, false), 4, 9, i]);
    }
    let type_len = types.len() * 4;
    let data = blob(&types, strings);
    let in_order = {
        let mut btf = unchecked(&data, &types, strings);
        meta::check_all_metas_in_order(&mut btf, 24, type_len).expect("valid");
        btf.type_at
    };
    let parallel = meta::all_metas_in_parallel(&unchecked(&data, &types, strings), 24, type_len);
    assert_eq!(in_order.len(), 1 + 1 + 4 * 3000);
    assert_eq!(parallel, Some(in_order));

    // `types` with one word changed: the parallel checks give no answer,
    // and `validate` the kernel's first violation (id, message).
    let refused = |at: usize, word: u32| {
        let mut bad = types.clone();
        bad[at] = word;
        let data = blob(&bad, strings);
        let btf = unchecked(&data, &bad, strings);
        assert_eq!(meta::all_metas_in_parallel(&btf, 24, type_len), None);
        let err = validate(&data, None, Options::default()).expect_err("refused");
        (err[0].type_id, err[0].message.clone())
    };
    // A PTR with a name, past the first task's records.
    let ptr = 4 + 21 * 2500;
    assert_eq!(types[ptr + 1], info(kind::PTR, 0, false));
    assert_eq!(refused(ptr, 1), (10_002, "Invalid name".to_string()));
    // An INT whose name is past the strings: INT's own check does not
    // look at names, btf_check_meta does.
    assert_eq!(
        refused(0, 1000),
        (1, "[1] Invalid name_offset:1000".to_string())
    );
}
