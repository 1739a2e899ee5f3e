//! The kernel's BTF verifier, rule for rule: what `bpf(BPF_BTF_LOAD)` of
//! Linux 6.18 (`kernel/bpf/btf.c`, `btf_parse`) accepts, and for split BTF
//! what `btf_parse_module` accepts on top of its base.
//!
//! The checks work on the raw bytes, independent of how the BTF was made
//! (btfenc's writer, another encoder, a mutated file), and run in the
//! kernel's order: the header and section layout (`btf_parse_hdr`,
//! `btf_check_sec_info`), the string section (`btf_parse_str_sec`), each
//! type's own fields (`btf_check_meta` and the kinds' `*_check_meta`), the
//! resolution of every reference with the kernel's depth limit and loop
//! detection (`btf_check_all_types`, `btf_resolve`, the kinds' `*_resolve`
//! and `*_check_member`, `btf_func_proto_check`), and the type tag chains
//! (`btf_check_type_tags`). Each check names, in a comment, the kernel
//! function it mirrors, and its message is the kernel's log wording.
//!
//! What is not mirrored: `btf_parse_struct_metas` (the special fields
//! `bpf_spin_lock`, `bpf_list_head`, kptrs, ... of structs that embed
//! them: BPF program BTF, never kernel or module BTF), and allocation
//! failures.
//!
//! Every violation of the per-type field checks is reported; resolution,
//! like the kernel's, stops at its first violation (what it would say next
//! depends on state the failure left half-built).

mod ctype;
mod meta;
mod resolve;
#[cfg(test)]
mod tests;

use std::fmt;

use crate::raw::Endian;

/// `BTF_MAX_TYPE` (include/uapi/linux/btf.h).
pub const BTF_MAX_TYPE: u32 = crate::raw::MAX_TYPE_ID;
/// `BTF_MAX_NAME_OFFSET` (include/uapi/linux/btf.h).
pub const BTF_MAX_NAME_OFFSET: u32 = 0x00ff_ffff;
/// `BTF_MAX_SIZE` (kernel/bpf/btf.c): the largest blob `BPF_BTF_LOAD` takes.
pub const BTF_MAX_SIZE: usize = 16 * 1024 * 1024;
/// `KSYM_NAME_LEN` (include/linux/kallsyms.h, 512 since 6.1): the longest
/// name `__btf_name_valid` accepts.
pub const KSYM_NAME_LEN: usize = 512;
/// `MAX_RESOLVE_DEPTH` (kernel/bpf/btf.c).
pub const MAX_RESOLVE_DEPTH: usize = 32;
/// `sizeof(struct btf_header)` in 6.18: bytes past it must be zero.
const KNOWN_HEADER_LEN: usize = 24;
/// Linux 7.1's header: the 24 bytes above, then `layout_off` and `layout_len`.
const LAYOUT_HEADER_LEN: usize = 32;
/// `sizeof(void *)` on the 64-bit kernels BTF is loaded into.
const PTR_SIZE: u32 = 8;

/// One rule the BTF breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The type the kernel's log names (`[id]`), 0 for the header and the
    /// string section.
    pub type_id: u32,
    /// Its kind (`btf_kind_str`), empty for the header and string section.
    pub kind: &'static str,
    /// Its name as the kernel prints it (`(anon)` for none).
    pub name: String,
    /// The kernel function whose check failed.
    pub rule: &'static str,
    /// The kernel's log message for it.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind.is_empty() {
            write!(f, "{} ({})", self.message, self.rule)
        } else {
            write!(
                f,
                "[{}] {} {}: {} ({})",
                self.type_id, self.kind, self.name, self.message, self.rule
            )
        }
    }
}

/// How to read the blob's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    /// As the running kernel does: in this machine's order, so that a blob
    /// in the other order is refused as the kernel refuses it.
    Native,
    /// In the order the magic announces, as a kernel of that byte order
    /// would (for BTF btfenc writes for a big-endian target).
    FromMagic,
}

