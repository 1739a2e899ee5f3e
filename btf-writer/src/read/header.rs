//! The header and the section layout of a raw BTF blob: the one place
//! that reads `struct btf_header` (the reader, and anything else that needs
//! a blob's sections, go through [`parse_header`]).

use crate::error::{ErrorKind, FormatError, Section};
use crate::raw::{self, header_field as field, Endian, Header, Kind, KindLayout};

/// A validated header and where each section lies in the blob.
#[derive(Clone, Copy, Debug)]
pub struct Sections<'a> {
    /// The header as read (24-byte headers have zero `layout_off` and
    /// `layout_len`).
    pub header: Header,
    /// The blob's byte order.
    pub endian: Endian,
    /// The type section bytes.
    pub types: &'a [u8],
    /// Offset of the type section from the start of the blob.
    pub types_at: u64,
    /// The string section bytes.
    pub strings: &'a [u8],
    /// Offset of the string section from the start of the blob.
    pub strings_at: u64,
    /// The kind layout section bytes; empty when there is none.
    pub layout: &'a [u8],
    /// Offset of the kind layout section from the start of the blob.
    pub layout_at: u64,
}

impl Sections<'_> {
    /// The entries of the kind layout section, in kind order (none when
    /// the blob has no such section).
    pub fn kind_layouts(&self) -> impl Iterator<Item = KindLayout> + '_ {
        self.layout.chunks_exact(raw::KIND_LAYOUT_LEN).map(|entry| {
            let bytes = [entry[0], entry[1], entry[2], entry[3]];
            KindLayout::from_bytes(bytes, self.endian)
        })
    }
}

fn bytes<const N: usize>(data: &[u8], at: usize) -> Result<[u8; N], FormatError> {
    data.get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            FormatError::new(ErrorKind::TruncatedHeader {
                needed: (at + N) as u64,
                available: data.len() as u64,
            })
            .at(at as u64)
        })
}

