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
