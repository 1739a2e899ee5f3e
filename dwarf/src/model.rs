//! The intermediate type model: what one compilation unit says about C types,
//! functions and variables, with the DWARF encoding details already resolved.
//!
//! Why a model of its own: DWARF spreads one fact over several attributes and
//! forms (a member's position is `DW_AT_data_member_location` plus
//! `DW_AT_data_bit_offset`, or the DWARF 4 `DW_AT_bit_offset` counted from the
//! other end of the storage unit), and the BTF lowering should not have to
//! know any of that. Every fact here is already in its final unit (bits for
//! member offsets, bytes for sizes, element counts for array dimensions).
//!
//! ## API Structure
//! - [`CuModel`] owns a CU's [`Node`]s (types), [`Function`]s and
//!   [`Variable`]s. Nodes are addressed by [`NodeId`], an index into
//!   `CuModel::nodes`, so references are `Copy` and cycles are free.
//! - Variable-length parts (members, parameters, enumerators, dimensions,
//!   annotation strings) are slices allocated in the caller's
//!   [`bumpalo::Bump`]; the whole model of one CU is dropped at once with
//!   that arena, once the CU has been lowered.
//! - Strings borrow from the mapped ELF (`'input`), or from a decompressed
//!   section buffer that lives as long as the [`crate::ElfFile`].

/// Index of a [`Node`] in [`CuModel::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// A reference to a type: `void` (absent `DW_AT_type`), or a node of the
/// same CU (a `DW_TAG_unspecified_type` is a [`Node::Unsupported`] node,
/// which lowers to `void` too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeRef {
    /// No type (C `void`).
    Void,
    /// A type node of this CU.
    Node(NodeId),
}

/// A CU's `DW_AT_language`, the `DW_LANG_*` value as the compiler wrote
/// it (0 when the unit DIE has none). Kept whole because pahole's
/// `--lang_exclude` names single values: its `c` is `DW_LANG_C`, which
/// excludes no unit gcc writes as `DW_LANG_C11`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Language(pub u16);

impl Language {
    /// `DW_LANG_C89`.
    pub const C89: Language = Language(0x0001);
    /// `DW_LANG_C`.
    pub const C: Language = Language(0x0002);
    /// `DW_LANG_C99`.
    pub const C99: Language = Language(0x000c);
    /// `DW_LANG_Rust`.
    pub const RUST: Language = Language(0x001c);
    /// `DW_LANG_C11`, gcc's and clang's value for C11 and later.
    pub const C11: Language = Language(0x001d);
    /// `DW_LANG_Mips_Assembler`, which gcc writes for `.S` files.
    pub const MIPS_ASSEMBLER: Language = Language(0x8001);
}

/// `DW_AT_encoding` of a base type, reduced to what BTF can express.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BaseEncoding {
    /// `DW_ATE_signed`.
    Signed,
    /// `DW_ATE_unsigned`.
    Unsigned,
    /// `DW_ATE_signed_char`.
    SignedChar,
    /// `DW_ATE_unsigned_char`.
    UnsignedChar,
    /// `DW_ATE_boolean`.
    Boolean,
    /// `DW_ATE_float`.
    Float,
    /// `DW_ATE_complex_float` and other encodings BTF has no kind for.
    Other(u8),
}

/// `DW_TAG_{const,volatile,restrict,atomic}_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Qualifier {
    /// `const`.
    Const,
    /// `volatile`.
    Volatile,
    /// `restrict`.
    Restrict,
    /// `_Atomic` (BTF has no kind for it; pahole drops it).
    Atomic,
}

/// Struct, union or class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompositeKind {
    /// `DW_TAG_structure_type`.
    Struct,
    /// `DW_TAG_union_type`.
    Union,
    /// `DW_TAG_class_type`.
    Class,
}

/// One member of a struct or union.
#[derive(Clone, Copy, Debug)]
pub struct Member<'input, 'arena> {
    /// `None` for anonymous members (nested anonymous struct/union).
    pub name: Option<&'input str>,
    /// The member's type.
    pub ty: TypeRef,
    /// Offset of the member's first bit from the start of the enclosing
    /// struct, whatever attributes DWARF used to say so.
    pub bit_offset: u64,
    /// Width in bits for a bitfield member, 0 for an ordinary member.
    pub bitfield_size: u32,
    /// `btf_decl_tag` annotation values on this member.
    pub decl_tags: &'arena [&'input str],
}