/// Parses the header and checks that the sections lie inside the blob, in
/// bounds and apart, as libbpf's `btf_parse_hdr` and the kernel's
/// `btf_parse_hdr` require. A kind layout section (32-byte headers with a
/// non-zero `layout_len`) must also be 4-byte aligned, whole entries,
/// between the type and string sections (libbpf's rule), and, for every
/// kind this format defines, say what [`raw::KIND_LAYOUTS`] says: the
/// reader decodes those kinds by the format's rules, so an entry that
/// disagrees describes records it would misread. Entries past
/// [`Kind::MAX`] (kinds of a newer format) are accepted as they are.
/// With `layout_len` zero, `layout_off` is ignored, as libbpf and the
/// kernel do.
pub fn parse_header(data: &[u8]) -> Result<Sections<'_>, FormatError> {
    let magic = bytes::<2>(data, field::MAGIC)?;
    let endian = Endian::from_magic(magic).ok_or_else(|| {
        FormatError::new(ErrorKind::BadMagic(u16::from_le_bytes(magic))).at(field::MAGIC as u64)
    })?;
    let [version] = bytes::<1>(data, field::VERSION)?;
    if version != raw::VERSION {
        return Err(
            FormatError::new(ErrorKind::UnsupportedVersion(version)).at(field::VERSION as u64)
        );
    }
    let [flags] = bytes::<1>(data, field::FLAGS)?;
    if flags != 0 {
        return Err(FormatError::new(ErrorKind::UnsupportedFlags(flags)).at(field::FLAGS as u64));
    }
    let u32_at = |at: usize| bytes::<4>(data, at).map(|b| endian.u32(b));
    let hdr_len = u32_at(field::HDR_LEN)?;
    // A header must at least hold its own length.
    let short = hdr_len < raw::HEADER_LEN;
    if hdr_len < (field::HDR_LEN + 4) as u32 {
        return Err(FormatError::new(ErrorKind::HeaderTooShort(hdr_len)).at(field::HDR_LEN as u64));
    }
    if (data.len() as u64) < u64::from(hdr_len) {
        return Err(FormatError::new(ErrorKind::TruncatedHeader {
            needed: u64::from(hdr_len),
            available: data.len() as u64,
        })
        .at(field::HDR_LEN as u64));
    }
    // A header shorter than 24 bytes: the kernel's btf_parse_hdr copies
    // the bytes it has into a zeroed header, so the fields it lacks read as
    // zero (libbpf refuses a blob shorter than 24 bytes; the kernel takes
    // an empty split that is no more than such a header).
    let mut head = [0u8; raw::HEADER_LEN as usize];
    let have = (hdr_len as usize).min(head.len());
    if let (Some(to), Some(from)) = (head.get_mut(..have), data.get(..have)) {
        to.copy_from_slice(from);
    }
    let head_u32 = |at: usize| bytes::<4>(&head, at).map(|b| endian.u32(b));
    let mut header = Header {
        magic: raw::MAGIC,
        version,
        flags,
        hdr_len,
        type_off: head_u32(field::TYPE_OFF)?,
        type_len: head_u32(field::TYPE_LEN)?,
        str_off: head_u32(field::STR_OFF)?,
        str_len: head_u32(field::STR_LEN)?,
        layout_off: 0,
        layout_len: 0,
    };
    let mut known = raw::HEADER_LEN;
    if hdr_len >= raw::HEADER_LEN_WITH_LAYOUT {
        header.layout_off = u32_at(field::LAYOUT_OFF)?;
        header.layout_len = u32_at(field::LAYOUT_LEN)?;
        known = raw::HEADER_LEN_WITH_LAYOUT;
    }
    // The kernel accepts a longer header only if the part it does not know
    // is zero; so do we.
    let tail = data
        .get(known as usize..hdr_len as usize)
        .unwrap_or_default();
    if let Some(pos) = tail.iter().position(|&b| b != 0) {
        return Err(
            FormatError::new(ErrorKind::UnknownHeaderFields).at(u64::from(known) + pos as u64)
        );
    }

    let body = data.get(hdr_len as usize..).unwrap_or_default();
    // What the short header's zeroed fields describe is read only if the
    // sections cover what follows it exactly, as the kernel's
    // btf_check_sec_info wants: otherwise the bytes after it are more
    // likely a whole header's than sections of their own.
    let tiled = || {
        let mut sections = [
            (header.type_off, header.type_len),
            (header.str_off, header.str_len),
        ];
        u32::try_from(body.len()).is_ok_and(|len| check_section_tiling(len, &mut sections).is_ok())
    };
    if short && !tiled() {
        return Err(FormatError::new(ErrorKind::HeaderTooShort(hdr_len)).at(field::HDR_LEN as u64));
    }
    // An out-of-bounds section is reported at its offset field, the first
    // of the two header words that describe it.
    let section =
        |which: Section, field_at: usize, off: u32, len: u32| -> Result<&[u8], FormatError> {
            let start = off as usize;
            let end = start.checked_add(len as usize);
            end.and_then(|end| body.get(start..end)).ok_or_else(|| {
                FormatError::new(ErrorKind::SectionOutOfBounds {
                    section: which,
                    off,
                    len,
                })
                .at(field_at as u64)
            })
        };
    let types = section(
        Section::Types,
        field::TYPE_OFF,
        header.type_off,
        header.type_len,
    )?;
    let strings = section(
        Section::Strings,
        field::STR_OFF,
        header.str_off,
        header.str_len,
    )?;
    // Without a layout section, layout_off means nothing (libbpf and the
    // kernel ignore it).
    let layout_off = if header.layout_len == 0 {
        0
    } else {
        header.layout_off
    };
    let layout = section(
        Section::Layout,
        field::LAYOUT_OFF,
        layout_off,
        header.layout_len,
    )?;
    if header.type_off & 3 != 0 {
        return Err(
            FormatError::new(ErrorKind::MisalignedTypeSection(header.type_off))
                .at(field::TYPE_OFF as u64),
        );
    }
    let layout_at = u64::from(hdr_len) + u64::from(layout_off);
    if !layout.is_empty() {
        check_layout_section(&header, layout, layout_at, endian)?;
    }
    let spans = [
        (header.type_off, header.type_len),
        (header.str_off, header.str_len),
        (header.layout_off, header.layout_len),
    ];
    for (i, a) in spans.iter().enumerate() {
        for b in spans.iter().skip(i + 1) {
            if overlap(*a, *b) {
                return Err(FormatError::new(ErrorKind::SectionsOverlap).at(field::TYPE_OFF as u64));
            }
        }
    }
    Ok(Sections {
        header,
        endian,
        types,
        types_at: u64::from(hdr_len) + u64::from(header.type_off),
        strings,
        strings_at: u64::from(hdr_len) + u64::from(header.str_off),
        layout,
        layout_at,
    })
}

