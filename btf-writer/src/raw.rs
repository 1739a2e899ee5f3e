//! The BTF on-disk format, as specified by the kernel's
//! `Documentation/bpf/btf.rst`. Every rule of the format lives here: the
//! kinds, the header layouts (24 and 32 bytes) and the kind layout
//! section, the `info` word, each kind's trailing records, the INT and
//! member offset encodings, and the limits. The reader and the writer only
//! move bytes according to these definitions.
//!
//! This module depends on nothing else in the crate: the model
//! ([`crate::types::Type`]) maps itself onto these definitions with its
//! `kind`, `name`, `info` and `size_or_type` methods, so adding a kind
//! means a [`Kind`] and a [`KIND_LAYOUTS`] entry here, a variant there,
//! and changes only in the passes whose behaviour differs for it.
//!
//! Layout (btf.rst section 2): a header, then (at offsets relative to the
//! end of the header) a type section of variable-length records and a
//! string section of NUL-terminated strings. Every record starts with the
//! 12-byte `struct btf_type { name_off, info, size_or_type }`, followed by
//! kind-specific data whose length depends on the kind and `vlen`.

/// `BTF_MAGIC`, read in the blob's own byte order (btf.rst 2.1).
pub const MAGIC: u16 = 0xeb9f;
/// The only version defined (btf.rst 2.1).
pub const VERSION: u8 = 1;
/// Size of the version 1 header: magic, version, flags, hdr_len and the
/// offsets and lengths of the type and string sections.
pub const HEADER_LEN: u32 = 24;
/// Size of the longer header newer libbpf writes (pahole 1.31 output has
/// it): two more u32s, `layout_off` and `layout_len`, for an optional kind
/// layout section. Zero there means no such section.
pub const HEADER_LEN_WITH_LAYOUT: u32 = 32;

/// Which header a writer emits, and whether a kind layout section follows
/// the type section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HeaderFormat {
    /// The 24-byte version 1 header and no layout section: what pahole
    /// writes with libbpf before 1.8, and every BTF reader understands.
    #[default]
    Short,
    /// The 32-byte header with `layout_off` and `layout_len` zero: what
    /// libbpf 1.8 writes for BTF without a layout section (pahole's split
    /// BTF and distilled bases with `--btf_features=layout`).
    Long,
    /// The 32-byte header and the kind layout section ([`KIND_LAYOUTS`])
    /// between the type and string sections: libbpf 1.8's `add_layout`,
    /// which pahole asks for with `--btf_features=layout` on base BTF.
    WithLayout,
}

impl HeaderFormat {
    /// The `hdr_len` this format writes.
    pub const fn hdr_len(self) -> u32 {
        match self {
            HeaderFormat::Short => HEADER_LEN,
            HeaderFormat::Long | HeaderFormat::WithLayout => HEADER_LEN_WITH_LAYOUT,
        }
    }
}

/// `struct btf_layout` (the kernel's uapi `linux/btf.h`, since Linux 7.1):
/// how a record of one kind is laid out after its 12-byte `btf_type`, so
/// that a reader can skip kinds it does not know. The kind layout section
/// holds one per kind, indexed by kind number, starting at kind 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KindLayout {
    /// `info_sz`: bytes of the one fixed-size element after `btf_type`.
    pub info_sz: u8,
    /// `elem_sz`: bytes of each of the `vlen` elements after that.
    pub elem_sz: u8,
    /// `flags`: no flag is defined; libbpf writes 0.
    pub flags: u16,
}

/// Size of a `struct btf_layout`.
pub const KIND_LAYOUT_LEN: usize = 4;

impl KindLayout {
    const fn new(info_sz: usize, elem_sz: usize) -> KindLayout {
        // Every size below fits a u8 (the largest is 12).
        KindLayout {
            info_sz: info_sz as u8,
            elem_sz: elem_sz as u8,
            flags: 0,
        }
    }

    /// Bytes after `btf_type` for a record with `vlen` elements.
    #[inline]
    pub const fn trailing_len(self, vlen: usize) -> usize {
        self.info_sz as usize + vlen * self.elem_sz as usize
    }

    /// Appends the 4-byte encoding: `info_sz`, `elem_sz`, then `flags` in
    /// `endian` (the only field wider than a byte).
    pub fn write_to(self, out: &mut Vec<u8>, endian: Endian) {
        out.push(self.info_sz);
        out.push(self.elem_sz);
        out.extend_from_slice(&endian.u16_bytes(self.flags));
    }

    /// Decodes one entry.
    pub fn from_bytes(bytes: [u8; KIND_LAYOUT_LEN], endian: Endian) -> KindLayout {
        KindLayout {
            info_sz: bytes[0],
            elem_sz: bytes[1],
            flags: endian.u16([bytes[2], bytes[3]]),
        }
    }
}