/// What to check against.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Byte order.
    pub byte_order: ByteOrder,
    /// Apply `BPF_BTF_LOAD`'s size limit ([`BTF_MAX_SIZE`]) to a standalone
    /// BTF (the kernel's own vmlinux and module BTF have none).
    pub size_limit: bool,
    /// Take Linux 7.1's 32-byte header with a kind layout section
    /// (`layout_off`, `layout_len`; what `--btf_features=layout` writes for
    /// a 7.2+ kernel) as a third section, where older kernels refuse any
    /// non-zero header byte past the 24th ("Unsupported btf_header").
    pub layout_section: bool,
}

impl Options {
    /// The checks on BTF an encoder writes or reads back: in the byte
    /// order the blob announces (BTF is written in the target's), without
    /// `BPF_BTF_LOAD`'s size limit (the kernel's own BTF has none), and
    /// with a kind layout section taken as Linux 7.1 takes it (BTF written
    /// for such a kernel is checked by its rules, not refused for a header
    /// older kernels do not know).
    pub const AS_WRITTEN: Options = Options {
        byte_order: ByteOrder::FromMagic,
        size_limit: false,
        layout_section: true,
    };
}

/// `FIRST (N violations)`: one line for a BTF the kernel rejects.
pub fn first_of(violations: &[Violation]) -> String {
    let first = violations
        .first()
        .map_or_else(String::new, ToString::to_string);
    let n = violations.len();
    format!("{first} ({n} violation{})", if n == 1 { "" } else { "s" })
}

impl Default for Options {
    fn default() -> Self {
        Options {
            byte_order: ByteOrder::Native,
            size_limit: true,
            layout_section: false,
        }
    }
}

/// A BTF that passed: its types, and what resolution found for them, so a
/// split BTF can be checked on top of it.
#[derive(Clone, Debug)]
pub struct Checked<'a> {
    data: &'a [u8],
    endian: Endian,
    /// Start of the string section in `data`.
    strings_at: usize,
    str_len: u32,
    /// Where the section's valid identifiers start.
    identifiers: ctype::IdentifierStarts,
    /// Byte offset in `data` of each type record, by local id (for a base,
    /// slot 0 is void and holds `u32::MAX`).
    type_at: Vec<u32>,
    start_id: u32,
    start_str_off: u32,
    resolved_ids: Vec<u32>,
    resolved_sizes: Vec<u32>,
    base: Option<&'a Checked<'a>>,
}

impl<'a> Checked<'a> {
    /// Number of type ids this BTF and its bases define, void included
    /// (`btf_nr_types`): the first id of a split on top of it.
    pub fn total_types(&self) -> u32 {
        self.start_id + self.type_at.len() as u32
    }

    /// The base type ids this split's types refer to, ascending, once
    /// each (none for a standalone BTF).
    fn base_references(&self) -> Vec<u32> {
        let mut ids = Vec::new();
        for &at in &self.type_at {
            if at == u32::MAX {
                continue;
            }
            Ty::read(self.data, self.endian, at as usize).for_each_reference(|id| {
                if id != 0 && id < self.start_id {
                    ids.push(id);
                }
            });
        }
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// `btf_type_by_id`.
    fn type_by_id(&self, id: u32) -> Option<Ty<'a>> {
        let mut btf = self;
        while id < btf.start_id {
            btf = btf.base?;
        }
        let local = (id - btf.start_id) as usize;
        let at = *btf.type_at.get(local)?;
        if at == u32::MAX {
            return Some(Ty::VOID);
        }
        Some(Ty::read(btf.data, btf.endian, at as usize))
    }