/// What the kernel's `btf_check_sec_info` finds wrong with a header's
/// sections: the one rule, asked by the reader (of a short header) and
/// by the kernel's checks (`crate::validate`, which reports its message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SectionTiling {
    /// A section starts past the data.
    InvalidOffset,
    /// A gap before a section, or data after the last.
    Unsupported,
    /// Two sections overlap.
    Overlap,
    /// A section runs past the data.
    TooLong,
}

impl SectionTiling {
    /// The kernel's log message.
    pub(crate) fn message(self) -> &'static str {
        match self {
            SectionTiling::InvalidOffset => "Invalid section offset",
            SectionTiling::Unsupported => "Unsupported section found",
            SectionTiling::Overlap => "Section overlap found",
            SectionTiling::TooLong => "Total section length too long",
        }
    }
}

/// `btf_check_sec_info`: whether `sections` (offset, length) cover the
/// `expected_total` bytes after the header with no gap and no overlap, in
/// the order of the kernel's sort.
pub(crate) fn check_section_tiling(
    expected_total: u32,
    sections: &mut [(u32, u32)],
) -> Result<(), SectionTiling> {
    // btf_sec_info_cmp compares the u32 differences as int.
    let cmp = |x: (u32, u32), y: (u32, u32)| {
        let by_off = x.0.wrapping_sub(y.0) as i32;
        if by_off != 0 {
            by_off
        } else {
            x.1.wrapping_sub(y.1) as i32
        }
    };
    sections.sort_by(|&x, &y| cmp(x, y).cmp(&0));
    let mut total: u32 = 0;
    for &(off, len) in sections.iter() {
        if expected_total < off {
            return Err(SectionTiling::InvalidOffset);
        }
        if total < off {
            return Err(SectionTiling::Unsupported);
        }
        if total > off {
            return Err(SectionTiling::Overlap);
        }
        if expected_total - total < len {
            return Err(SectionTiling::TooLong);
        }
        total += len;
    }
    if expected_total != total {
        return Err(SectionTiling::Unsupported);
    }
    Ok(())
}

/// The rules of a present kind layout section (see [`parse_header`]).
fn check_layout_section(
    header: &Header,
    layout: &[u8],
    layout_at: u64,
    endian: Endian,
) -> Result<(), FormatError> {
    let (off, len) = (header.layout_off, header.layout_len);
    if off & 3 != 0 {
        return Err(
            FormatError::new(ErrorKind::MisalignedLayoutSection(off)).at(field::LAYOUT_OFF as u64)
        );
    }
    if !layout
        .chunks_exact(raw::KIND_LAYOUT_LEN)
        .remainder()
        .is_empty()
    {
        return Err(
            FormatError::new(ErrorKind::BadLayoutSectionLength(len)).at(field::LAYOUT_LEN as u64)
        );
    }
    let types_end = u64::from(header.type_off) + u64::from(header.type_len);
    if u64::from(off) < types_end || u64::from(off) + u64::from(len) > u64::from(header.str_off) {
        return Err(FormatError::new(ErrorKind::LayoutSectionMisplaced {
            off,
            len,
            types_end,
            str_off: header.str_off,
        })
        .at(field::LAYOUT_OFF as u64));
    }
    for (index, (entry, expected)) in layout
        .chunks_exact(raw::KIND_LAYOUT_LEN)
        .zip(raw::KIND_LAYOUTS)
        .enumerate()
    {
        let found = KindLayout::from_bytes([entry[0], entry[1], entry[2], entry[3]], endian);
        if found != expected {
            // At most KIND_LAYOUTS.len() (20) entries are compared.
            let kind = Kind(index as u8);
            return Err(FormatError::new(ErrorKind::KindLayoutMismatch {
                kind,
                found,
                expected,
            })
            .at(layout_at + (index * raw::KIND_LAYOUT_LEN) as u64));
        }
    }
    Ok(())
}