/// The layout of every kind this format defines, indexed by kind number
/// (0, `BTF_KIND_UNKN`, through [`Kind::MAX`]): the single source of each
/// kind's record size, for the reader, the writer and the kind layout
/// section. Flags are all 0, as libbpf 1.8 writes them.
pub const KIND_LAYOUTS: [KindLayout; Kind::MAX.0 as usize + 1] = [
    KindLayout::new(0, 0),                // UNKN
    KindLayout::new(INT_DATA_LEN, 0),     // INT
    KindLayout::new(0, 0),                // PTR
    KindLayout::new(ARRAY_LEN, 0),        // ARRAY
    KindLayout::new(0, MEMBER_LEN),       // STRUCT
    KindLayout::new(0, MEMBER_LEN),       // UNION
    KindLayout::new(0, ENUM_VALUE_LEN),   // ENUM
    KindLayout::new(0, 0),                // FWD
    KindLayout::new(0, 0),                // TYPEDEF
    KindLayout::new(0, 0),                // VOLATILE
    KindLayout::new(0, 0),                // CONST
    KindLayout::new(0, 0),                // RESTRICT
    KindLayout::new(0, 0),                // FUNC
    KindLayout::new(0, PARAM_LEN),        // FUNC_PROTO
    KindLayout::new(VAR_LEN, 0),          // VAR
    KindLayout::new(0, VAR_SECINFO_LEN),  // DATASEC
    KindLayout::new(0, 0),                // FLOAT
    KindLayout::new(DECL_TAG_LEN, 0),     // DECL_TAG
    KindLayout::new(0, 0),                // TYPE_TAG
    KindLayout::new(0, ENUM64_VALUE_LEN), // ENUM64
];

/// Length of the kind layout section a writer emits: one entry per kind
/// of [`KIND_LAYOUTS`] (80 bytes).
pub const LAYOUT_SECTION_LEN: u32 = (KIND_LAYOUTS.len() * KIND_LAYOUT_LEN) as u32;

/// Appends the kind layout section: [`KIND_LAYOUTS`] in kind order.
pub fn write_layout_section(out: &mut Vec<u8>, endian: Endian) {
    for layout in KIND_LAYOUTS {
        layout.write_to(out, endian);
    }
}

/// Byte offsets of the `struct btf_header` fields (btf.rst 2.1), for a
/// reader that checks them one by one and names the offending byte.
pub mod header_field {
    /// `magic`, u16.
    pub const MAGIC: usize = 0;
    /// `version`, u8.
    pub const VERSION: usize = 2;
    /// `flags`, u8.
    pub const FLAGS: usize = 3;
    /// `hdr_len`, u32.
    pub const HDR_LEN: usize = 4;
    /// `type_off`, u32.
    pub const TYPE_OFF: usize = 8;
    /// `type_len`, u32.
    pub const TYPE_LEN: usize = 12;
    /// `str_off`, u32.
    pub const STR_OFF: usize = 16;
    /// `str_len`, u32.
    pub const STR_LEN: usize = 20;
    /// `layout_off`, u32, only when `hdr_len` >= [`super::HEADER_LEN_WITH_LAYOUT`].
    pub const LAYOUT_OFF: usize = 24;
    /// `layout_len`, u32, likewise.
    pub const LAYOUT_LEN: usize = 28;
}

/// Size of `struct btf_type`, the common part of every record.
pub const TYPE_RECORD_LEN: usize = 12;
/// INT's trailing u32.
pub const INT_DATA_LEN: usize = 4;
/// `struct btf_array { type, index_type, nelems }`.
pub const ARRAY_LEN: usize = 12;
/// `struct btf_member { name_off, type, offset }`.
pub const MEMBER_LEN: usize = 12;
/// `struct btf_enum { name_off, val }`.
pub const ENUM_VALUE_LEN: usize = 8;
/// `struct btf_enum64 { name_off, val_lo32, val_hi32 }`.
pub const ENUM64_VALUE_LEN: usize = 12;
/// `struct btf_param { name_off, type }`.
pub const PARAM_LEN: usize = 8;
/// `struct btf_var { linkage }`.
pub const VAR_LEN: usize = 4;
/// `struct btf_var_secinfo { type, offset, size }`.
pub const VAR_SECINFO_LEN: usize = 12;
/// `struct btf_decl_tag { component_idx }`.
pub const DECL_TAG_LEN: usize = 4;

