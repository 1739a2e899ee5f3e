//! The crate's errors, as gimli arranges its own: one error per area,
//! joined by `From` into the crate's one [`Error`], which keeps each
//! area's error whole (its variant can be matched, its `source()` chain
//! followed) and layers of [`Error::Context`] that say which file, unit or
//! step it happened in.
//!
//! - [`FormatError`]: reading, writing or transforming BTF: what is wrong
//!   ([`ErrorKind`]) plus where (byte offset in the input blob, type id),
//!   so that a message points at the exact record.
//! - [`crate::dedup::Error`]: collapse and deduplication.
//! - `crate::lower::Error` and the DWARF reader's `dwarf::Error` (with the
//!   default `dwarf` feature): lowering a unit, reading the ELF file.
//!
//! Messages say what is wrong in the input; they never name a command-line
//! flag (a tool adds its own hints, as btfenc does for
//! `--btf_encode_force`).

use std::fmt;

use crate::raw::{self, Kind};
use crate::types::TypeId;

/// An error from reading, writing or transforming BTF.
///
/// `offset` is a byte offset into the blob being parsed (from the start of
/// the blob, header included); `type_id` is the id of the type concerned.
/// Either may be absent when it does not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// What is wrong.
    pub kind: ErrorKind,
    /// Byte offset in the input, when reading.
    pub offset: Option<u64>,
    /// The type concerned.
    pub type_id: Option<TypeId>,
}

/// Which BTF section a layout error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The header itself.
    Header,
    /// The type section.
    Types,
    /// The string section.
    Strings,
    /// The optional kind layout section of newer headers.
    Layout,
}