    fn owner(&self, id: u32) -> Option<&Checked<'a>> {
        let mut btf = self;
        while id < btf.start_id {
            btf = btf.base?;
        }
        Some(btf)
    }

    /// `btf_resolved_type_id`.
    fn resolved_id(&self, id: u32) -> u32 {
        self.owner(id)
            .and_then(|b| b.resolved_ids.get((id - b.start_id) as usize).copied())
            .unwrap_or(0)
    }

    /// `btf_resolved_type_size`.
    fn resolved_size(&self, id: u32) -> u32 {
        self.owner(id)
            .and_then(|b| b.resolved_sizes.get((id - b.start_id) as usize).copied())
            .unwrap_or(0)
    }

    /// `btf_name_offset_valid`.
    fn name_offset_valid(&self, offset: u32) -> bool {
        offset <= BTF_MAX_NAME_OFFSET
            && self
                .owner_of_string(offset)
                .is_some_and(|btf| offset - btf.start_str_off < btf.str_len)
    }

    /// `btf_str_by_offset`: the bytes from `offset` to the end of its
    /// string section (NUL-terminated), `None` when out of range.
    fn str_by_offset(&self, offset: u32) -> Option<&'a [u8]> {
        let btf = self.owner_of_string(offset)?;
        let rel = offset - btf.start_str_off;
        if rel >= btf.str_len {
            return None;
        }
        btf.data
            .get(btf.strings_at + rel as usize..btf.strings_at + btf.str_len as usize)
    }

    /// `__btf_name_by_offset`, as the log prints names.
    fn display_name(&self, offset: u32) -> String {
        if offset == 0 {
            return "(anon)".to_string();
        }
        match self.str_by_offset(offset) {
            Some(bytes) => {
                let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                String::from_utf8_lossy(&bytes[..end]).into_owned()
            }
            None => "(invalid-name-offset)".to_string(),
        }
    }

    /// `btf_name_valid_identifier` (`__btf_name_valid`).
    fn name_valid_identifier(&self, offset: u32) -> bool {
        let known = self.owner_of_string(offset).is_some_and(|btf| {
            btf.identifiers
                .contains((offset - btf.start_str_off) as usize)
        });
        known
            || self
                .str_by_offset(offset)
                .is_some_and(ctype::name_valid_identifier)
    }

    /// The BTF (this one or a base) whose string section holds `offset`.
    fn owner_of_string(&self, offset: u32) -> Option<&Checked<'a>> {
        let mut btf = self;
        while offset < btf.start_str_off {
            btf = btf.base?;
        }
        Some(btf)
    }

    /// `btf_name_valid_section`.
    fn name_valid_section(&self, offset: u32) -> bool {
        self.str_by_offset(offset)
            .is_some_and(ctype::name_valid_section)
    }
}

/// A type record (`struct btf_type` and what follows it).
#[derive(Clone, Copy, Debug)]
struct Ty<'a> {
    data: &'a [u8],
    endian: Endian,
    at: usize,
    void: bool,
    name_off: u32,
    info: u32,
    /// `size` or `type`.
    size: u32,
}

/// The kind numbers as bytes, for `match` patterns on a raw `info` word.
pub(crate) use crate::raw::kind_byte as kind;

/// `btf_kind_str`: the names bpftool prints, from the format's one table.
fn kind_str(kind: u8) -> &'static str {
    crate::raw::Kind(kind).name()
}