/// One enumerator.
#[derive(Clone, Copy, Debug)]
pub struct Enumerator<'input> {
    /// Enumerator name.
    pub name: &'input str,
    /// The value's 64 bits; interpret with [`Enumerator::negative`].
    pub value: u64,
    /// True when DWARF encoded the value as a negative signed number.
    /// Only `DW_FORM_sdata`/`DW_FORM_implicit_const` carry a sign:
    /// fixed-size data forms are zero-extended whatever the enum's
    /// signedness (gcc writes 128 in an `int` enum as `data1 0x80`), as
    /// pahole reads them.
    pub negative: bool,
}

/// One formal parameter of a subroutine type or function.
#[derive(Clone, Copy, Debug)]
pub struct Param<'input, 'arena> {
    /// Parameter name, when DWARF gives one.
    pub name: Option<&'input str>,
    /// Parameter type.
    pub ty: TypeRef,
    /// Where this DIE says the parameter lives on entry (its own
    /// `DW_AT_location`, nothing merged from concrete copies). The FUNC
    /// rules read `entry` instead, which carries pahole's facts shared
    /// with the abstract origin.
    pub location: ParamLocation,
    /// The same DIE's location as pahole at dwarves 1436daf records it
    /// (`parameter__new`, `parameter__decode_location`), with what the
    /// CU's concrete copies say merged into an abstract instance's
    /// parameter as `ftype__recode_dwarf_types` merges it. Unused for
    /// type-level prototypes.
    pub entry: ParamEntry,
    /// `btf_decl_tag` annotation values on this parameter.
    pub decl_tags: &'arena [&'input str],
}

impl<'input, 'arena> Param<'input, 'arena> {
    /// A parameter of a type-level prototype (`DW_TAG_subroutine_type`):
    /// only its name and type matter, it has no location.
    pub fn of_prototype(name: Option<&'input str>, ty: TypeRef) -> Self {
        Param {
            name,
            ty,
            location: ParamLocation::Unknown,
            entry: ParamEntry::default(),
            decl_tags: &[],
        }
    }
}

/// What pahole (dwarves 1436daf) records about a function parameter's
/// `DW_AT_location` for its optimized-function rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ParamEntry {
    /// `has_loc`: the DIE has `DW_AT_location` (whatever it says).
    pub has_location: bool,
    /// `has_const_value`: the DIE has `DW_AT_const_value`.
    pub has_const_value: bool,
    /// `loc_reg` for a parameter at most pointer-sized (or on a machine
    /// that passes aggregates in one register): the first register seen,
    /// `DW_OP_reg0..31` or `DW_OP_bregN ..., DW_OP_stack_value` in the
    /// first location, or `DW_OP_entry_value(DW_OP_regN)` anywhere.
    pub register: Option<u8>,
    /// `loc_reg` for a wider parameter: as `register`, except that a
    /// register piece of a multi-operation expression counts in any
    /// location (`parameter__multi_exprs`).
    pub wide_register: Option<u8>,
    /// `loc_stack`: the first location is a lone `DW_OP_fbreg` (the
    /// value is in the caller's stack frame). Only pahole's
    /// `true_signature` rules read it.
    pub loc_stack: bool,
    /// `loc_const_value`: the first location starts with a constant
    /// (`DW_OP_lit*`, `DW_OP_constu`, `DW_OP_consts`). `true_signature`.
    pub loc_const_value: bool,
    /// Whether pahole's `first_reg_fields` (bit 0) and `second_reg_fields`
    /// (bit 1) are non-zero: for a parameter described by `DW_OP_piece`s,
    /// pieces start in the first or second register-sized half, as
    /// `parameter__multi_exprs` reads them for an aggregate wider than a
    /// register. `true_signature`.
    pub piece_halves: u8,
    /// pahole's `parameter__finish_piece_decode`: the byte offset of the
    /// one aggregate member the pieces leave in a register, when the DIE
    /// has its own name and type (the member itself is looked up in the
    /// type by the lowering). `true_signature`.
    pub piece_member_offset: Option<u8>,
}