/// Largest `vlen`: it has 16 bits of `info`.
pub const MAX_VLEN: u32 = 0xffff;
/// Largest type id the kernel accepts (`BTF_MAX_TYPE` in the uapi
/// `linux/btf.h`): the limit for BTF that is written to be loaded, and so
/// what the writer enforces. Split BTF counts its base's ids too.
pub const MAX_TYPE_ID: u32 = 0x000f_ffff;
/// Largest number of types libbpf keeps in one `struct btf`
/// (`BTF_MAX_NR_TYPES` in libbpf's `btf.c`): the limit of an in-memory
/// table, which is what `btf__dedup` works on. Far above [`MAX_TYPE_ID`]:
/// a table that passes this one may still be refused by the writer.
pub const MAX_NR_TYPES: u32 = 0x7fff_ffff;
/// Largest string offset the kernel accepts (`BTF_MAX_NAME_OFFSET`). The
/// format itself allows a u32, but BTF beyond this does not load.
pub const MAX_NAME_OFFSET: u32 = 0x00ff_ffff;
/// Largest bit offset of a member of a kind_flag aggregate: 24 bits, the
/// top 8 bits holding the bitfield size.
pub const MAX_BITFIELD_OFFSET: u32 = 0x00ff_ffff;
/// INT bits (offset + width) cannot exceed 128 (`BITS_PER_U128`).
pub const MAX_INT_BITS: u32 = 128;

/// Mask of the `info` bits that have a meaning: vlen (0-15), kind (24-28),
/// kind_flag (31). Bits 16-23 and 29-30 are unused and must be zero.
pub const INFO_MASK: u32 = 0x9f00_ffff;
/// Mask of the INT data bits that have a meaning: bits (0-7), offset
/// (16-23), encoding (24-27).
pub const INT_DATA_MASK: u32 = 0x0fff_00ff;

/// `BTF_INT_SIGNED`, `BTF_INT_CHAR`, `BTF_INT_BOOL`; at most one is set.
pub const INT_ENCODINGS: [u8; 4] = [0, 1, 2, 4];

/// Byte order of a BTF blob. BTF is written in the target's byte order;
/// readers detect it from the magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Endian {
    /// Little-endian (x86, arm64, ...).
    #[default]
    Little,
    /// Big-endian (s390x, ...).
    Big,
}

impl Endian {
    /// The byte order of the machine running this code.
    pub const fn native() -> Endian {
        if cfg!(target_endian = "big") {
            Endian::Big
        } else {
            Endian::Little
        }
    }

    /// Decodes a u16.
    #[inline]
    pub fn u16(self, bytes: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(bytes),
            Endian::Big => u16::from_be_bytes(bytes),
        }
    }

    /// Decodes a u32.
    #[inline]
    pub fn u32(self, bytes: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(bytes),
            Endian::Big => u32::from_be_bytes(bytes),
        }
    }

    /// Encodes a u16.
    #[inline]
    pub fn u16_bytes(self, value: u16) -> [u8; 2] {
        match self {
            Endian::Little => value.to_le_bytes(),
            Endian::Big => value.to_be_bytes(),
        }
    }

    /// Encodes a u32.
    #[inline]
    pub fn u32_bytes(self, value: u32) -> [u8; 4] {
        match self {
            Endian::Little => value.to_le_bytes(),
            Endian::Big => value.to_be_bytes(),
        }
    }

    /// The byte order whose encoding of [`MAGIC`] is `bytes`.
    pub fn from_magic(bytes: [u8; 2]) -> Option<Endian> {
        if u16::from_le_bytes(bytes) == MAGIC {
            Some(Endian::Little)
        } else if u16::from_be_bytes(bytes) == MAGIC {
            Some(Endian::Big)
        } else {
            None
        }
    }
}

/// `struct btf_header`. Offsets are relative to the end of the header
/// (`hdr_len`), not to the start of the blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Header {
    /// Always [`MAGIC`].
    pub magic: u16,
    /// Always [`VERSION`].
    pub version: u8,
    /// No flags are defined; must be 0.
    pub flags: u8,
    /// Length of the header, at least [`HEADER_LEN`].
    pub hdr_len: u32,
    /// Offset of the type section.
    pub type_off: u32,
    /// Length of the type section.
    pub type_len: u32,
    /// Offset of the string section.
    pub str_off: u32,
    /// Length of the string section.
    pub str_len: u32,
    /// Offset of the kind layout section (0 when absent or when the header
    /// is only 24 bytes).
    pub layout_off: u32,
    /// Length of the kind layout section (0 when absent).
    pub layout_len: u32,
}

impl Header {
    /// The header of a blob with `type_len` bytes of types followed directly
    /// by `str_len` bytes of strings, as pahole and libbpf lay it out.
    pub fn new(type_len: u32, str_len: u32) -> Header {
        Header {
            magic: MAGIC,
            version: VERSION,
            flags: 0,
            hdr_len: HEADER_LEN,
            type_off: 0,
            type_len,
            str_off: type_len,
            str_len,
            layout_off: 0,
            layout_len: 0,
        }
    }