impl<'a> Ty<'a> {
    const VOID: Ty<'static> = Ty {
        data: &[],
        endian: Endian::Little,
        at: 0,
        void: true,
        name_off: 0,
        info: 0,
        size: 0,
    };

    /// Reads the 12-byte head at `at`; the caller has checked it is there.
    fn read(data: &'a [u8], endian: Endian, at: usize) -> Ty<'a> {
        let word = |i: usize| read_u32(data, endian, at + 4 * i);
        Ty {
            data,
            endian,
            at,
            void: false,
            name_off: word(0),
            info: word(1),
            size: word(2),
        }
    }

    /// The `i`th u32 after the head.
    fn word(&self, i: usize) -> u32 {
        read_u32(self.data, self.endian, self.at + 12 + 4 * i)
    }

    fn kind(&self) -> u8 {
        ((self.info >> 24) & 0x1f) as u8
    }
    fn vlen(&self) -> u32 {
        self.info & 0xffff
    }
    fn kflag(&self) -> bool {
        self.info >> 31 != 0
    }
    fn is(&self, k: u8) -> bool {
        !self.void && self.kind() == k
    }
    /// `btf_type_is_modifier`.
    fn is_modifier(&self) -> bool {
        matches!(
            self.kind(),
            kind::TYPEDEF | kind::VOLATILE | kind::CONST | kind::RESTRICT | kind::TYPE_TAG
        ) && !self.void
    }
    /// `btf_type_is_struct` (struct or union).
    fn is_struct(&self) -> bool {
        self.is(kind::STRUCT) || self.is(kind::UNION)
    }
    /// `btf_type_nosize`.
    fn nosize(&self) -> bool {
        self.void || self.is(kind::FWD) || self.is(kind::FUNC) || self.is(kind::FUNC_PROTO)
    }
    /// `btf_type_is_resolve_source_only`.
    fn resolve_source_only(&self) -> bool {
        self.is(kind::VAR) || self.is(kind::DECL_TAG) || self.is(kind::DATASEC)
    }
    /// `btf_type_needs_resolve`.
    fn needs_resolve(&self) -> bool {
        self.is_modifier()
            || self.is(kind::PTR)
            || self.is_struct()
            || self.is(kind::ARRAY)
            || self.is(kind::VAR)
            || self.is(kind::FUNC)
            || self.is(kind::DECL_TAG)
            || self.is(kind::DATASEC)
    }
    /// `btf_type_has_size`.
    fn has_size(&self) -> bool {
        !self.void
            && matches!(
                self.kind(),
                kind::INT
                    | kind::STRUCT
                    | kind::UNION
                    | kind::ENUM
                    | kind::DATASEC
                    | kind::FLOAT
                    | kind::ENUM64
            )
    }
    /// `btf_type_is_decl_tag_target`.
    fn is_decl_tag_target(&self) -> bool {
        self.is(kind::FUNC) || self.is_struct() || self.is(kind::VAR) || self.is(kind::TYPEDEF)
    }
    /// Every type id the record holds (its records passed the meta checks,
    /// so its vlen entries are there).
    fn for_each_reference(&self, mut f: impl FnMut(u32)) {
        if self.void {
            return;
        }
        let vlen = self.vlen() as usize;
        match self.kind() {
            kind::PTR
            | kind::TYPEDEF
            | kind::VOLATILE
            | kind::CONST
            | kind::RESTRICT
            | kind::TYPE_TAG
            | kind::FUNC
            | kind::VAR
            | kind::DECL_TAG => f(self.size),
            // struct btf_array: type, index_type, nelems
            kind::ARRAY => {
                f(self.word(0));
                f(self.word(1));
            }
            // struct btf_member: name_off, type, offset
            kind::STRUCT | kind::UNION => (0..vlen).for_each(|i| f(self.word(3 * i + 1))),
            // the return type, then struct btf_param: name_off, type
            kind::FUNC_PROTO => {
                f(self.size);
                (0..vlen).for_each(|i| f(self.word(2 * i + 1)));
            }
            // struct btf_var_secinfo: type, offset, size
            kind::DATASEC => (0..vlen).for_each(|i| f(self.word(3 * i))),
            _ => {}
        }
    }

    /// `btf_type_int_is_regular`.
    fn int_is_regular(&self) -> bool {
        let int_data = self.word(0);
        let nr_bits = int_data & 0xff;
        let nr_bytes = bits_roundup_bytes(nr_bits);
        !(nr_bits & 7 != 0
            || (int_data >> 16) & 0xff != 0
            || !matches!(nr_bytes, 1 | 2 | 4 | 8 | 16))
    }
}

fn read_u32(data: &[u8], endian: Endian, at: usize) -> u32 {
    data.get(at..at + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, |b| endian.u32(b))
}