impl ParamEntry {
    /// `loc_reg` for a parameter of `byte_size` bytes (pahole's
    /// `type_byte_size`) on a machine with `pointer_size`-byte registers;
    /// `two_register_aggregates` is pahole's `arch__agg_use_two_regs`.
    pub fn register_for(
        &self,
        byte_size: u64,
        pointer_size: u32,
        two_register_aggregates: bool,
    ) -> Option<u8> {
        if byte_size <= u64::from(pointer_size) || !two_register_aggregates {
            self.register
        } else {
            self.wide_register
        }
    }

    /// Adds what a concrete copy of the parameter says, as
    /// `ftype__recode_dwarf_types` shares it with the abstract origin:
    /// flags accumulate, a known register replaces the one known before.
    pub fn merge(&mut self, concrete: ParamEntry) {
        self.has_location |= concrete.has_location;
        self.has_const_value |= concrete.has_const_value;
        if concrete.register.is_some() {
            self.register = concrete.register;
        }
        if concrete.wide_register.is_some() {
            self.wide_register = concrete.wide_register;
        }
        self.loc_stack |= concrete.loc_stack;
        self.loc_const_value |= concrete.loc_const_value;
        self.piece_halves |= concrete.piece_halves;
        if self.piece_member_offset.is_none() {
            self.piece_member_offset = concrete.piece_member_offset;
        }
    }
}

/// What DWARF says about a parameter's location at function entry; pahole's
/// `optimized_func` rules decide on it whether a signature is trustworthy.
///
/// Every parameter's own facts are reported. pahole only looks at the first
/// [`crate::walk::nr_register_params`] parameters and counts later ones as
/// having no location (so as optimized); that rule is the lowering's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamLocation {
    /// No `DW_AT_location` and no `DW_AT_const_value`: optimized out.
    OptimizedOut,
    /// The value is known to be constant (`DW_AT_const_value`).
    Constant,
    /// At entry, in this DWARF register number, as pahole's
    /// `parameter__reg` finds it: a lone `DW_OP_reg0..31` in the first
    /// location (list entry), or a lone `DW_OP_entry_value(DW_OP_regN)`
    /// in any entry (a trailing `DW_OP_stack_value` ignored). When several
    /// qualify, the ABI register expected for this parameter's index
    /// ([`crate::walk::register_params`]) wins, else the last one found.
    Register(u16),
    /// Has a location, but no register in pahole's sense (stack, pieces,
    /// `DW_OP_regx`, ...): pahole marks such a parameter optimized.
    Other,
    /// Not looked at (type-level prototypes).
    Unknown,
}

/// A type node.
#[derive(Clone, Copy, Debug)]
pub enum Node<'input, 'arena> {
    /// `DW_TAG_base_type`.
    Base {
        /// Type name (`int`, `long unsigned int`, ...).
        name: &'input str,
        /// `DW_AT_byte_size`.
        byte_size: u32,
        /// `DW_AT_encoding`.
        encoding: BaseEncoding,
        /// `DW_AT_bit_size`, when the type is narrower than its storage.
        bit_size: Option<u32>,
    },
    /// `DW_TAG_pointer_type` (also C++ references, which C never has).
    Pointer {
        /// Pointee.
        target: TypeRef,
        /// `btf_type_tag` annotation values on this pointer, in DWARF order.
        type_tags: &'arena [&'input str],
    },
    /// A qualifier.
    Qualified {
        /// Which qualifier.
        qualifier: Qualifier,
        /// Qualified type.
        target: TypeRef,
    },
    /// `DW_TAG_typedef`.
    Typedef {
        /// Typedef name.
        name: &'input str,
        /// Aliased type.
        target: TypeRef,
        /// `btf_decl_tag` annotation values.
        decl_tags: &'arena [&'input str],
    },
    /// `DW_TAG_array_type`.
    Array {
        /// Element type.
        elem: TypeRef,
        /// One entry per `DW_TAG_subrange_type`, outermost first; 0 for a
        /// flexible or unknown bound.
        dims: &'arena [u64],
    },
    /// `DW_TAG_{structure,union,class}_type`.
    Composite {
        /// Struct, union or class.
        kind: CompositeKind,
        /// `None` for anonymous aggregates.
        name: Option<&'input str>,
        /// `DW_AT_byte_size` (0 for declarations).
        byte_size: u32,
        /// `DW_AT_declaration`: only a forward declaration.
        declaration: bool,
        /// Data members in DWARF order (static members and nested type
        /// definitions are not members).
        members: &'arena [Member<'input, 'arena>],
        /// `btf_decl_tag` annotation values on the aggregate itself.
        decl_tags: &'arena [&'input str],
    },
    /// `DW_TAG_enumeration_type`.
    Enum {
        /// `None` for anonymous enums.
        name: Option<&'input str>,
        /// `DW_AT_byte_size`.
        byte_size: u32,
        /// `DW_AT_declaration`.
        declaration: bool,
        /// Signedness of the underlying `DW_AT_type`, when DWARF gives one.
        underlying_signed: Option<bool>,
        /// Enumerators in DWARF order.
        enumerators: &'arena [Enumerator<'input>],
    },
    /// `DW_TAG_subroutine_type` (a function type, reached through pointers).
    Subroutine {
        /// Return type.
        ret: TypeRef,
        /// Parameters.
        params: &'arena [Param<'input, 'arena>],
        /// Ends in `DW_TAG_unspecified_parameters` (`...`).
        varargs: bool,
    },
    /// A DIE that names a type but which BTF cannot express, kept so that
    /// references to it stay valid; lowered as `void` (as pahole does for
    /// `DW_TAG_unspecified_type`).
    Unsupported {
        /// The DWARF tag, for diagnostics; 0 when the referenced DIE is not
        /// a type at all, or lies in a subtree the walker skips (inlined
        /// copies, call sites).
        tag: u16,
    },
}