    /// The header of a blob written in `format`: `type_len` bytes of types,
    /// then (for [`HeaderFormat::WithLayout`]) the kind layout section at
    /// the next 4-byte boundary, then `str_len` bytes of strings, as libbpf
    /// lays them out.
    pub fn for_sections(format: HeaderFormat, type_len: u32, str_len: u32) -> Header {
        let mut header = Header {
            hdr_len: format.hdr_len(),
            ..Header::new(type_len, str_len)
        };
        if format == HeaderFormat::WithLayout {
            // Type records are whole words, so this is type_len; a writer
            // refuses sections near 4 GiB long before the saturation.
            header.layout_off = type_len.saturating_add(3) & !3;
            header.layout_len = LAYOUT_SECTION_LEN;
            header.str_off = header.layout_off.saturating_add(LAYOUT_SECTION_LEN);
        }
        header
    }

    /// Offset of the string section from the start of the blob.
    pub fn strings_at(&self) -> u64 {
        u64::from(self.hdr_len) + u64::from(self.str_off)
    }

    /// Offset of the kind layout section from the start of the blob.
    pub fn layout_at(&self) -> u64 {
        u64::from(self.hdr_len) + u64::from(self.layout_off)
    }

    /// Appends the encoding: `hdr_len` bytes, the layout fields only when
    /// `hdr_len` has room for them, zeros past the fields defined.
    pub fn write_to(&self, out: &mut Vec<u8>, endian: Endian) {
        let start = out.len();
        out.extend_from_slice(&endian.u16_bytes(self.magic));
        out.push(self.version);
        out.push(self.flags);
        for field in [
            self.hdr_len,
            self.type_off,
            self.type_len,
            self.str_off,
            self.str_len,
        ] {
            out.extend_from_slice(&endian.u32_bytes(field));
        }
        if self.hdr_len >= HEADER_LEN_WITH_LAYOUT {
            out.extend_from_slice(&endian.u32_bytes(self.layout_off));
            out.extend_from_slice(&endian.u32_bytes(self.layout_len));
        }
        out.resize(start + (self.hdr_len.max(HEADER_LEN) as usize), 0);
    }
}

/// A BTF kind, the 5-bit field at bits 24-28 of `info` (btf.rst 2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kind(pub u8);

impl Kind {
    /// Not a kind: id 0 is `void`, never written.
    pub const UNKNOWN: Kind = Kind(0);
    /// `BTF_KIND_INT`.
    pub const INT: Kind = Kind(1);
    /// `BTF_KIND_PTR`.
    pub const PTR: Kind = Kind(2);
    /// `BTF_KIND_ARRAY`.
    pub const ARRAY: Kind = Kind(3);
    /// `BTF_KIND_STRUCT`.
    pub const STRUCT: Kind = Kind(4);
    /// `BTF_KIND_UNION`.
    pub const UNION: Kind = Kind(5);
    /// `BTF_KIND_ENUM`.
    pub const ENUM: Kind = Kind(6);
    /// `BTF_KIND_FWD`.
    pub const FWD: Kind = Kind(7);
    /// `BTF_KIND_TYPEDEF`.
    pub const TYPEDEF: Kind = Kind(8);
    /// `BTF_KIND_VOLATILE`.
    pub const VOLATILE: Kind = Kind(9);
    /// `BTF_KIND_CONST`.
    pub const CONST: Kind = Kind(10);
    /// `BTF_KIND_RESTRICT`.
    pub const RESTRICT: Kind = Kind(11);
    /// `BTF_KIND_FUNC`.
    pub const FUNC: Kind = Kind(12);
    /// `BTF_KIND_FUNC_PROTO`.
    pub const FUNC_PROTO: Kind = Kind(13);
    /// `BTF_KIND_VAR`.
    pub const VAR: Kind = Kind(14);
    /// `BTF_KIND_DATASEC`.
    pub const DATASEC: Kind = Kind(15);
    /// `BTF_KIND_FLOAT`.
    pub const FLOAT: Kind = Kind(16);
    /// `BTF_KIND_DECL_TAG`.
    pub const DECL_TAG: Kind = Kind(17);
    /// `BTF_KIND_TYPE_TAG`.
    pub const TYPE_TAG: Kind = Kind(18);
    /// `BTF_KIND_ENUM64`.
    pub const ENUM64: Kind = Kind(19);
    /// The largest kind defined.
    pub const MAX: Kind = Kind::ENUM64;

    /// Whether this is one of the kinds 1..=19.
    pub fn is_known(self) -> bool {
        (Kind::INT.0..=Kind::MAX.0).contains(&self.0)
    }

