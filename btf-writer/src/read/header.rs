//! The header and the section layout of a raw BTF blob.

use crate::error::{Error, ErrorKind, Section};
use crate::raw::{self, header_field as field, Endian, Header};

/// The validated layout: where each section lies in the blob.
#[derive(Debug)]
pub(super) struct Layout<'a> {
    pub header: Header,
    pub endian: Endian,
    /// The type section bytes.
    pub types: &'a [u8],
    /// Offset of the type section from the start of the blob.
    pub types_at: u64,
    /// The string section bytes.
    pub strings: &'a [u8],
    /// Offset of the string section from the start of the blob.
    pub strings_at: u64,
}

fn bytes<const N: usize>(data: &[u8], at: usize) -> Result<[u8; N], Error> {
    data.get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            Error::new(ErrorKind::TruncatedHeader {
                needed: (at + N) as u64,
                available: data.len() as u64,
            })
            .at(at as u64)
        })
}

/// Parses the header and checks that the sections lie inside the blob, in
/// bounds and apart, as libbpf's `btf_parse_hdr` and the kernel's
/// `btf_parse_hdr` require.
pub(super) fn parse_layout(data: &[u8]) -> Result<Layout<'_>, Error> {
    let magic = bytes::<2>(data, field::MAGIC)?;
    let endian = Endian::from_magic(magic).ok_or_else(|| {
        Error::new(ErrorKind::BadMagic(u16::from_le_bytes(magic))).at(field::MAGIC as u64)
    })?;
    let [version] = bytes::<1>(data, field::VERSION)?;
    if version != raw::VERSION {
        return Err(Error::new(ErrorKind::UnsupportedVersion(version)).at(field::VERSION as u64));
    }
    let [flags] = bytes::<1>(data, field::FLAGS)?;
    if flags != 0 {
        return Err(Error::new(ErrorKind::UnsupportedFlags(flags)).at(field::FLAGS as u64));
    }
    let u32_at = |at: usize| bytes::<4>(data, at).map(|b| endian.u32(b));
    let hdr_len = u32_at(field::HDR_LEN)?;
    if hdr_len < raw::HEADER_LEN {
        return Err(Error::new(ErrorKind::HeaderTooShort(hdr_len)).at(field::HDR_LEN as u64));
    }
    if (data.len() as u64) < u64::from(hdr_len) {
        return Err(Error::new(ErrorKind::TruncatedHeader {
            needed: u64::from(hdr_len),
            available: data.len() as u64,
        })
        .at(field::HDR_LEN as u64));
    }
    let mut header = Header {
        magic: raw::MAGIC,
        version,
        flags,
        hdr_len,
        type_off: u32_at(field::TYPE_OFF)?,
        type_len: u32_at(field::TYPE_LEN)?,
        str_off: u32_at(field::STR_OFF)?,
        str_len: u32_at(field::STR_LEN)?,
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
        return Err(Error::new(ErrorKind::UnknownHeaderFields).at(u64::from(known) + pos as u64));
    }

    let body = data.get(hdr_len as usize..).unwrap_or_default();
    // An out-of-bounds section is reported at its offset field, the first
    // of the two header words that describe it.
    let section = |which: Section, field_at: usize, off: u32, len: u32| -> Result<&[u8], Error> {
        let start = off as usize;
        let end = start.checked_add(len as usize);
        end.and_then(|end| body.get(start..end)).ok_or_else(|| {
            Error::new(ErrorKind::SectionOutOfBounds {
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
    section(
        Section::Layout,
        field::LAYOUT_OFF,
        header.layout_off,
        header.layout_len,
    )?;
    if header.type_off & 3 != 0 {
        return Err(
            Error::new(ErrorKind::MisalignedTypeSection(header.type_off))
                .at(field::TYPE_OFF as u64),
        );
    }
    let spans = [
        (header.type_off, header.type_len),
        (header.str_off, header.str_len),
        (header.layout_off, header.layout_len),
    ];
    for (i, a) in spans.iter().enumerate() {
        for b in spans.iter().skip(i + 1) {
            if overlap(*a, *b) {
                return Err(Error::new(ErrorKind::SectionsOverlap).at(field::TYPE_OFF as u64));
            }
        }
    }
    Ok(Layout {
        header,
        endian,
        types,
        types_at: u64::from(hdr_len) + u64::from(header.type_off),
        strings,
        strings_at: u64::from(hdr_len) + u64::from(header.str_off),
    })
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
        let layout = parse_layout(&blob).unwrap();
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
                let layout = parse_layout(&blob).unwrap();
                assert_eq!((layout.header, layout.endian), (header, endian));
            }
        }
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
        assert!(parse_layout(&blob).is_ok());
        blob[35] = 1;
        let err = parse_layout(&blob).unwrap_err();
        assert_eq!(err.kind, ErrorKind::UnknownHeaderFields);
        assert_eq!(err.offset, Some(35));
    }
}