/// A `DW_TAG_subprogram` (definition or declaration), with attributes
/// inherited through `DW_AT_abstract_origin`/`DW_AT_specification`.
#[derive(Clone, Copy, Debug)]
pub struct Function<'input, 'arena> {
    /// `.debug_info` offset of the DIE, for messages: a function can have
    /// several DIEs in one unit (an abstract instance and its concrete
    /// copies), and a message names the one it is about.
    pub die_offset: u64,
    /// `DW_AT_name` (following `DW_AT_abstract_origin`/`DW_AT_specification`).
    pub name: &'input str,
    /// `DW_AT_linkage_name`, if any.
    pub linkage_name: Option<&'input str>,
    /// Return type.
    pub ret: TypeRef,
    /// Formal parameters.
    pub params: &'arena [Param<'input, 'arena>],
    /// Ends in `...`.
    pub varargs: bool,
    /// `DW_AT_external`.
    pub external: bool,
    /// `DW_AT_declaration`: not a definition.
    pub declaration: bool,
    /// `DW_AT_inline` says declared or actually inlined (an abstract
    /// instance root without code of its own).
    pub inline: bool,
    /// `DW_AT_low_pc` of the out-of-line code (or first range), if any.
    pub low_pc: Option<u64>,
    /// `DW_AT_low_pc` alone (not a range): the address pahole gives the
    /// function (libdw's `dwarf_lowpc`, which reads no `DW_AT_ranges`), so
    /// a function split into ranges (a `.cold` piece) has none.
    pub entry_pc: Option<u64>,
    /// `DW_AT_calling_convention` is `DW_CC_nocall`: callers cannot use
    /// the declared signature.
    pub nocall: bool,
    /// pahole's `function__signature_changed` (which it only asks for
    /// units clang produced): not an inlined abstract instance, and
    /// `DW_CC_nocall` on the DIE itself or, when it has a
    /// `DW_AT_abstract_origin`, on that origin.
    pub signature_changed: bool,
    /// pahole's `reordered_parm`: one of its parameters is at another
    /// position than its `DW_AT_abstract_origin` in the origin's list.
    pub reordered: bool,
    /// `btf_decl_tag` annotation values on the function.
    pub decl_tags: &'arena [&'input str],
}

/// A variable DIE at CU scope (or a static one in a function: pahole does
/// not encode those, but they are reported with `in_function` so the rule
/// lives in one place, the lowering).
#[derive(Clone, Copy, Debug)]
pub struct Variable<'input, 'arena> {
    /// `.debug_info` offset of the DIE, for messages.
    pub die_offset: u64,
    /// `DW_AT_name` (following `DW_AT_specification`).
    pub name: &'input str,
    /// Type.
    pub ty: TypeRef,
    /// `DW_AT_external`.
    pub external: bool,
    /// `DW_AT_declaration`.
    pub declaration: bool,
    /// The address from a `DW_OP_addr` location, if that is the location.
    pub address: Option<u64>,
    /// Declared inside a function body.
    pub in_function: bool,
    /// `btf_decl_tag` annotation values.
    pub decl_tags: &'arena [&'input str],
}