    /// The name bpftool prints for this kind ("INT", "PTR", ...), or
    /// "UNKNOWN".
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 20] = [
            "UNKNOWN",
            "INT",
            "PTR",
            "ARRAY",
            "STRUCT",
            "UNION",
            "ENUM",
            "FWD",
            "TYPEDEF",
            "VOLATILE",
            "CONST",
            "RESTRICT",
            "FUNC",
            "FUNC_PROTO",
            "VAR",
            "DATASEC",
            "FLOAT",
            "DECL_TAG",
            "TYPE_TAG",
            "ENUM64",
        ];
        NAMES.get(usize::from(self.0)).copied().unwrap_or("UNKNOWN")
    }

    /// Bytes that follow the 12-byte `btf_type` for a record of this kind
    /// with `vlen` entries; `None` for an unknown kind.
    #[inline]
    pub fn trailing_len(self, vlen: u32) -> Option<usize> {
        if !self.is_known() {
            return None;
        }
        self.layout()
            .map(|layout| layout.trailing_len(vlen as usize))
    }

    /// This kind's entry of [`KIND_LAYOUTS`]; `None` past [`Kind::MAX`].
    #[inline]
    pub fn layout(self) -> Option<KindLayout> {
        KIND_LAYOUTS.get(usize::from(self.0)).copied()
    }
}

/// The kind numbers as plain bytes, for `match` patterns on a raw `info`
/// word's kind or a dense per-type kind array (a [`Kind`] constant cannot
/// be a pattern in a match on `u8`); the values are [`Kind`]'s.
pub mod kind_byte {
    use super::Kind;

    /// Not a kind: id 0 is `void`.
    pub const VOID: u8 = Kind::UNKNOWN.0;
    /// [`Kind::INT`].
    pub const INT: u8 = Kind::INT.0;
    /// [`Kind::PTR`].
    pub const PTR: u8 = Kind::PTR.0;
    /// [`Kind::ARRAY`].
    pub const ARRAY: u8 = Kind::ARRAY.0;
    /// [`Kind::STRUCT`].
    pub const STRUCT: u8 = Kind::STRUCT.0;
    /// [`Kind::UNION`].
    pub const UNION: u8 = Kind::UNION.0;
    /// [`Kind::ENUM`].
    pub const ENUM: u8 = Kind::ENUM.0;
    /// [`Kind::FWD`].
    pub const FWD: u8 = Kind::FWD.0;
    /// [`Kind::TYPEDEF`].
    pub const TYPEDEF: u8 = Kind::TYPEDEF.0;
    /// [`Kind::VOLATILE`].
    pub const VOLATILE: u8 = Kind::VOLATILE.0;
    /// [`Kind::CONST`].
    pub const CONST: u8 = Kind::CONST.0;
    /// [`Kind::RESTRICT`].
    pub const RESTRICT: u8 = Kind::RESTRICT.0;
    /// [`Kind::FUNC`].
    pub const FUNC: u8 = Kind::FUNC.0;
    /// [`Kind::FUNC_PROTO`].
    pub const FUNC_PROTO: u8 = Kind::FUNC_PROTO.0;
    /// [`Kind::VAR`].
    pub const VAR: u8 = Kind::VAR.0;
    /// [`Kind::DATASEC`].
    pub const DATASEC: u8 = Kind::DATASEC.0;
    /// [`Kind::FLOAT`].
    pub const FLOAT: u8 = Kind::FLOAT.0;
    /// [`Kind::DECL_TAG`].
    pub const DECL_TAG: u8 = Kind::DECL_TAG.0;
    /// [`Kind::TYPE_TAG`].
    pub const TYPE_TAG: u8 = Kind::TYPE_TAG.0;
    /// [`Kind::ENUM64`].
    pub const ENUM64: u8 = Kind::ENUM64.0;
    /// `BTF_KIND_MAX`.
    /// [`Kind::MAX`].
    pub const MAX: u8 = Kind::MAX.0;
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Encodes `info`: vlen in bits 0-15, kind in bits 24-28, kind_flag in
/// bit 31.
#[inline]
pub fn info(kind: Kind, vlen: u16, kind_flag: bool) -> u32 {
    (u32::from(kind_flag) << 31) | (u32::from(kind.0 & 0x1f) << 24) | u32::from(vlen)
}

/// The kind field of `info`.
#[inline]
pub fn info_kind(info: u32) -> Kind {
    Kind(((info >> 24) & 0x1f) as u8)
}

/// The vlen field of `info`.
#[inline]
pub fn info_vlen(info: u32) -> u16 {
    (info & 0xffff) as u16
}

/// The kind_flag bit of `info`.
#[inline]
pub fn info_kind_flag(info: u32) -> bool {
    info >> 31 != 0
}

/// Encodes INT's trailing u32: encoding in bits 24-27, offset in 16-23,
/// bits in 0-7.
#[inline]
pub fn int_data(encoding: u8, offset: u8, bits: u8) -> u32 {
    (u32::from(encoding & 0x0f) << 24) | (u32::from(offset) << 16) | u32::from(bits)
}

/// `BTF_INT_ENCODING`.
#[inline]
pub fn int_encoding(data: u32) -> u8 {
    ((data >> 24) & 0x0f) as u8
}

/// `BTF_INT_OFFSET`.
#[inline]
pub fn int_offset(data: u32) -> u8 {
    ((data >> 16) & 0xff) as u8
}

/// `BTF_INT_BITS`.
#[inline]
pub fn int_bits(data: u32) -> u8 {
    (data & 0xff) as u8
}

/// Checks an INT against the kernel's rules (btf.rst 2.2.1): one encoding
/// at most, offset + bits at most 128 and within `size` bytes. Returns what
/// is wrong.
pub fn check_int(size: u32, encoding: u8, offset: u8, bits: u8) -> Result<(), &'static str> {
    if !INT_ENCODINGS.contains(&encoding) {
        return Err("encoding is not one of none, SIGNED, CHAR, BOOL");
    }
    let used_bits = u32::from(offset) + u32::from(bits);
    if used_bits > MAX_INT_BITS {
        return Err("offset + bits exceed 128");
    }
    if used_bits.div_ceil(8) > size {
        return Err("offset + bits exceed the size");
    }
    Ok(())
}