/// Whether two non-empty (offset, length) spans share a byte.
fn overlap(a: (u32, u32), b: (u32, u32)) -> bool {
    let (a_start, a_end) = (u64::from(a.0), u64::from(a.0) + u64::from(a.1));
    let (b_start, b_end) = (u64::from(b.0), u64::from(b.0) + u64::from(b.1));
    a.1 != 0 && b.1 != 0 && a_start < b_end && b_start < a_end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(fields: [u32; 5]) -> Vec<u8> {
        let mut v = vec![0x9f, 0xeb, 1, 0];
        for f in fields {
            v.extend_from_slice(&f.to_le_bytes());
        }
        v
    }

    #[test]
    fn minimal_blob_lays_out() {
        let mut blob = header([24, 0, 0, 0, 1]);
        blob.push(0);
        let layout = parse_header(&blob).unwrap();
        assert_eq!(layout.endian, Endian::Little);
        assert_eq!(layout.strings, b"\0");
        assert_eq!(layout.strings_at, 24);
    }

    #[test]
    fn written_headers_read_back_in_both_orders_and_lengths() {
        for endian in [Endian::Little, Endian::Big] {
            for hdr_len in [raw::HEADER_LEN, raw::HEADER_LEN_WITH_LAYOUT, 40] {
                let mut header = Header::new(0, 1);
                header.hdr_len = hdr_len;
                let mut blob = Vec::new();
                header.write_to(&mut blob, endian);
                assert_eq!(blob.len(), hdr_len as usize);
                blob.push(0);
                let layout = parse_header(&blob).unwrap();
                assert_eq!((layout.header, layout.endian), (header, endian));
            }
        }
    }

    /// A blob with one INT record and the strings "\0int\0", laid out as
    /// `format` says.
    fn one_int(format: raw::HeaderFormat, endian: Endian) -> Vec<u8> {
        let header = Header::for_sections(format, 16, 5);
        let mut blob = Vec::new();
        header.write_to(&mut blob, endian);
        for word in [
            1,
            raw::info(Kind::INT, 0, false),
            4,
            raw::int_data(1, 0, 32),
        ] {
            blob.extend_from_slice(&endian.u32_bytes(word));
        }
        if format == raw::HeaderFormat::WithLayout {
            raw::write_layout_section(&mut blob, endian);
        }
        blob.extend_from_slice(b"\0int\0");
        blob
    }

    fn set_u32(blob: &mut [u8], at: usize, value: u32) {
        blob[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }

    #[test]
    fn every_header_format_reads_back_in_both_orders() {
        use raw::HeaderFormat::*;
        for endian in [Endian::Little, Endian::Big] {
            for format in [Short, Long, WithLayout] {
                let blob = one_int(format, endian);
                let sections = parse_header(&blob).unwrap();
                assert_eq!(sections.header.hdr_len, format.hdr_len());
                assert_eq!(sections.types.len(), 16);
                assert_eq!(sections.strings, b"\0int\0");
                let layouts: Vec<KindLayout> = sections.kind_layouts().collect();
                if format == WithLayout {
                    assert_eq!(layouts, raw::KIND_LAYOUTS);
                    assert_eq!(sections.layout_at, 32 + 16);
                } else {
                    assert!(layouts.is_empty());
                }
            }
        }
    }

    #[test]
    fn layout_off_without_layout_len_is_ignored() {
        // libbpf and the kernel look at layout_off only when layout_len is
        // not zero.
        let mut blob = one_int(raw::HeaderFormat::Long, Endian::Little);
        set_u32(&mut blob, field::LAYOUT_OFF, 0xffff_fff0);
        let sections = parse_header(&blob).unwrap();
        assert!(sections.layout.is_empty());
        assert_eq!(sections.header.layout_off, 0xffff_fff0);
    }

    #[test]
    fn malformed_layout_sections_are_rejected_precisely() {
        let good = one_int(raw::HeaderFormat::WithLayout, Endian::Little);
        let fail = |edit: &dyn Fn(&mut Vec<u8>)| {
            let mut blob = good.clone();
            edit(&mut blob);
            let err = parse_header(&blob).unwrap_err();
            (err.kind.clone(), err.offset, err.to_string())
        };
        // Not 4-byte aligned: the section moved by 2 (the strings follow
        // it, so they move too).
        let (kind, at, _) = fail(&|b| {
            set_u32(b, field::LAYOUT_OFF, 18);
            set_u32(b, field::STR_OFF, 98);
            set_u32(b, field::STR_LEN, 3);
        });
        assert_eq!(
            (kind, at),
            (ErrorKind::MisalignedLayoutSection(18), Some(24))
        );
        // Not whole entries.
        let (kind, at, _) = fail(&|b| set_u32(b, field::LAYOUT_LEN, 78));
        assert_eq!(
            (kind, at),
            (ErrorKind::BadLayoutSectionLength(78), Some(28))
        );
        // Overlapping the types.
        let (kind, at, message) = fail(&|b| set_u32(b, field::LAYOUT_OFF, 12));
        assert_eq!(
            (kind, at),
            (
                ErrorKind::LayoutSectionMisplaced {
                    off: 12,
                    len: 80,
                    types_end: 16,
                    str_off: 96
                },
                Some(24)
            )
        );
        assert!(
            message.contains("not between the end of the type section (16)"),
            "{message}"
        );
        // After the strings.
        let (kind, _, _) = fail(&|b| {
            set_u32(b, field::STR_OFF, 16);
            set_u32(b, field::LAYOUT_OFF, 24);
            set_u32(b, field::LAYOUT_LEN, 72);
        });
        assert!(
            matches!(kind, ErrorKind::LayoutSectionMisplaced { off: 24, .. }),
            "{kind:?}"
        );
        // Past the end of the data.
        let (kind, _, _) = fail(&|b| set_u32(b, field::LAYOUT_LEN, 0x1000));
        assert!(
            matches!(
                kind,
                ErrorKind::SectionOutOfBounds {
                    section: Section::Layout,
                    ..
                }
            ),
            "{kind:?}"
        );
        // An entry that contradicts the format: STRUCT's (kind 4) elem_sz.
        let entry_at = 32 + 16 + 4 * 4;
        let (kind, at, message) = fail(&|b| b[entry_at + 1] = 8);
        assert_eq!(at, Some(entry_at as u64));
        assert_eq!(
            kind,
            ErrorKind::KindLayoutMismatch {
                kind: Kind::STRUCT,
                found: KindLayout {
                    info_sz: 0,
                    elem_sz: 8,
                    flags: 0
                },
                expected: raw::KIND_LAYOUTS[4],
            }
        );
        assert!(
            message.contains("kind layout entry 4 (STRUCT)"),
            "{message}"
        );
        // Flags are undefined; a set one is refused too.
        let (kind, _, _) = fail(&|b| b[entry_at + 2] = 1);
        assert!(
            matches!(
                kind,
                ErrorKind::KindLayoutMismatch {
                    kind: Kind::STRUCT,
                    ..
                }
            ),
            "{kind:?}"
        );
    }

    #[test]
    fn shorter_or_longer_layout_sections_are_read() {
        // A writer that knew fewer kinds (its entries agree with ours), or
        // more (entries past ENUM64 are a newer format's business).
        let good = one_int(raw::HeaderFormat::WithLayout, Endian::Little);
        let mut fewer = good.clone();
        set_u32(&mut fewer, field::LAYOUT_LEN, 8);
        assert_eq!(parse_header(&fewer).unwrap().kind_layouts().count(), 2);
        let mut more = good[..32 + 16 + 80].to_vec();
        more.extend_from_slice(&[0, 12, 0, 0]);
        more.extend_from_slice(b"\0int\0");
        set_u32(&mut more, field::LAYOUT_LEN, 84);
        set_u32(&mut more, field::STR_OFF, 100);
        assert_eq!(parse_header(&more).unwrap().kind_layouts().count(), 21);
    }

    #[test]
    fn overlap_rule() {
        assert!(overlap((0, 12), (8, 4)));
        assert!(!overlap((0, 12), (12, 4)));
        assert!(!overlap((0, 0), (0, 4)));
    }

    #[test]
    fn longer_header_with_zero_tail_is_accepted_and_nonzero_tail_rejected() {
        let mut blob = header([40, 0, 0, 0, 1]);
        blob.extend_from_slice(&[0; 16]);
        blob.push(0);
        assert!(parse_header(&blob).is_ok());
        blob[35] = 1;
        let err = parse_header(&blob).unwrap_err();
        assert_eq!(err.kind, ErrorKind::UnknownHeaderFields);
        assert_eq!(err.offset, Some(35));
    }
}