/// `BITS_ROUNDUP_BYTES`.
fn bits_roundup_bytes(bits: u32) -> u32 {
    (bits >> 3) + u32::from(bits & 7 != 0)
}

/// The 24 bytes of `struct btf_header` the kernel copies (`btf_parse_hdr`:
/// `min(hdr_len, sizeof(hdr))` bytes, the rest zero).
#[derive(Clone, Copy, Debug, Default)]
struct Header {
    magic: u16,
    version: u8,
    flags: u8,
    hdr_len: u32,
    type_off: u32,
    type_len: u32,
    str_off: u32,
    str_len: u32,
    /// Linux 7.1+: the kind layout section (zero without one).
    layout_off: u32,
    layout_len: u32,
}

fn header_violation(rule: &'static str, message: &str) -> Vec<Violation> {
    vec![Violation {
        type_id: 0,
        kind: "",
        name: String::new(),
        rule,
        message: message.to_string(),
    }]
}

/// The byte order to read `data` in.
fn byte_order(data: &[u8], order: ByteOrder) -> Endian {
    match order {
        ByteOrder::Native => Endian::native(),
        ByteOrder::FromMagic => data
            .get(..2)
            .and_then(|b| Endian::from_magic([b[0], b[1]]))
            .unwrap_or_else(Endian::native),
    }
}

/// `btf_parse_hdr` and `btf_check_sec_info`: the header, and sections that
/// tile the blob after it with no gap, overlap or excess. All knowledge of
/// the header's layout is here.
fn parse_header(
    data: &[u8],
    endian: Endian,
    split: bool,
    layout_section: bool,
) -> Result<Header, Vec<Violation>> {
    const RULE: &str = "btf_parse_hdr";
    let size = data.len() as u32;
    if data.len() < 8 {
        return Err(header_violation(RULE, "hdr_len not found"));
    }
    let hdr_len = read_u32(data, endian, 4);
    if size < hdr_len {
        return Err(header_violation(RULE, "btf_header not found"));
    }
    // Linux 7.1 knows the layout fields: they may be set, and the section
    // they describe must be well formed (the reader's header parser holds
    // those rules, as libbpf 1.8 writes the section).
    let layout_header = layout_section && hdr_len as usize >= LAYOUT_HEADER_LEN;
    if layout_header {
        if let Err(err) = crate::read::parse_header(data) {
            return Err(header_violation(
                RULE,
                &format!("Invalid kind layout section: {err}"),
            ));
        }
    }
    let known = if layout_header {
        LAYOUT_HEADER_LEN
    } else {
        KNOWN_HEADER_LEN
    };
    // Ensure the unsupported header fields are zero.
    if hdr_len as usize > known && data[known..hdr_len as usize].iter().any(|&b| b != 0) {
        return Err(header_violation(RULE, "Unsupported btf_header"));
    }
    let mut raw = [0u8; KNOWN_HEADER_LEN];
    let copy = (hdr_len as usize).min(KNOWN_HEADER_LEN);
    raw[..copy].copy_from_slice(&data[..copy]);
    let word = |at: usize| read_u32(&raw, endian, at);
    let hdr = Header {
        magic: endian.u16([raw[0], raw[1]]),
        version: raw[2],
        flags: raw[3],
        hdr_len: word(4),
        type_off: word(8),
        type_len: word(12),
        str_off: word(16),
        str_len: word(20),
        layout_off: if layout_header {
            read_u32(data, endian, 24)
        } else {
            0
        },
        layout_len: if layout_header {
            read_u32(data, endian, 28)
        } else {
            0
        },
    };
    if hdr.magic != crate::raw::MAGIC {
        return Err(header_violation(RULE, "Invalid magic"));
    }
    if hdr.version != crate::raw::VERSION {
        return Err(header_violation(RULE, "Unsupported version"));
    }
    if hdr.flags != 0 {
        return Err(header_violation(RULE, "Unsupported flags"));
    }
    if !split && size == hdr.hdr_len {
        return Err(header_violation(RULE, "No data"));
    }
    check_sec_info(&hdr, size)?;
    Ok(hdr)
}