/// What is wrong. Each variant is one rule of the format or one limit.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    // ----- header and layout -----
    /// Fewer bytes than a header, or than the header says it has.
    TruncatedHeader {
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// The magic is neither 0xeB9F nor its byte swap.
    BadMagic(u16),
    /// A version other than 1.
    UnsupportedVersion(u8),
    /// Non-zero header flags.
    UnsupportedFlags(u8),
    /// `hdr_len` below 8 bytes, or below the 24 of a version 1 header with
    /// sections (those its fields give, the others empty) that do not
    /// cover what follows it.
    HeaderTooShort(u32),
    /// Header bytes past the fields we know are not zero.
    UnknownHeaderFields,
    /// A section extends past the end of the data.
    SectionOutOfBounds {
        /// Which section.
        section: Section,
        /// Its offset relative to the end of the header.
        off: u32,
        /// Its length.
        len: u32,
    },
    /// Two sections share bytes.
    SectionsOverlap,
    /// The type section does not start 4-byte aligned.
    MisalignedTypeSection(u32),
    /// The kind layout section does not start 4-byte aligned.
    MisalignedLayoutSection(u32),
    /// The kind layout section's length is not a whole number of 4-byte
    /// `struct btf_layout` entries.
    BadLayoutSectionLength(u32),
    /// The kind layout section does not lie between the end of the type
    /// section and the start of the string section (libbpf's rule).
    LayoutSectionMisplaced {
        /// `layout_off`.
        off: u32,
        /// `layout_len`.
        len: u32,
        /// `type_off + type_len`.
        types_end: u64,
        /// `str_off`.
        str_off: u32,
    },
    /// A kind layout entry for a kind this format defines does not say
    /// what the format says about that kind's records.
    KindLayoutMismatch {
        /// The kind (index of the entry).
        kind: Kind,
        /// The entry read.
        found: raw::KindLayout,
        /// What the format defines ([`raw::KIND_LAYOUTS`]).
        expected: raw::KindLayout,
    },
    /// A standalone BTF's string section is empty or does not start with
    /// the empty string.
    StringSectionNoLeadingNul,
    /// The string section's last byte is not NUL.
    StringSectionNotTerminated,
    /// A blob with an ELF magic has no usable `.BTF` section.
    NoBtfSection,
    /// The ELF container could not be read.
    Elf(String),
    /// The ELF section is compressed; only uncompressed sections can be
    /// borrowed.
    CompressedSection(String),

    // ----- types -----
    /// A kind outside 1..=19.
    UnknownKind(u8),
    /// `info` has bits set that no kind uses (bits 16-23 and 29-30).
    InfoReservedBits(u32),
    /// A record extends past the end of the type section.
    TruncatedType {
        /// Bytes the record needs.
        needed: u64,
        /// Bytes left in the type section.
        available: u64,
    },
    /// A name offset past the end of the string sections.
    NameOutOfRange(u32),
    /// A name that is not valid UTF-8 (or starts inside a character).
    NameNotUtf8(u32),
    /// A kind that has no name in the model has a non-zero name offset.
    UnexpectedName(u32),
    /// A kind that has no kind_flag in the model has it set.
    UnexpectedKindFlag,
    /// A kind without members has a non-zero vlen.
    UnexpectedVlen(u32),
    /// A field that must be zero for this kind is not.
    NonZeroField(u32),
    /// A type id referenced that does not exist.
    TypeIdOutOfRange(u32),
    /// An INT whose trailing u32 breaks a rule (`what` says which).
    BadInt(&'static str),
    /// A FUNC or VAR linkage value outside the known ones.
    BadLinkage(u32),

    // ----- writing limits -----
    /// More members/values/params/vars than `vlen` holds (0xffff).
    VlenTooLarge(usize),
    /// A bitfield member's bit offset does not fit the 24 bits left next to
    /// the bitfield size.
    BitfieldOffsetTooLarge {
        /// Member index.
        member: usize,
        /// The offset.
        bit_offset: u32,
    },
    /// A member has a bitfield size but the aggregate's kind_flag is off.
    BitfieldWithoutKindFlag {
        /// Member index.
        member: usize,
    },
    /// An ENUM value outside the range a 32-bit enumerator can hold
    /// (libbpf accepts `i32::MIN..=u32::MAX`).
    EnumValueTooLarge(u64),
    /// More types than a type id can name (`raw::MAX_TYPE_ID`).
    TooManyTypes(u64),
    /// The string section grew past what a name offset can address.
    StringsTooLarge(u64),
    /// A name contains a NUL byte and cannot be stored.
    NameContainsNul,
    /// A section grew past 4 GiB.
    SectionTooLarge(u64),
    /// The base string index given for a split does not end where the
    /// split's `base_str_len` says the base strings end.
    BaseStringsMismatch {
        /// `Btf::base_str_len`.
        expected: u32,
        /// End of the base string index.
        found: u32,
    },
    /// Two parts of this crate disagree: a bug, reported instead of a
    /// panic.
    Internal(&'static str),
    /// A standalone BTF (or a distilled base) would hold no type, which
    /// the kernel refuses ("No type found", btf_parse_type_sec): what is
    /// missing.
    NoTypes(&'static str),
    /// A function type that takes or returns by value a struct or union
    /// no unit (nor the base) defines: the kernel wants a size
    /// (btf_func_proto_check).
    DeclaredByValue {
        /// The FUNC_PROTO's id.
        proto: u32,
        /// `argument N` or `return value`.
        slot: String,
        /// The struct's or union's name.
        name: String,
        /// A union rather than a struct.
        union: bool,
    },
    /// BTF the kernel would reject, found by [`crate::validate`] before
    /// anything was written: which BTF (`BTF`, `distilled base BTF`, `base
    /// BTF`) and the first rule broken ([`crate::validate::first_of`]).
    WouldBeRejected {
        /// What was checked.
        what: &'static str,
        /// Whether it was about to be written (else it was read).
        output: bool,
        /// The first violation, and how many there were.
        violations: String,
    },

    // ----- distilled base and relocation -----
    /// A split is not on top of the base it was given: its type ids
    /// continue after `expected` base types, the base has `found`.
    SplitBaseMismatch {
        /// The split's `base_type_count`.
        expected: u32,
        /// Types in the base given.
        found: u32,
    },
    /// The split refers to a base type of a kind a distilled base cannot
    /// describe or carry over (FUNC, VAR, DATASEC, DECL_TAG).
    DistillUnexpectedKind(Kind),
    /// A split DECL_TAG tags a member of a named struct or union that the
    /// distilled base describes without members, so the pair fails the
    /// kernel's checks (`btf_decl_tag_resolve`: "Invalid component_idx").
    DistillMemberTag {
        /// The tag's value.
        tag: String,
        /// The member index it tags.
        member: i32,
        /// The tagged struct or union's name.
        target: String,
    },
    /// A distilled base holds a type libbpf's `btf_relocate` refuses: an
    /// anonymous one, or one of a kind other than named INT, FLOAT, ENUM,
    /// STRUCT, UNION or FWD.
    InvalidDistilledBase(Kind),
    /// No type of the full base matches a distilled base type.
    RelocateNoMatch {
        /// Kind of the distilled type.
        kind: Kind,
        /// Its name.
        name: String,
        /// Its size (0 for FWD).
        size: u32,
        /// Whether a split aggregate embeds it, so the size had to match.
        embedded: bool,
    },
    /// Two types of the full base match one distilled base type.
    RelocateAmbiguous {
        /// Kind of the distilled type.
        kind: Kind,
        /// Its name.
        name: String,
        /// Its size.
        size: u32,
        /// The two candidates in the full base.
        candidates: (TypeId, TypeId),
    },
    /// A distilled base INT matches a base INT (same name, size and
    /// encoding, as libbpf matches them) whose bits differ: the split was
    /// checked with the distilled one's, and its members may not hold with
    /// the base's.
    RelocateIntBits {
        /// Its name.
        name: String,
        /// Bit offset and number of bits of the distilled INT.
        distilled: (u8, u8),
        /// Those of its match in the full base.
        base: (u8, u8),
        /// The match.
        base_id: TypeId,
    },
}

impl FormatError {
    /// An error with no location yet.
    pub fn new(kind: ErrorKind) -> Self {
        FormatError {
            kind,
            offset: None,
            type_id: None,
        }
    }

    /// Adds a byte offset.
    pub fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    /// Adds a type id.
    pub fn for_type(mut self, id: TypeId) -> Self {
        self.type_id = Some(id);
        self
    }
}

impl From<ErrorKind> for FormatError {
    fn from(kind: ErrorKind) -> Self {
        FormatError::new(kind)
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Section::Header => "header",
            Section::Types => "type section",
            Section::Strings => "string section",
            Section::Layout => "kind layout section",
        })
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            TruncatedHeader { needed, available } => {
                write!(f, "truncated header: need {needed} bytes, have {available}")
            }
            BadMagic(m) => write!(f, "bad magic {m:#06x} (expected {:#06x})", raw::MAGIC),
            UnsupportedVersion(v) => write!(f, "unsupported BTF version {v}"),
            UnsupportedFlags(x) => write!(f, "unsupported header flags {x:#x}"),
            HeaderTooShort(n) if *n < 8 => {
                write!(f, "hdr_len {n} does not even cover the header's first 8 bytes")
            }
            HeaderTooShort(n) => write!(
                f,
                "hdr_len {n} is shorter than the {}-byte header, and the sections its fields \
                 describe (the kernel reads the missing ones as zero) do not cover what follows it",
                raw::HEADER_LEN
            ),
            UnknownHeaderFields => f.write_str("unknown non-zero header fields"),
            SectionOutOfBounds { section, off, len } => {
                write!(
                    f,
                    "{section} at {off} + {len} extends past the end of the data"
                )
            }
            SectionsOverlap => f.write_str("type and string sections overlap"),
            MisalignedTypeSection(off) => {
                write!(f, "type section offset {off} is not 4-byte aligned")
            }
            MisalignedLayoutSection(off) => {
                write!(f, "kind layout section offset {off} is not 4-byte aligned")
            }
            BadLayoutSectionLength(len) => write!(
                f,
                "kind layout section length {len} is not a multiple of {} (struct btf_layout)",
                raw::KIND_LAYOUT_LEN
            ),
            LayoutSectionMisplaced { off, len, types_end, str_off } => write!(
                f,
                "kind layout section at {off} + {len} is not between the end of the type section ({types_end}) and the string section ({str_off})"
            ),
            KindLayoutMismatch { kind, found, expected } => write!(
                f,
                "kind layout entry {} ({kind}) is info_sz {} elem_sz {} flags {:#x}, the format defines info_sz {} elem_sz {} flags {:#x}",
                kind.0, found.info_sz, found.elem_sz, found.flags, expected.info_sz, expected.elem_sz, expected.flags
            ),
            StringSectionNoLeadingNul => {
                f.write_str("string section does not start with the empty string")
            }
            StringSectionNotTerminated => f.write_str("string section is not NUL-terminated"),
            NoBtfSection => f.write_str("no .BTF section"),
            Elf(e) => write!(f, "ELF: {e}"),
            CompressedSection(name) => write!(f, "section {name} is compressed"),
            UnknownKind(k) => write!(f, "unknown kind {k}"),
            InfoReservedBits(info) => write!(f, "info {info:#010x} has reserved bits set"),
            TruncatedType { needed, available } => {
                write!(
                    f,
                    "record needs {needed} bytes but only {available} are left"
                )
            }
            NameOutOfRange(off) => write!(f, "name offset {off} is past the string sections"),
            NameNotUtf8(off) => write!(f, "name at offset {off} is not valid UTF-8"),
            UnexpectedName(off) => write!(f, "this kind has no name but name_off is {off}"),
            UnexpectedKindFlag => f.write_str("kind_flag set on a kind that does not use it"),
            UnexpectedVlen(v) => write!(f, "vlen {v} on a kind without members"),
            NonZeroField(v) => write!(f, "field that must be zero is {v:#x}"),
            TypeIdOutOfRange(id) => write!(f, "reference to type id {id}, which does not exist"),
            BadInt(what) => write!(f, "bad INT: {what}"),
            BadLinkage(l) => write!(f, "unknown linkage {l}"),
            VlenTooLarge(n) => write!(f, "{n} members do not fit vlen (max {})", raw::MAX_VLEN),
            BitfieldOffsetTooLarge { member, bit_offset } => write!(
                f,
                "member {member}: bit offset {bit_offset} does not fit 24 bits of a bitfield offset"
            ),
            BitfieldWithoutKindFlag { member } => {
                write!(f, "member {member} is a bitfield but kind_flag is not set")
            }
            EnumValueTooLarge(v) => write!(f, "enumerator value {v:#x} does not fit 32 bits"),
            TooManyTypes(n) => write!(f, "{n} types exceed the maximum type id"),
            StringsTooLarge(n) => write!(
                f,
                "string section of {n} bytes exceeds the maximum name offset"
            ),
            NameContainsNul => f.write_str("name contains a NUL byte"),
            SectionTooLarge(n) => write!(f, "section of {n} bytes exceeds 4 GiB"),
            BaseStringsMismatch { expected, found } => write!(
                f,
                "base strings end at {found} but the split expects them to end at {expected}"
            ),
            Internal(what) => write!(f, "internal error (a bug in btfenc): {what}"),
            DeclaredByValue {
                proto,
                slot,
                name,
                union,
            } => write!(
                f,
                "[{proto}] FUNC_PROTO: its {slot} is {} {name} by value, which no unit defines \
                 (only declarations): the kernel wants a known size (btf_func_proto_check)",
                if *union { "union" } else { "struct" }
            ),
            WouldBeRejected {
                what,
                output: true,
                violations,
            } => write!(
                f,
                "the kernel would reject the {what} encoded, so none is written: {violations}"
            ),
            WouldBeRejected {
                what,
                output: false,
                violations,
            } => write!(f, "the kernel would reject this {what}: {violations}"),
            NoTypes(what) => write!(
                f,
                "{what}: the kernel refuses BTF without types (btf_parse_type_sec)"
            ),
            SplitBaseMismatch { expected, found } => write!(
                f,
                "the split BTF continues after {expected} base types but the base has {found}"
            ),
            DistillUnexpectedKind(kind) => write!(
                f,
                "split BTF refers to a base {kind}, which a distilled base cannot describe"
            ),
            DistillMemberTag {
                tag,
                member,
                target,
            } => write!(
                f,
                "decl tag {tag:?} on member {member} of the base's {target:?}: the distilled \
                 base describes it without members, so the kernel's checks refuse the tag \
                 (btf_decl_tag_resolve: \"Invalid component_idx\")"
            ),
            InvalidDistilledBase(kind) => write!(
                f,
                "not a distilled base: it holds an anonymous or unexpected {kind}"
            ),
            RelocateNoMatch { kind, name, size, embedded } => {
                write!(f, "distilled base {kind} '{name}'")?;
                if *embedded {
                    write!(f, " (size {size}, embedded in the split, so the size must match)")?;
                } else if *kind != Kind::FWD {
                    write!(f, " (size {size})")?;
                }
                f.write_str(" has no match in the base BTF")
            }
            RelocateAmbiguous { kind, name, size, candidates } => write!(
                f,
                "distilled base {kind} '{name}' (size {size}) matches both [{}] and [{}] in the base BTF",
                candidates.0 .0, candidates.1 .0
            ),
            RelocateIntBits { name, distilled, base, base_id } => write!(
                f,
                "distilled base INT '{name}' has {} bits at offset {}, its match [{}] in the base \
                 BTF {} bits at offset {}: the split's members were checked with the first, and \
                 the kernel would check the relocated split with the second",
                distilled.1, distilled.0, base_id.0, base.1, base.0
            ),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BTF")?;
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset:#x}")?;
        }
        if let Some(id) = self.type_id {
            write!(f, " in type [{}]", id.0)?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for FormatError {}

/// The crate's error: the error of the area that failed, kept whole, with
/// what the caller was doing around it.
///
/// Each area's own error is kept as it is; [`Error::Context`] layers say
/// which file, unit or step it happened in. Printed as a chain (`{:#}`
/// through `anyhow`, or by walking [`std::error::Error::source`]), it reads
/// `FILE: STEP: CAUSE` on one line.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Reading, writing or transforming BTF.
    Format(FormatError),
    /// Collapsing or deduplicating the types.
    Dedup(crate::dedup::Error),
    /// Lowering a unit's DWARF model to BTF with pahole's rules.
    #[cfg(feature = "dwarf")]
    Lower(crate::lower::Error),
    /// Reading the ELF file or walking its DWARF.
    #[cfg(feature = "dwarf")]
    Dwarf(dwarf::Error),
    /// `source` happened while doing what `context` says.
    Context {
        /// The file, unit or step (for example `vmlinux: dedup`).
        context: String,
        /// What went wrong there.
        source: Box<Error>,
    },
}

impl Error {
    /// The same error, said to have happened in `context`.
    pub fn context(self, context: impl Into<String>) -> Error {
        Error::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// The area's error at the bottom of the context layers.
    pub fn root(&self) -> &Error {
        match self {
            Error::Context { source, .. } => source.root(),
            other => other,
        }
    }

    /// The error and its sources on one line, `FILE: STEP: CAUSE`, as
    /// `anyhow`'s `{:#}` (and so btfenc) prints it.
    pub fn one_line(&self) -> String {
        let mut text = self.to_string();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            next = cause.source();
        }
        text
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Each variant prints only its own part: the chain printer adds
        // the sources, so nothing is said twice.
        match self {
            Error::Format(err) => err.fmt(f),
            Error::Dedup(err) => err.fmt(f),
            #[cfg(feature = "dwarf")]
            Error::Lower(err) => err.fmt(f),
            #[cfg(feature = "dwarf")]
            Error::Dwarf(err) => err.fmt(f),
            Error::Context { context, .. } => f.write_str(context),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the area's error's own sources follow.
            Error::Format(err) => err.source(),
            Error::Dedup(err) => err.source(),
            #[cfg(feature = "dwarf")]
            Error::Lower(err) => err.source(),
            #[cfg(feature = "dwarf")]
            Error::Dwarf(err) => err.source(),
            Error::Context { source, .. } => Some(source.as_ref()),
        }
    }
}

impl From<FormatError> for Error {
    fn from(err: FormatError) -> Error {
        Error::Format(err)
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Error {
        Error::Format(kind.into())
    }
}

impl From<crate::dedup::Error> for Error {
    fn from(err: crate::dedup::Error) -> Error {
        Error::Dedup(err)
    }
}

#[cfg(feature = "dwarf")]
impl From<crate::lower::Error> for Error {
    fn from(err: crate::lower::Error) -> Error {
        Error::Lower(err)
    }
}

#[cfg(feature = "dwarf")]
impl From<dwarf::Error> for Error {
    fn from(err: dwarf::Error) -> Error {
        Error::Dwarf(err)
    }
}

/// `.with_context(|| ...)` on results whose error becomes an [`Error`].
#[cfg_attr(not(feature = "dwarf"), allow(dead_code))]
pub(crate) trait ResultExt<T> {
    /// Adds `context` to the error, computed only on failure.
    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T, Error>;
}

impl<T, E: Into<Error>> ResultExt<T> for Result<T, E> {
    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T, Error> {
        self.map_err(|err| err.into().context(context()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_offset_and_type() {
        let e = FormatError::new(ErrorKind::UnknownKind(42))
            .at(0x30)
            .for_type(TypeId(7));
        assert_eq!(
            e.to_string(),
            "BTF at byte 0x30 in type [7]: unknown kind 42"
        );
    }

    #[test]
    fn context_layers_print_outermost_first_and_keep_the_cause() {
        let err = Error::from(crate::dedup::Error::TooManyTypes { count: 5 })
            .context("x.ko: dedup")
            .context("batch");
        assert_eq!(
            err.one_line(),
            "batch: x.ko: dedup: dedup: 5 type ids exceed BTF's limit"
        );
        assert!(matches!(
            err.root(),
            Error::Dedup(crate::dedup::Error::TooManyTypes { count: 5 })
        ));
    }
}