/// Encodes a member's `offset` field. Without kind_flag it is the bit
/// offset; with kind_flag the bitfield size takes bits 24-31 and the bit
/// offset bits 0-23 (btf.rst 2.2.4). `None` when it does not fit.
#[inline]
pub fn member_offset(kind_flag: bool, bitfield_size: u8, bit_offset: u32) -> Option<u32> {
    if kind_flag {
        if bit_offset > MAX_BITFIELD_OFFSET {
            return None;
        }
        Some((u32::from(bitfield_size) << 24) | bit_offset)
    } else if bitfield_size != 0 {
        None
    } else {
        Some(bit_offset)
    }
}

/// Decodes a member's `offset` field into (bitfield size, bit offset).
#[inline]
pub fn member_bitfield(kind_flag: bool, offset: u32) -> (u8, u32) {
    if kind_flag {
        ((offset >> 24) as u8, offset & MAX_BITFIELD_OFFSET)
    } else {
        (0, offset)
    }
}

/// `enum btf_func_linkage` (FUNC, kept in `info`'s vlen) and the `BTF_VAR_*`
/// linkage of VAR (its trailing u32): the same three numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// `BTF_FUNC_STATIC` / `BTF_VAR_STATIC` (0).
    Static,
    /// `BTF_FUNC_GLOBAL` / `BTF_VAR_GLOBAL_ALLOCATED` (1).
    Global,
    /// `BTF_FUNC_EXTERN` / `BTF_VAR_GLOBAL_EXTERN` (2).
    Extern,
}

/// The on-disk value of a linkage (the same numbers for FUNC's
/// `btf_func_linkage` and VAR's `BTF_VAR_*`).
#[inline]
pub fn linkage_value(linkage: Linkage) -> u32 {
    match linkage {
        Linkage::Static => 0,
        Linkage::Global => 1,
        Linkage::Extern => 2,
    }
}

/// Decodes a linkage value.
#[inline]
pub fn linkage_from_value(value: u32) -> Option<Linkage> {
    match value {
        0 => Some(Linkage::Static),
        1 => Some(Linkage::Global),
        2 => Some(Linkage::Extern),
        _ => None,
    }
}