/// `btf_check_sec_info` (the rule is the reader's,
/// [`crate::read::check_section_tiling`]).
fn check_sec_info(hdr: &Header, size: u32) -> Result<(), Vec<Violation>> {
    let mut secs = vec![(hdr.type_off, hdr.type_len), (hdr.str_off, hdr.str_len)];
    if hdr.layout_len != 0 {
        secs.push((hdr.layout_off, hdr.layout_len));
    }
    crate::read::check_section_tiling(size.wrapping_sub(hdr.hdr_len), &mut secs)
        .map_err(|problem| header_violation("btf_check_sec_info", problem.message()))
}

/// Checks a standalone BTF (`base` = `None`) as `BPF_BTF_LOAD` would, or a
/// split BTF on top of `base` as `btf_parse_module` would. On success the
/// result can serve as the base of a split.
pub fn validate<'a>(
    data: &'a [u8],
    base: Option<&'a Checked<'a>>,
    options: Options,
) -> Result<Checked<'a>, Vec<Violation>> {
    let mut btf = validate_records(data, base, options)?;
    check_references(&mut btf)?;
    Ok(btf)
}

/// [`validate`] after the records: every reference resolves, and the type
/// tag chains are in order.
fn check_references(btf: &mut Checked<'_>) -> Result<(), Vec<Violation>> {
    resolve::check_all_types(btf)?;
    resolve::check_type_tags(btf, btf.start_id.max(1))
}

/// [`validate`] up to and including each type's own fields: the header,
/// the sections, the strings and the records, not the references.
fn validate_records<'a>(
    data: &'a [u8],
    base: Option<&'a Checked<'a>>,
    options: Options,
) -> Result<Checked<'a>, Vec<Violation>> {
    if base.is_none() && options.size_limit && data.len() > BTF_MAX_SIZE {
        return Err(header_violation(
            "btf_parse",
            &format!(
                "BTF of {} bytes exceeds BTF_MAX_SIZE ({BTF_MAX_SIZE}): E2BIG",
                data.len()
            ),
        ));
    }
    let endian = byte_order(data, options.byte_order);
    let hdr = parse_header(data, endian, base.is_some(), options.layout_section)?;
    let nohdr = hdr.hdr_len as usize;

    // btf_parse_str_sec
    let strings_at = nohdr + hdr.str_off as usize;
    let str_end = strings_at as u64 + u64::from(hdr.str_len);
    if str_end != data.len() as u64 {
        return Err(header_violation(
            "btf_parse_str_sec",
            "String section is not at the end",
        ));
    }
    let strings = &data[strings_at..];
    if !(base.is_some() && hdr.str_len == 0)
        && (hdr.str_len == 0
            || hdr.str_len - 1 > BTF_MAX_NAME_OFFSET
            || strings.last() != Some(&0)
            || (base.is_none() && strings.first() != Some(&0)))
    {
        return Err(header_violation(
            "btf_parse_str_sec",
            "Invalid string section",
        ));
    }

    // btf_parse_type_sec
    if hdr.type_off & 3 != 0 {
        return Err(header_violation("btf_parse_type_sec", "Unaligned type_off"));
    }
    if base.is_none() && hdr.type_len == 0 {
        return Err(header_violation("btf_parse_type_sec", "No type found"));
    }
    let (start_id, start_str_off) = match base {
        Some(b) => (b.total_types(), b.start_str_off + b.str_len),
        None => (0, 0),
    };
    let mut btf = Checked {
        data,
        endian,
        strings_at,
        str_len: hdr.str_len,
        identifiers: ctype::IdentifierStarts::of(strings),
        type_at: Vec::new(),
        start_id,
        start_str_off,
        resolved_ids: Vec::new(),
        resolved_sizes: Vec::new(),
        base,
    };
    let types_at = nohdr + hdr.type_off as usize;
    meta::check_all_metas(&mut btf, types_at, hdr.type_len as usize)?;
    Ok(btf)
}