/// Everything one compilation unit contributed.
#[derive(Debug)]
pub struct CuModel<'input, 'arena> {
    /// Offset of the CU header in `.debug_info`, for diagnostics and for
    /// ordering.
    pub offset: u64,
    /// `DW_AT_name` of the CU.
    pub name: Option<&'input str>,
    /// `DW_AT_language`.
    pub language: Language,
    /// `DW_AT_producer` contains "clang" (pahole's `attr_producer_clang`),
    /// which switches pahole's parameter-location rules.
    pub producer_clang: bool,
    /// Type nodes, addressed by [`NodeId`].
    pub nodes: Vec<Node<'input, 'arena>>,
    /// Function definitions and declarations, in DIE order.
    pub functions: Vec<Function<'input, 'arena>>,
    /// Variables, in DIE order.
    pub variables: Vec<Variable<'input, 'arena>>,
    /// Number of DIEs decoded (for `-V` statistics). Subtrees the walker
    /// jumps over through `DW_AT_sibling` (inlined copies, call sites,
    /// automatic variables' children) are not counted: on the Debian
    /// vmlinux this is 13.0 M of its 14.3 M DIEs.
    pub die_count: u64,
    /// `.debug_info` offset of each node's DIE (by [`NodeId`]), for
    /// diagnostics; may be shorter than `nodes` in hand-made models.
    pub node_offsets: Vec<u64>,
    /// Whether some type, member, enumerator, parameter or function name
    /// (base type names aside) is not [`is_c_identifier`],
    /// or an enumerator or typedef has none: the walker notes it while
    /// the name's bytes are in the cache, so that consumers that must
    /// check names (BTF's) look at them only when one is odd.
    pub odd_names: bool,
    /// Whether some DIE of the unit has a `btf_decl_tag` annotation (only
    /// clang writes them): consumers that look for decl tags need to go
    /// through the unit's types and members only when one does.
    pub decl_tags: bool,
}

/// `[A-Za-z_.][A-Za-z0-9_.]*`, at most 128 bytes: the names the kernel's
/// BTF checks take for every kind (`btf_name_valid_identifier`, with
/// pahole's KSYM_NAME_LEN), byte by byte (no byte of a multi-byte UTF-8
/// character is in the set).
#[inline]
pub fn is_c_identifier(name: &str) -> bool {
    const MAX_LEN: usize = MAX_NAME_LEN;
    let bytes = name.as_bytes();
    match bytes.split_first() {
        Some((&first, rest)) => {
            NAME_BYTES[first as usize] & FIRST != 0
                && bytes.len() <= MAX_LEN
                && rest
                    .iter()
                    .all(|&byte| NAME_BYTES[byte as usize] & LATER != 0)
        }
        None => false,
    }
}

/// [`NAME_BYTES`] flag: the byte may start a name.
pub(crate) const FIRST: u8 = 1;
/// [`NAME_BYTES`] flag: the byte may follow the first.
pub(crate) const LATER: u8 = 2;
/// [`is_c_identifier`]'s longest name.
pub(crate) const MAX_NAME_LEN: usize = 128;

/// What each byte may be in a name: `[A-Za-z_.]` first, `[A-Za-z0-9_.]`
/// after.
pub(crate) static NAME_BYTES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        let c = byte as u8;
        if c == b'_' || c == b'.' || c.is_ascii_alphabetic() {
            table[byte] = FIRST | LATER;
        } else if c.is_ascii_digit() {
            table[byte] = LATER;
        }
        byte += 1;
    }
    table
};

impl<'input, 'arena> CuModel<'input, 'arena> {
    /// The node a [`NodeId`] names.
    ///
    /// # Panics
    /// If `id` was not produced for this CU (a bug, not bad input: the walker
    /// only hands out ids of nodes it pushed).
    pub fn node(&self, id: NodeId) -> &Node<'input, 'arena> {
        &self.nodes[id.0 as usize]
    }

    /// `.debug_info` offset of the DIE of node `id`, when known.
    pub fn die_offset(&self, id: NodeId) -> Option<u64> {
        self.node_offsets.get(id.0 as usize).copied()
    }
}