/// Whether an ENUM (32-bit) can hold `value`: libbpf's `btf__add_enum_value`
/// accepts `i32::MIN..=u32::MAX`, the value taken as an i64.
#[inline]
pub fn enum_value_fits(value: u64) -> bool {
    let v = value as i64;
    (i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(&v)
}

/// An ENUM64 value as `struct btf_enum64` stores it: `(val_lo32, val_hi32)`.
#[inline]
pub fn enum64_halves(value: u64) -> (u32, u32) {
    (value as u32, (value >> 32) as u32)
}

/// The value of a `struct btf_enum64`, the inverse of [`enum64_halves`].
#[inline]
pub fn enum64_value(lo32: u32, hi32: u32) -> u64 {
    u64::from(lo32) | (u64::from(hi32) << 32)
}

/// Widens a 32-bit ENUM value to the model's u64: sign-extended for a
/// signed enum, zero-extended otherwise. The inverse of keeping the low 32
/// bits, for every value [`enum_value_fits`] accepts with a matching
/// signedness.
#[inline]
pub fn enum_value_widen(value: u32, signed: bool) -> u64 {
    if signed {
        i64::from(value as i32) as u64
    } else {
        u64::from(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_fields_follow_btf_rst() {
        // btf.rst: bits 0-15 vlen, 24-28 kind, 31 kind_flag.
        let i = info(Kind::STRUCT, 3, true);
        assert_eq!(i, 0x8400_0003);
        assert_eq!(info_kind(i), Kind::STRUCT);
        assert_eq!(info_vlen(i), 3);
        assert!(info_kind_flag(i));
        assert_eq!(i & !INFO_MASK, 0);
        assert_eq!(info(Kind::ENUM64, 0xffff, false), 0x1300_ffff);
    }

    #[test]
    fn int_data_fields_follow_btf_rst() {
        // btf.rst: encoding 0x0f000000, offset 0x00ff0000, bits 0x000000ff.
        let d = int_data(1, 2, 30);
        assert_eq!(d, 0x0102_001e);
        assert_eq!((int_encoding(d), int_offset(d), int_bits(d)), (1, 2, 30));
        assert_eq!(d & !INT_DATA_MASK, 0);
    }

    #[test]
    fn int_rules() {
        assert!(check_int(4, 1, 0, 32).is_ok());
        assert!(check_int(16, 0, 0, 128).is_ok());
        assert!(check_int(1, 4, 0, 1).is_ok());
        assert!(check_int(4, 3, 0, 32).is_err());
        assert!(check_int(4, 0, 1, 32).is_err());
        assert!(check_int(32, 0, 1, 128).is_err());
    }

    #[test]
    fn member_offset_with_and_without_kind_flag() {
        assert_eq!(member_offset(true, 3, 17), Some(0x0300_0011));
        assert_eq!(member_bitfield(true, 0x0300_0011), (3, 17));
        assert_eq!(member_offset(true, 0, 1 << 24), None);
        assert_eq!(member_offset(false, 0, 1 << 24), Some(1 << 24));
        assert_eq!(member_offset(false, 1, 0), None);
        assert_eq!(member_bitfield(false, 0xff00_0000), (0, 0xff00_0000));
    }

    #[test]
    fn kinds_and_names() {
        assert_eq!(Kind::INT.name(), "INT");
        assert_eq!(Kind::FUNC_PROTO.name(), "FUNC_PROTO");
        assert_eq!(Kind::ENUM64.name(), "ENUM64");
        assert_eq!(Kind(20).name(), "UNKNOWN");
        assert!(!Kind(0).is_known() && !Kind(20).is_known() && Kind(19).is_known());
        assert_eq!(Kind::STRUCT.trailing_len(2), Some(24));
        assert_eq!(Kind::ENUM64.trailing_len(2), Some(24));
        assert_eq!(Kind::FUNC.trailing_len(2), Some(0));
        assert_eq!(Kind(25).trailing_len(0), None);
    }

    #[test]
    fn enum_value_range_is_libbpf_s() {
        assert!(enum_value_fits(u64::from(u32::MAX)));
        assert!(enum_value_fits(i64::from(i32::MIN) as u64));
        assert!(!enum_value_fits(1 << 32));
        assert!(!enum_value_fits((i64::from(i32::MIN) - 1) as u64));
        assert_eq!(enum_value_widen(0xffff_ffff, true), u64::MAX);
        assert_eq!(enum_value_widen(0xffff_ffff, false), 0xffff_ffff);
    }

    #[test]
    fn enum64_is_low_half_first() {
        assert_eq!(
            enum64_halves(0x1122_3344_5566_7788),
            (0x5566_7788, 0x1122_3344)
        );
        assert_eq!(
            enum64_value(0x5566_7788, 0x1122_3344),
            0x1122_3344_5566_7788
        );
    }

    #[test]
    fn header_fields_are_where_write_to_puts_them() {
        let header = Header {
            hdr_len: HEADER_LEN_WITH_LAYOUT,
            type_off: 0x0101_0101,
            type_len: 0x0202_0202,
            str_off: 0x0303_0303,
            str_len: 0x0404_0404,
            layout_off: 0x0505_0505,
            layout_len: 0x0606_0606,
            ..Header::new(0, 0)
        };
        let mut bytes = Vec::new();
        header.write_to(&mut bytes, Endian::Little);
        let u32_at = |at: usize| {
            bytes
                .get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        assert_eq!(
            bytes.get(header_field::MAGIC..header_field::MAGIC + 2),
            Some(&[0x9f, 0xeb][..])
        );
        assert_eq!(bytes.get(header_field::VERSION), Some(&VERSION));
        assert_eq!(bytes.get(header_field::FLAGS), Some(&0));
        assert_eq!(u32_at(header_field::HDR_LEN), Some(HEADER_LEN_WITH_LAYOUT));
        assert_eq!(u32_at(header_field::TYPE_OFF), Some(0x0101_0101));
        assert_eq!(u32_at(header_field::TYPE_LEN), Some(0x0202_0202));
        assert_eq!(u32_at(header_field::STR_OFF), Some(0x0303_0303));
        assert_eq!(u32_at(header_field::STR_LEN), Some(0x0404_0404));
        assert_eq!(u32_at(header_field::LAYOUT_OFF), Some(0x0505_0505));
        assert_eq!(u32_at(header_field::LAYOUT_LEN), Some(0x0606_0606));
        assert_eq!(bytes.len(), HEADER_LEN_WITH_LAYOUT as usize);
    }

    /// The kind layout section pahole (dwarves 1436daf, libbpf 1.8.0) wrote
    /// into `debian-7.3.4-cloud-amd64/vmlinux.btf` of the shared reference
    /// with `--btf_features=layout` (its bytes 3049428..3049508), one
    /// `{info_sz, elem_sz, flags}` per kind 0..=19.
    const PAHOLE_LAYOUT_SECTION: &str = "00000000 04000000 00000000 0c000000 000c0000 \
        000c0000 00080000 00000000 00000000 00000000 00000000 00000000 00000000 \
        00080000 04000000 000c0000 00000000 04000000 00000000 000c0000";

    fn hex(text: &str) -> Vec<u8> {
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect()
    }

    #[test]
    fn layout_section_is_pahole_s_in_both_byte_orders() {
        let expected = hex(PAHOLE_LAYOUT_SECTION);
        assert_eq!(expected.len(), 80);
        assert_eq!(LAYOUT_SECTION_LEN, 80);
        for endian in [Endian::Little, Endian::Big] {
            let mut section = Vec::new();
            write_layout_section(&mut section, endian);
            // Only `flags` is wider than a byte, and it is 0: the same
            // bytes in both orders.
            assert_eq!(section, expected, "{endian:?}");
        }
    }

    #[test]
    fn kind_layouts_give_each_kind_s_record_length() {
        // btf.rst 2.2: what follows `struct btf_type` for each kind.
        let with = |kind: Kind, vlen| kind.trailing_len(vlen);
        assert_eq!(with(Kind::INT, 0), Some(4));
        assert_eq!(with(Kind::ARRAY, 0), Some(12));
        assert_eq!(with(Kind::UNION, 3), Some(36));
        assert_eq!(with(Kind::ENUM, 3), Some(24));
        assert_eq!(with(Kind::FUNC_PROTO, 2), Some(16));
        assert_eq!(with(Kind::VAR, 0), Some(4));
        assert_eq!(with(Kind::DATASEC, 2), Some(24));
        assert_eq!(with(Kind::DECL_TAG, 0), Some(4));
        assert_eq!(with(Kind::TYPE_TAG, 0), Some(0));
        assert_eq!(with(Kind::UNKNOWN, 0), None);
        assert_eq!(Kind::UNKNOWN.layout(), Some(KindLayout::new(0, 0)));
        assert_eq!(Kind(20).layout(), None);
    }

    #[test]
    fn header_formats_lay_sections_out_as_libbpf() {
        let short = Header::for_sections(HeaderFormat::Short, 24, 5);
        assert_eq!(short, Header::new(24, 5));
        assert_eq!(short.strings_at(), 24 + 24);
        let long = Header::for_sections(HeaderFormat::Long, 24, 5);
        assert_eq!(
            (long.hdr_len, long.str_off, long.layout_off, long.layout_len),
            (32, 24, 0, 0)
        );
        let with = Header::for_sections(HeaderFormat::WithLayout, 24, 5);
        assert_eq!(
            (
                with.hdr_len,
                with.type_off,
                with.layout_off,
                with.layout_len,
                with.str_off,
                with.str_len
            ),
            (32, 0, 24, 80, 104, 5)
        );
        assert_eq!((with.layout_at(), with.strings_at()), (56, 136));
        // The reference vmlinux.btf's header fields, from its type and
        // string lengths.
        let reference = Header::for_sections(HeaderFormat::WithLayout, 3_049_396, 2_201_907);
        let mut bytes = Vec::new();
        reference.write_to(&mut bytes, Endian::Little);
        assert_eq!(
            bytes,
            hex("9feb0100 20000000 00000000 b4872e00 04882e00 33992100 b4872e00 50000000")
        );
    }

    #[test]
    fn magic_detects_byte_order() {
        assert_eq!(Endian::from_magic([0x9f, 0xeb]), Some(Endian::Little));
        assert_eq!(Endian::from_magic([0xeb, 0x9f]), Some(Endian::Big));
        assert_eq!(Endian::from_magic([0, 0]), None);
    }
}