/// A base whose records passed the kernel's checks (header, strings, each
/// type's own fields) and whose references are resolved only when a split
/// on it is checked, and only as far as that split reaches
/// ([`validate_split_on`]).
///
/// Why: a kernel build encodes each module in a process of its own, on
/// the same vmlinux, and resolving every one of the base's types (about
/// 100,000) was two fifths of the work for a small module. The kernel
/// itself resolved them when it booted; what loading a module's BTF reads
/// of them is the resolved id and size of the base types the module's
/// types refer to, which resolving from those types computes (a base the
/// kernel loads resolves to the same ids and sizes in any order).
#[derive(Debug)]
pub struct UnresolvedBase<'a>(Checked<'a>);

/// Checks a base's header, strings and records as `BPF_BTF_LOAD` would,
/// leaving the resolution of its references to [`validate_split_on`].
pub fn validate_base_records(
    data: &[u8],
    options: Options,
) -> Result<UnresolvedBase<'_>, Vec<Violation>> {
    validate_records(data, None, options).map(UnresolvedBase)
}

/// Why a split on an [`UnresolvedBase`] would be rejected.
#[derive(Debug)]
pub enum SplitRejected {
    /// A base type the split reaches does not resolve.
    Base(Vec<Violation>),
    /// The split itself.
    Split(Vec<Violation>),
}

/// Checks split BTF `data` on `base` as `btf_parse_module` would, after
/// resolving the base types it refers to (see [`UnresolvedBase`]).
pub fn validate_split_on(
    data: &[u8],
    base: &UnresolvedBase<'_>,
    options: Options,
) -> Result<(), SplitRejected> {
    let mut split = validate_records(data, Some(&base.0), options).map_err(SplitRejected::Split)?;
    let mut resolved = base.0.clone();
    resolve::check_types(&mut resolved, split.base_references().into_iter())
        .map_err(SplitRejected::Base)?;
    // The split's records stand as checked: only their base now knows
    // what the split's references resolve to.
    split.base = Some(&resolved);
    check_references(&mut split).map_err(SplitRejected::Split)
}

/// One BTF joined onto its base, as the kernel would see a module's split
/// BTF loaded alone: the base's types then the split's, the base's strings
/// then the split's (the split's ids and string offsets already continue
/// the base's). Both must have the standard 24-byte header and sections in
/// bounds (check each with [`validate`] first).
pub fn join_split(base: &[u8], split: &[u8], endian: Endian) -> Option<Vec<u8>> {
    let section = |data: &[u8], off_at: usize, len_at: usize| -> Option<std::ops::Range<usize>> {
        let hdr_len = read_u32(data, endian, 4) as usize;
        let off = read_u32(data, endian, off_at) as usize;
        let len = read_u32(data, endian, len_at) as usize;
        let start = hdr_len.checked_add(off)?;
        let end = start.checked_add(len)?;
        (end <= data.len()).then_some(start..end)
    };
    let (bt, bs) = (section(base, 8, 12)?, section(base, 16, 20)?);
    let (st, ss) = (section(split, 8, 12)?, section(split, 16, 20)?);
    let type_len = bt.len() + st.len();
    let str_len = bs.len() + ss.len();
    let mut out = Vec::with_capacity(24 + type_len + str_len);
    let mut header =
        crate::raw::Header::new(u32::try_from(type_len).ok()?, u32::try_from(str_len).ok()?);
    header.hdr_len = crate::raw::HEADER_LEN;
    header.write_to(&mut out, endian);
    out.extend_from_slice(&base[bt]);
    out.extend_from_slice(&split[st]);
    out.extend_from_slice(&base[bs]);
    out.extend_from_slice(&split[ss]);
    Some(out)
}
