//! One CU's type nodes to BTF types, with CU-local ids, following pahole's
//! `btf_encoder__encode_tag` rules.
//!
//! Ids: every node that BTF can express gets the next id, in node order
//! (pahole keeps DWARF order too, which keeps output easy to compare by eye).
//! Nodes BTF cannot express (`_Atomic`, unsupported tags) get no id and
//! every reference to them becomes void, as with pahole, whose loader drops
//! them. Types that have no node of their own (TYPE_TAG chains, the array
//! index `int`, type-level DECL_TAGs) follow after the nodes.

use foldhash::fast::FixedState;

use dwarf::model::{BaseEncoding, CompositeKind, CuModel, Node, NodeId, Qualifier, TypeRef};

use super::error::Error;
use super::features::Features;
use crate::types::{
    Array, Composite, DeclTag, Enum, EnumValue, Float, FuncProto, Fwd, Int, IntEncoding, Member,
    Name, Named, Param, Type, TypeId, TypeTag,
};

/// `DW_ATE_complex_float`.
const DW_ATE_COMPLEX_FLOAT: u8 = 0x03;
/// `DW_ATE_imaginary_float`.
const DW_ATE_IMAGINARY_FLOAT: u8 = 0x09;
/// `DW_ATE_decimal_float`.
const DW_ATE_DECIMAL_FLOAT: u8 = 0x0f;

/// Name pahole gives integer types whose size is no BTF INT size (DWARF 5
/// `DW_ATE_unsigned_24` and the like, used only in location expressions).
pub const SANITIZED_INT_NAME: &str = "__SANITIZED_FAKE_INT__";

/// How deep [`TypeMap::byte_size`] follows typedefs and qualifiers before
/// deciding the input is cyclic.
const MAX_TYPE_DEPTH: u32 = 64;

/// The CU's node → BTF id map, and the types lowered so far.
#[derive(Debug)]
pub(crate) struct TypeMap<'m, 'input, 'arena> {
    cu: &'m CuModel<'input, 'arena>,
    /// BTF id of each node, `VOID` for nodes BTF cannot express.
    ids: Vec<TypeId>,
    /// Address size in bytes, for pointer sizes.
    pointer_size: u32,
    /// What `encode_force` left out, one line each, in node order.
    warnings: std::cell::RefCell<Vec<String>>,
    /// For aggregates that lost members to `encode_force`: the index of
    /// the member each lowered one is, by node.
    kept_members: std::cell::RefCell<std::collections::HashMap<u32, Vec<usize>, FixedState>>,
    /// `encode_force`: what cannot be encoded is left out with a warning
    /// (see [`TypeMap::leave_out`]) instead of failing the CU.
    pub(crate) force: bool,
    /// The `float` feature: float base types lower to FLOATs of their own
    /// size, not to INTs (see [`Self::lowered_size`]).
    pub(crate) float: bool,
    /// Whether some base type of the CU is a float: without one no member
    /// is a FLOAT, and [`TypeMap::float_member_problem`] has nothing to
    /// look for (most kernel CUs have none).
    has_float: bool,
}

impl<'m, 'input, 'arena> TypeMap<'m, 'input, 'arena> {
    /// Assigns ids 1.. to the CU's expressible nodes.
    pub(crate) fn new(cu: &'m CuModel<'input, 'arena>, pointer_size: u32) -> Result<Self, Error> {
        let mut ids = Vec::with_capacity(cu.nodes.len());
        let mut next = 1u32;
        let mut has_float = false;
        for node in &cu.nodes {
            has_float |= matches!(
                node,
                Node::Base {
                    encoding: BaseEncoding::Float,
                    ..
                }
            );
            if is_expressible(node) {
                ids.push(TypeId(next));
                next = next.checked_add(1).ok_or(Error::TooManyTypes {
                    count: u64::from(next) + 1,
                })?;
            } else {
                ids.push(TypeId::VOID);
            }
        }
        Ok(TypeMap {
            cu,
            ids,
            pointer_size,
            warnings: std::cell::RefCell::default(),
            kept_members: std::cell::RefCell::default(),
            force: false,
            float: false,
            has_float,
        })
    }

    /// The node whose type has CU-local index `index` (id `index + 1`),
    /// if it is a node's.
    pub(crate) fn node_of(&self, index: usize) -> Option<NodeId> {
        let id = TypeId(index as u32 + 1);
        self.ids
            .iter()
            .position(|&node_id| node_id == id)
            .map(|node| NodeId(node as u32))
    }

    /// Whether a name of the CU's types, members, enumerators, parameters
    /// or functions is one the kernel takes ([`dwarf::model::is_c_identifier`]).
    /// The walker already looked at every such name while its bytes were
    /// in the cache: only a CU it found an odd one in is looked at again.
    #[inline(always)]
    pub(crate) fn name_ok(&self, name: &str) -> bool {
        !self.cu.odd_names || dwarf::model::is_c_identifier(name)
    }

    /// The warnings of what `encode_force` left out, in node order.
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        self.warnings.take()
    }

    /// The error for something of node `node` (described by `what`) that
    /// BTF or the kernel cannot take.
    pub(crate) fn unencodable(&self, node: Option<NodeId>, what: String) -> Error {
        self.unencodable_die(node.and_then(|node| self.cu.die_offset(node)), what)
    }

    /// [`Self::unencodable`] of what the DIE at `.debug_info` offset `die`
    /// describes.
    fn unencodable_die(&self, die: Option<u64>, what: String) -> Error {
        Error::Unencodable {
            cu_offset: self.cu.offset,
            die,
            what,
        }
    }

    /// Something of node `node` cannot be encoded. With `encode_force` it
    /// is left out (`Ok`), with a warning naming it, as pahole leaves out
    /// what it cannot encode; otherwise it is an error.
    pub(crate) fn leave_out(
        &self,
        force: bool,
        node: Option<NodeId>,
        what: String,
    ) -> Result<(), Error> {
        self.left_out(force, self.unencodable(node, what))
    }

    /// [`Self::leave_out`] of what the DIE at `.debug_info` offset `die`
    /// describes (a function, which has no node).
    pub(crate) fn leave_out_die(
        &self,
        force: bool,
        die: Option<u64>,
        what: String,
    ) -> Result<(), Error> {
        self.left_out(force, self.unencodable_die(die, what))
    }

    /// Whether `tag` can be a DECL_TAG's value: btf_decl_tag_check_meta
    /// refuses an empty one ("Invalid value"), which clang writes for
    /// `btf_decl_tag("")`. An empty tag is [`Self::leave_out_die`]: with
    /// `encode_force` the tag alone is left out (`Ok(false)`), naming
    /// `what()`, the thing it annotates, and the DIE `die`.
    pub(crate) fn decl_tag_ok(
        &self,
        tag: &str,
        die: Option<u64>,
        what: impl FnOnce() -> String,
    ) -> Result<bool, Error> {
        if !tag.is_empty() {
            return Ok(true);
        }
        self.leave_out_die(
            self.force,
            die,
            format!(
                "{} has an empty btf_decl_tag (the kernel wants a value)",
                what()
            ),
        )?;
        Ok(false)
    }

    /// `err` with `encode_force` off; otherwise its warning, and `Ok`.
    fn left_out(&self, force: bool, err: Error) -> Result<(), Error> {
        if !force {
            return Err(err);
        }
        self.warnings.borrow_mut().push(format!(
            "CU at .debug_info+{:#x}: {err}; left out (encode_force)",
            self.cu.offset
        ));
        Ok(())
    }

    /// Number of ids handed out to nodes.
    pub(crate) fn node_type_count(&self) -> u32 {
        self.ids.iter().filter(|id| **id != TypeId::VOID).count() as u32
    }

    /// The BTF id a reference lowers to. The error is only built on the
    /// way out: it is called for every member and parameter.
    #[inline]
    pub(crate) fn id(&self, ty: TypeRef) -> Result<TypeId, Error> {
        match ty {
            TypeRef::Void => Ok(TypeId::VOID),
            TypeRef::Node(node) => self
                .ids
                .get(node.0 as usize)
                .copied()
                .ok_or_else(|| self.dangling(node)),
        }
    }

    /// A member's or parameter's name (`None`: anonymous) as the model
    /// keeps it.
    #[inline]
    pub(crate) fn name(&self, name: Option<&'input str>) -> Result<Name<'input>, Error> {
        let text = name.unwrap_or("");
        match Name::new(text) {
            Some(name) => Ok(name),
            None => Err(Error::NameTooLong {
                cu_offset: self.cu.offset,
                len: text.len(),
            }),
        }
    }

    /// Follows `ty` through typedefs and qualifiers to the type underneath,
    /// as the kernel's checks of a member, parameter or array element do
    /// (they skip modifiers). The one walk of such chains: every question
    /// about what a type is underneath reads its [`ChainEnd`].
    pub(crate) fn chain_end(&self, ty: TypeRef) -> Result<ChainEnd<'m, 'input, 'arena>, Error> {
        let mut end = ChainEnd {
            node: None,
            too_deep: false,
            through_void: false,
            through_non_const: false,
        };
        let mut current = ty;
        for _ in 0..MAX_TYPE_DEPTH {
            let TypeRef::Node(id) = current else {
                return Ok(end);
            };
            end.through_void |= self.ids.get(id.0 as usize) == Some(&TypeId::VOID);
            match self.node(id)? {
                Node::Typedef { target, .. } => current = *target,
                Node::Qualified { qualifier, target } => {
                    end.through_non_const |= *qualifier != Qualifier::Const;
                    current = *target;
                }
                node => {
                    end.node = Some(node);
                    return Ok(end);
                }
            }
        }
        end.too_deep = true;
        Ok(end)
    }

    /// Whether `ty` ends at nothing a member or parameter can be (see
    /// [`ChainEnd::is_sizeless`]).
    pub(crate) fn is_sizeless(&self, ty: TypeRef) -> Result<bool, Error> {
        Ok(self.chain_end(ty)?.is_sizeless())
    }

    /// The struct or union a chain ends at, when that is a declaration
    /// this unit never defines: a member of it by value stays a FWD
    /// member, which the kernel refuses (btf_struct_resolve: "Invalid
    /// member"; a function's argument or return type likewise). C needs
    /// the definition in the unit for such a member, and for a function
    /// definition's parameters and return type, so only broken DWARF gets
    /// here; a definition elsewhere in the unit is what dedup will put in
    /// its place, so that one is fine.
    #[inline]
    pub(crate) fn undefined_declaration(&self, end: &ChainEnd<'_, '_, '_>) -> Option<String> {
        match end.node {
            Some(Node::Composite {
                kind,
                name,
                declaration: true,
                ..
            }) => self.undefined_in_unit(*kind, *name),
            _ => None,
        }
    }

    /// The rest of [`Self::undefined_declaration`], for the rare chain
    /// that ends at a declaration (asked of every member and parameter).
    #[cold]
    fn undefined_in_unit(&self, kind: CompositeKind, name: Option<&str>) -> Option<String> {
        let defined = name.is_some()
            && self.cu.nodes.iter().any(|node| {
                matches!(node, Node::Composite { kind: k, name: n, declaration: false, .. }
                        if *k == kind && *n == name)
            });
        (!defined).then(|| format!("{} {}", kind_name(kind), quoted(name.unwrap_or(""))))
    }

    /// Whether a function returning `ty` has a return type the kernel
    /// refuses (btf_func_proto_check: "Invalid return type"): one that
    /// lowers to a type, which then must have a size. What lowers to void
    /// itself (no type, or one BTF cannot express, such as the assembler's
    /// `DW_TAG_unspecified_type`) is a void return.
    /// See [`UNSIZED_RETURN`] for how the refusal reads.
    pub(crate) fn returns_unsized(&self, ty: TypeRef) -> Result<bool, Error> {
        Ok(self.id(ty)? != TypeId::VOID && self.is_sizeless(ty)?)
    }

    fn node(&self, node: NodeId) -> Result<&'m Node<'input, 'arena>, Error> {
        self.cu
            .nodes
            .get(node.0 as usize)
            .ok_or_else(|| self.dangling(node))
    }

    fn dangling(&self, node: NodeId) -> Error {
        Error::DanglingReference {
            cu_offset: self.cu.offset,
            node: node.0,
        }
    }

    /// Size in bytes of a type, as pahole's `tag__size` computes it; 0 for
    /// void, functions and unknown sizes.
    pub(crate) fn byte_size(&self, ty: TypeRef) -> Result<u64, Error> {
        self.chain_byte_size(&self.chain_end(ty)?)
    }

    /// [`Self::byte_size`] of the type a chain ends at.
    #[inline]
    pub(crate) fn chain_byte_size(&self, chain: &ChainEnd<'_, '_, '_>) -> Result<u64, Error> {
        self.size_of(chain, &|byte_size, _| byte_size)
    }

    /// [`Self::byte_size`] as lowered (see [`Self::lowered_size`]): the
    /// size the kernel resolves the type's BTF to.
    pub(crate) fn lowered_byte_size(&self, ty: TypeRef) -> Result<u64, Error> {
        self.lowered_size(&self.chain_end(ty)?)
    }

    /// Size in bytes of the type a chain ends at, as lowered, so as the
    /// kernel's member checks count it: [`Self::byte_size`] but for an
    /// odd-sized integer base type, which is pahole's 4-byte fake int (see
    /// [`int_size`]). A float with the `float` feature is a FLOAT of its
    /// own size (12 bytes for i386's `long double`), as [`lower_base`]
    /// writes it.
    // Always inlined, with `size_of`: it is asked of nearly every member
    // (5.8 M times on Debian 6.1's vmlinux), and as a call it cost 0.7% of
    // all instructions more (cachegrind, `-j1`).
    #[inline(always)]
    fn lowered_size(&self, end: &ChainEnd<'_, '_, '_>) -> Result<u64, Error> {
        let float = self.float;
        self.size_of(end, &|byte_size, encoding| {
            let as_int = int_size(byte_size);
            // Only an odd size tells the two apart.
            if as_int != byte_size && lowers_to_float(encoding, float) {
                byte_size
            } else {
                as_int
            }
        })
    }

    #[inline(always)]
    fn size_of(
        &self,
        end: &ChainEnd<'_, '_, '_>,
        base_size: &impl Fn(u32, BaseEncoding) -> u32,
    ) -> Result<u64, Error> {
        let Some(node) = end.node else {
            return Ok(0);
        };
        Ok(match node {
            Node::Base {
                byte_size,
                encoding,
                ..
            } => u64::from(base_size(*byte_size, *encoding)),
            Node::Composite { byte_size, .. } | Node::Enum { byte_size, .. } => {
                u64::from(*byte_size)
            }
            Node::Pointer { .. } => u64::from(self.pointer_size),
            Node::Array { elem, dims } => self.array_size(*elem, dims, base_size)?,
            Node::Qualified { .. }
            | Node::Typedef { .. }
            | Node::Subroutine { .. }
            | Node::Unsupported { .. } => 0,
        })
    }

    /// [`Self::size_of`] an array: apart, so that the rest, asked of every
    /// member, inlines where it is asked.
    #[inline(never)]
    fn array_size(
        &self,
        elem: TypeRef,
        dims: &[u64],
        base_size: &impl Fn(u32, BaseEncoding) -> u32,
    ) -> Result<u64, Error> {
        let count = dims
            .iter()
            .try_fold(1u64, |acc, dim| acc.checked_mul(*dim))
            .unwrap_or(u64::MAX);
        Ok(self
            .size_of(&self.chain_end(elem)?, base_size)?
            .saturating_mul(count))
    }
}

/// Where a chain of typedefs and qualifiers ends ([`TypeMap::chain_end`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChainEnd<'m, 'input, 'arena> {
    /// The first node that is neither a typedef nor a qualifier; `None` at
    /// void, or when the chain is longer than [`MAX_TYPE_DEPTH`] links
    /// (then `too_deep`: a loop, or broken input).
    node: Option<&'m Node<'input, 'arena>>,
    too_deep: bool,
    /// Whether a node on the way, or at the end, lowers to nothing
    /// (`_Atomic`, an unsupported type), so that what refers to it reads
    /// void.
    through_void: bool,
    /// Whether the chain passes a qualifier other than `const`.
    through_non_const: bool,
}

impl ChainEnd<'_, '_, '_> {
    /// Whether the chain ends at nothing a member or parameter can be:
    /// void, a function type, or a type with no BTF form (the kernel's
    /// btf_modifier_check_member and btf_func_proto_check refuse such a
    /// member or argument). A chain too long to follow is left to the
    /// loop and depth checks.
    pub(crate) fn is_sizeless(&self) -> bool {
        self.through_void
            || (!self.too_deep
                && matches!(
                    self.node,
                    None | Some(Node::Subroutine { .. } | Node::Unsupported { .. })
                ))
    }

    /// Whether a parameter of this type counts as a struct for pahole's
    /// `param__is_struct` (dwarves 1436daf): a struct, seen through
    /// `const` and typedefs only (not a union, nor `volatile`).
    pub(crate) fn is_struct(&self) -> bool {
        !self.through_non_const
            && matches!(
                self.node,
                Some(Node::Composite {
                    kind: CompositeKind::Struct,
                    ..
                })
            )
    }

    /// How the kernel's kind_flag member checks see a member of this type
    /// ([`Storage`]); `float`: the float feature (FLOAT kind) is on.
    fn storage(&self, float: bool) -> Storage {
        let Some(node) = self.node else {
            return Storage::Other(if self.too_deep {
                "a chain of typedefs too long to follow"
            } else {
                "void"
            });
        };
        match node {
            Node::Base {
                encoding,
                byte_size,
                ..
            } if lowers_to_float(*encoding, float) => Storage::Float(*byte_size),
            Node::Base { byte_size, .. } => Storage::Int(int_size(*byte_size) * 8),
            Node::Enum { .. } => Storage::Enum,
            Node::Pointer { .. } => Storage::Other("a pointer"),
            Node::Array { .. } => Storage::Other("an array"),
            Node::Composite { kind, .. } => Storage::Other(match kind {
                CompositeKind::Union => "a union",
                CompositeKind::Struct | CompositeKind::Class => "a struct",
            }),
            // A chain ends at neither (see TypeMap::chain_end).
            Node::Qualified { .. } | Node::Typedef { .. } => Storage::Other("a typedef"),
            Node::Subroutine { .. } | Node::Unsupported { .. } => Storage::Other("a function type"),
        }
    }
}

/// What a member's type is to the kernel's member checks of a struct with
/// `kind_flag` (`btf_*_check_kflag_member`), seen through typedefs and
/// qualifiers as `btf_modifier_check_kflag_member` sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Storage {
    /// An INT of this many bits (as lowered: an odd-sized DWARF base type
    /// is pahole's 32-bit fake int; a float without the float feature is
    /// an INT too).
    Int(u32),
    /// An ENUM or ENUM64: the kernel counts them as 32 bits whatever
    /// their size (`btf_enum_check_kflag_member`).
    Enum,
    /// Anything else (pointer, array, struct, union, FLOAT, declaration):
    /// no bitfield of it (`btf_generic_check_kflag_member`).
    Other(&'static str),
    /// A FLOAT of this many bytes (the float feature is on).
    Float(u32),
}

impl TypeMap<'_, '_, '_> {
    /// What the kernel refuses of `member` in a struct of `struct_size`
    /// bytes that has bitfields, so `kind_flag`, beyond what the checks
    /// of every member look at: a bitfield wider than its type or of a
    /// type that takes none, a member ending past the struct as the
    /// kernel counts it, an offset past the 24 bits a kind_flag member
    /// offset has. Each names the kernel's rule and message.
    fn kflag_member_problem(
        member: &dwarf::model::Member<'_, '_>,
        chain: &ChainEnd<'_, '_, '_>,
        struct_size: u32,
        float: bool,
    ) -> Option<String> {
        let bits = member.bitfield_size;
        let offset = member.bit_offset;
        if offset > u64::from(crate::raw::MAX_BITFIELD_OFFSET) {
            return Some(format!(
                "bit offset {offset} does not fit the 24 bits BTF gives member offsets \
                 in a struct with bitfields"
            ));
        }
        // Bits the kernel takes the member to span (btf_int_check_kflag_member's
        // nr_bits, btf_enum_check_kflag_member's int_bitsize).
        let (rule, spans) = match chain.storage(float) {
            Storage::Int(int_bits) if bits > int_bits => {
                return Some(format!(
                    "a bitfield of {bits} bits of a {int_bits}-bit integer \
                     (btf_int_check_kflag_member: \"Invalid member bitfield_size\")"
                ));
            }
            Storage::Int(int_bits) => (
                "btf_int_check_kflag_member",
                if bits == 0 { int_bits } else { bits },
            ),
            Storage::Enum if bits > 32 => {
                return Some(format!(
                    "an enum bitfield of {bits} bits: the kernel takes at most 32 \
                     (btf_enum_check_kflag_member: \"Invalid member bitfield_size\")"
                ));
            }
            Storage::Enum => (
                "btf_enum_check_kflag_member",
                if bits == 0 { 32 } else { bits },
            ),
            Storage::Other(what) if bits != 0 => {
                return Some(format!(
                    "a bitfield of {what}: the kernel takes bitfields of integers and enums \
                     only (btf_generic_check_kflag_member: \"Invalid member bitfield_size\")"
                ));
            }
            Storage::Float(_) if bits != 0 => {
                return Some(
                    "a bitfield of a floating-point type: the kernel takes bitfields of \
                     integers and enums only (btf_generic_check_kflag_member: \"Invalid \
                     member bitfield_size\")"
                        .to_string(),
                )
            }
            // The plain member checks hold for these.
            Storage::Other(_) | Storage::Float(_) => return None,
        };
        if u64::from(spans) + offset % 8 > 128 {
            return Some(format!(
                "{spans} bits from bit {offset} span more than 128 bits \
                 ({rule}: \"nr_copy_bits exceeds 128\")"
            ));
        }
        let end = offset + u64::from(spans);
        if end.div_ceil(8) > u64::from(struct_size) {
            let counted = if bits == 0 {
                format!(" (an enum member counts as {spans} bits in a struct with bitfields)")
            } else {
                String::new()
            };
            return Some(format!(
                "bits {offset}..{end} end past the {struct_size} bytes{counted} \
                 ({rule}: \"Member exceeds struct_size\")"
            ));
        }
        None
    }

    /// What the kernel refuses of a FLOAT `member` of a struct without
    /// bitfields beyond the checks of every member: btf_float_check_member
    /// wants it aligned to its size, or to a pointer's if smaller.
    #[inline]
    fn float_member_problem(
        &self,
        member: &dwarf::model::Member<'_, '_>,
        chain: &ChainEnd<'_, '_, '_>,
        float: bool,
    ) -> Option<String> {
        if !(float && self.has_float) {
            return None;
        }
        self.misaligned_float(member, chain)
    }

    /// [`Self::float_member_problem`] in a unit with a float type.
    #[inline(never)]
    fn misaligned_float(
        &self,
        member: &dwarf::model::Member<'_, '_>,
        chain: &ChainEnd<'_, '_, '_>,
    ) -> Option<String> {
        let Storage::Float(size) = chain.storage(true) else {
            return None;
        };
        // The kernel's own pointer size (it checks with sizeof(void *)),
        // not the target's: these are the rules of the kernel loading it.
        const KERNEL_POINTER_SIZE: u32 = 8;
        let align_bits = u64::from(size.min(KERNEL_POINTER_SIZE)) * 8;
        if align_bits != 0 && member.bit_offset.is_multiple_of(align_bits) {
            return None;
        }
        Some(format!(
            "a {size}-byte floating-point member at bit {} is not aligned to {} bytes \
             (btf_float_check_member: \"Member is not properly aligned\")",
            member.bit_offset,
            align_bits / 8
        ))
    }
}

/// What a function or function type whose return type
/// [`TypeMap::returns_unsized`] refuses is told.
pub(crate) const UNSIZED_RETURN: &str =
    "its return type is a function type, or void through typedefs or qualifiers";

/// The size of the BTF INT a DWARF base type of `byte_size` bytes lowers
/// to: BTF INTs are 1, 2, 4, 8 or 16 bytes; DWARF 5 also has odd sizes
/// used only by location expressions, which pahole replaces by a 4-byte
/// fake int ([`SANITIZED_INT_NAME`]).
fn int_size(byte_size: u32) -> u32 {
    if byte_size == 0 || !byte_size.is_power_of_two() || byte_size > 16 {
        4
    } else {
        byte_size
    }
}

/// Whether BTF has a kind for the node (pahole's loader drops the rest and
/// references to them read as void).
fn is_expressible(node: &Node<'_, '_>) -> bool {
    !matches!(
        node,
        Node::Unsupported { .. }
            | Node::Qualified {
                qualifier: Qualifier::Atomic,
                ..
            }
    )
}

/// Lowers every node of the CU, then the types without a node of their own
/// (TYPE_TAG chains, the array index type, type-level DECL_TAGs).
///
/// Returns the types, whose local id is index + 1.
pub(crate) fn lower_types<'input>(
    map: &TypeMap<'_, 'input, '_>,
    features: &Features,
) -> Result<Vec<Type<'input>>, Error> {
    let cu = map.cu;
    let mut types: Vec<Type<'input>> = Vec::with_capacity(cu.nodes.len() + cu.nodes.len() / 8);
    // Types appended after the nodes get ids from here on.
    let mut extra: Vec<Type<'input>> = Vec::new();
    let first_extra = map.node_type_count() + 1;
    let next_extra_id = |extra: &Vec<Type<'input>>| TypeId(first_extra + extra.len() as u32);

    let force = features.encode_force;
    // pahole indexes arrays with the CU's `int` (the first base type of
    // that name), or adds one when the CU has none.
    let has_arrays = || {
        cu.nodes
            .iter()
            .any(|node| matches!(node, Node::Array { .. }))
    };
    let int_node = cu
        .nodes
        .iter()
        .position(|node| matches!(node, Node::Base { name: "int", .. }));
    // btf_array_resolve: an index that is no integer is an "Invalid
    // index", and an `int` of float encoding lowers to a FLOAT with the
    // float feature (pahole would index with it all the same). With
    // encode_force the unit gets an `int` of its own, as one without.
    let int_node = match int_node {
        Some(position)
            if matches!(
                cu.nodes.get(position),
                Some(Node::Base { encoding, .. }) if lowers_to_float(*encoding, features.float)
            ) && has_arrays() =>
        {
            map.leave_out(
                force,
                Some(NodeId(position as u32)),
                "the unit's arrays would be indexed by its \"int\", here a float base type: \
                 the kernel wants an integer index (\"Invalid index\", btf_array_resolve)"
                    .to_string(),
            )?;
            None
        }
        other => other,
    };
    let index_type = match int_node {
        Some(position) => map.id(TypeRef::Node(NodeId(position as u32)))?,
        None if has_arrays() => {
            let id = next_extra_id(&extra);
            extra.push(Type::Int(Int {
                name: "int",
                size: 4,
                encoding: IntEncoding(IntEncoding::SIGNED),
                offset: 0,
                bits: 32,
            }));
            id
        }
        None => TypeId::VOID,
    };

    // The composites that may be on a by-value loop (see
    // `check_resolvable`), by index in `types`.
    let mut may_hold_themselves: Vec<usize> = Vec::new();
    for (index, node) in cu.nodes.iter().enumerate() {
        if !is_expressible(node) {
            continue;
        }
        let this = Some(NodeId(index as u32));
        let ty = match node {
            Node::Base {
                name,
                byte_size,
                encoding,
                ..
            } => {
                let ty = lower_base(name, *byte_size, *encoding, features, cu.offset)?;
                if let Type::Float(float) = &ty {
                    // btf_float_check_meta: "Invalid type_size".
                    if !matches!(float.size, 2 | 4 | 8 | 12 | 16) {
                        return Err(map.unencodable(
                            this,
                            format!(
                                "float '{name}' of {} bytes: BTF FLOAT sizes are 2, 4, 8, 12 and 16",
                                float.size
                            ),
                        ));
                    }
                }
                ty
            }
            Node::Pointer { target, type_tags } => {
                let mut pointee = map.id(*target)?;
                if features.type_tag {
                    // DWARF lists a pointer's tags in source order; the tag
                    // written last is the one the pointer points to, and
                    // each tag points to the one before it (pahole and
                    // LLVM agree on this order).
                    for tag in type_tags.iter() {
                        // btf_ref_type_check_meta: a TYPE_TAG has a value
                        // ("Invalid name"); without, the pointer skips it.
                        if tag.is_empty() {
                            map.leave_out(
                                features.encode_force,
                                this,
                                "pointer with an empty btf_type_tag (the kernel wants a value)"
                                    .to_string(),
                            )?;
                            continue;
                        }
                        let id = next_extra_id(&extra);
                        extra.push(Type::TypeTag(TypeTag {
                            name: tag,
                            ty: pointee,
                            attribute: false,
                        }));
                        pointee = id;
                    }
                }
                Type::Ptr(pointee)
            }
            Node::Qualified { qualifier, target } => {
                let target = map.id(*target)?;
                match qualifier {
                    Qualifier::Const => Type::Const(target),
                    Qualifier::Volatile => Type::Volatile(target),
                    Qualifier::Restrict => Type::Restrict(target),
                    // Filtered out by is_expressible.
                    Qualifier::Atomic => continue,
                }
            }
            Node::Typedef { name, target, .. } => {
                // btf_typedef_check_meta wants a C identifier.
                if !map.name_ok(name) {
                    return Err(map.unencodable(
                        this,
                        format!("typedef {}: the kernel wants a C identifier", quoted(name)),
                    ));
                }
                Type::Typedef(Named {
                    name,
                    ty: map.id(*target)?,
                })
            }
            // btf_array_resolve: "Invalid elem" for an element of void or
            // function type.
            Node::Array { elem, .. } if map.is_sizeless(*elem)? => {
                return Err(map.unencodable(
                    this,
                    "array whose element is void or a function type".to_string(),
                ));
            }
            Node::Array { elem, dims } => Type::Array(Array {
                elem: map.id(*elem)?,
                index: index_type,
                // pahole multiplies the dimensions in 32 bits, which wraps
                // past 2^32 - 1 elements: BTF cannot count that many.
                nelems: {
                    let product = dims.iter().try_fold(1u128, |acc, dim| {
                        acc.checked_mul(u128::from(*dim)).map(|p| p.min(1 << 64))
                    });
                    match product.and_then(|p| u32::try_from(p).ok()) {
                        Some(nelems) => nelems,
                        None => {
                            return Err(map.unencodable(
                                this,
                                format!(
                                    "array of dimensions {dims:?}: more than 2^32 - 1 elements \
                                     (BTF counts them in 32 bits)"
                                ),
                            ))
                        }
                    }
                },
            }),
            Node::Composite {
                kind,
                name,
                byte_size,
                declaration,
                members,
                ..
            } => {
                let name = name.unwrap_or("");
                if *declaration {
                    // btf_fwd_check_meta wants a C identifier (an
                    // anonymous declaration too: found by the fuzzer).
                    if name.is_empty() || !map.name_ok(name) {
                        return Err(map.unencodable(
                            this,
                            format!(
                                "declaration of {} {}: the kernel wants a C identifier",
                                kind_name(*kind),
                                quoted(name)
                            ),
                        ));
                    }
                    Type::Fwd(Fwd {
                        name,
                        union: *kind == CompositeKind::Union,
                    })
                } else {
                    let lowered =
                        lower_composite(map, this, features, *kind, name, *byte_size, members)?;
                    if lowered.may_hold_itself {
                        may_hold_themselves.push(types.len());
                    }
                    lowered.ty
                }
            }
            Node::Enum {
                name,
                byte_size,
                underlying_signed,
                enumerators,
                ..
            } => lower_enum(
                map,
                this,
                name.unwrap_or(""),
                *byte_size,
                *underlying_signed,
                enumerators,
                features,
            )?,
            Node::Subroutine {
                ret,
                params,
                varargs,
            } => {
                // btf_func_proto_check: a return type other than void
                // itself has a size ("Invalid return type").
                if map.returns_unsized(*ret)? {
                    return Err(map.unencodable(this, format!("function type: {UNSIZED_RETURN}")));
                }
                let mut lowered = Vec::with_capacity(params.len() + usize::from(*varargs));
                for (number, param) in params.iter().enumerate() {
                    // btf_func_proto_check: "Invalid arg#N" (a parameter
                    // cannot be left out: the prototype would change).
                    if map.is_sizeless(param.ty)? {
                        return Err(map.unencodable(
                            this,
                            format!(
                                "function type: parameter {} is void or a function type",
                                number + 1
                            ),
                        ));
                    }
                    let mut name = map.name(param.name)?;
                    // btf_func_proto_check: a name, if any, is a C
                    // identifier ("Invalid arg#N").
                    if !name.is_empty() && !map.name_ok(&name) {
                        map.leave_out(
                            force,
                            this,
                            format!(
                                "function type: parameter {} is named {}, not a C identifier",
                                number + 1,
                                quoted(&name)
                            ),
                        )?;
                        name = Name::EMPTY;
                    }
                    lowered.push(Param {
                        name,
                        ty: map.id(param.ty)?,
                    });
                }
                if lowered.len() + usize::from(*varargs) > MAX_VLEN {
                    return Err(map.unencodable(
                        this,
                        format!(
                            "function type with {} parameters: BTF holds at most {MAX_VLEN}",
                            lowered.len() + usize::from(*varargs)
                        ),
                    ));
                }
                if *varargs {
                    lowered.push(Param {
                        name: Name::EMPTY,
                        ty: TypeId::VOID,
                    });
                }
                Type::FuncProto(FuncProto {
                    ret: map.id(*ret)?,
                    params: lowered.into_boxed_slice(),
                })
            }
            Node::Unsupported { .. } => continue,
        };
        types.push(ty);
    }

    if features.decl_tag {
        for (index, node) in cu.nodes.iter().enumerate() {
            let (own_tags, members): (&[&str], &[dwarf::model::Member<'_, '_>]) = match node {
                Node::Composite {
                    decl_tags,
                    members,
                    declaration: false,
                    ..
                } => (decl_tags, members),
                Node::Typedef { decl_tags, .. } => (decl_tags, &[]),
                _ => continue,
            };
            // GCC emits no tags at all: most of the time there is nothing
            // to look up.
            if own_tags.is_empty() && members.iter().all(|member| member.decl_tags.is_empty()) {
                continue;
            }
            let tagged = map.id(TypeRef::Node(NodeId(index as u32)))?;
            // pahole emits member tags before the aggregate's own.
            let die = cu.die_offset(NodeId(index as u32));
            let kept = map.kept_members.borrow();
            let kept = kept.get(&(index as u32));
            for (member_index, member) in members.iter().enumerate() {
                // A member encode_force left out takes its tags along.
                let member_index = match kept {
                    None => member_index,
                    Some(kept) => match kept.iter().position(|&i| i == member_index) {
                        Some(position) => position,
                        None => continue,
                    },
                };
                for tag in member.decl_tags.iter() {
                    if !map.decl_tag_ok(tag, die, || format!("member {member_index}"))? {
                        continue;
                    }
                    extra.push(Type::DeclTag(DeclTag {
                        name: tag,
                        ty: tagged,
                        component_idx: member_index as i32,
                        attribute: false,
                    }));
                }
            }
            for tag in own_tags.iter() {
                if !map.decl_tag_ok(tag, die, || "the type".to_string())? {
                    continue;
                }
                extra.push(Type::DeclTag(DeclTag {
                    name: tag,
                    ty: tagged,
                    component_idx: -1,
                    attribute: false,
                }));
            }
        }
    }

    types.append(&mut extra);
    check_resolvable(map, &types, &may_hold_themselves)?;
    // The table lives until every CU is lowered: slack from the capacity
    // guess above would add up to tens of MB on a vmlinux.
    types.shrink_to_fit();
    Ok(types)
}

/// Whether a base type of `encoding` lowers to a FLOAT: a float, with the
/// `float` feature on (`float`); without it, floats are INTs (see
/// [`lower_base`]). Every question about a base type's BTF kind asks this.
fn lowers_to_float(encoding: BaseEncoding, float: bool) -> bool {
    float && encoding == BaseEncoding::Float
}

/// A base type: INT (with pahole's encoding bits and size sanitizing) or
/// FLOAT.
fn lower_base<'input>(
    name: &'input str,
    byte_size: u32,
    encoding: BaseEncoding,
    features: &Features,
    cu_offset: u64,
) -> Result<Type<'input>, Error> {
    let encoding_bits = match encoding {
        // pahole's is_signed covers both; it never sets BTF_INT_CHAR.
        BaseEncoding::Signed | BaseEncoding::SignedChar => IntEncoding::SIGNED,
        BaseEncoding::Boolean => IntEncoding::BOOL,
        _ if lowers_to_float(encoding, features.float) => {
            return Ok(Type::Float(Float {
                name,
                size: byte_size,
            }))
        }
        BaseEncoding::Other(
            DW_ATE_COMPLEX_FLOAT | DW_ATE_IMAGINARY_FLOAT | DW_ATE_DECIMAL_FLOAT,
        ) if features.float => {
            return Err(Error::UnsupportedFloat {
                cu_offset,
                name: name.to_string(),
            })
        }
        // Without the float feature floats stay INTs with no encoding, as
        // BTF had no FLOAT kind before.
        BaseEncoding::Unsigned
        | BaseEncoding::UnsignedChar
        | BaseEncoding::Float
        | BaseEncoding::Other(_) => 0,
    };
    let size = int_size(byte_size);
    let name = if size == byte_size {
        name
    } else {
        SANITIZED_INT_NAME
    };
    Ok(Type::Int(Int {
        name,
        size,
        encoding: IntEncoding(encoding_bits),
        offset: 0,
        bits: (size * 8) as u8,
    }))
}

/// A struct or union as lowered, and whether it may be on a loop of
/// types holding each other by value (see [`check_resolvable`]).
struct LoweredComposite<'input> {
    ty: Type<'input>,
    may_hold_itself: bool,
}

#[allow(clippy::too_many_arguments)]
fn lower_composite<'input>(
    map: &TypeMap<'_, 'input, '_>,
    this: Option<NodeId>,
    features: &Features,
    kind: CompositeKind,
    mut name: &'input str,
    byte_size: u32,
    members: &[dwarf::model::Member<'input, '_>],
) -> Result<LoweredComposite<'input>, Error> {
    let (force, float) = (features.encode_force, features.float);
    let is_union = kind == CompositeKind::Union;
    let describe = |name: &str| format!("{} {}", kind_name(kind), quoted(name));
    // btf_struct_check_meta: a name, if any, is a C identifier.
    if !name.is_empty() && !map.name_ok(name) {
        map.leave_out(
            force,
            this,
            format!("{}: the kernel wants a C identifier", describe(name)),
        )?;
        name = "";
    }
    let mut lowered = Vec::with_capacity(members.len());
    let mut kind_flag = false;
    let mut may_hold_itself = false;
    // Which member each lowered one is, once one was left out.
    let mut kept: Option<Vec<usize>> = None;
    let mut last_offset = 0u64;
    // A struct with bitfields gets kind_flag, and the kernel checks all
    // its members as such (btf_*_check_kflag_member).
    let has_bitfields = members.iter().any(|m| m.bitfield_size != 0);
    for (index, member) in members.iter().enumerate() {
        let ty = map.id(member.ty)?;
        let chain = map.chain_end(member.ty)?;
        let mut member_name = map.name(member.name)?;
        // What BTF cannot hold or the kernel's btf_struct_check_meta and
        // member checks refuse; with encode_force the member is left out.
        let bit_offset = member.bit_offset;
        // The member's size, once the checks below read it (those of a
        // member that is no bitfield and has no problem do).
        let mut size = None;
        // btf_struct_resolve: a member of type void (a member DIE without
        // DW_AT_type) is an "Invalid member".
        let problem = if ty == TypeId::VOID {
            Some(match member.ty {
                TypeRef::Void => "it has no type (no DW_AT_type: void)".to_string(),
                TypeRef::Node(_) => "its type (_Atomic or unsupported) has no BTF form".to_string(),
            })
        } else if chain.is_sizeless() {
            Some("its type is void or a function type (through typedefs or qualifiers)".to_string())
        } else if let Some(declared) = map.undefined_declaration(&chain) {
            Some(format!(
                "its type, {declared}, is only declared in this unit: the kernel takes no \
                 member of an incomplete type"
            ))
        } else if member.bitfield_size == 0 && bit_offset % 8 != 0 {
            // btf_*_check_member: "Member is not byte aligned".
            Some(format!(
                "bit offset {bit_offset} is not on a byte, and it is no bitfield"
            ))
        } else if bit_offset > u64::from(u32::MAX) {
            Some(format!(
                "bit offset {bit_offset} does not fit BTF's 32 bits"
            ))
        } else if is_union && bit_offset != 0 {
            Some(format!("a union member at bit {bit_offset}, not 0"))
        } else if bit_offset < last_offset {
            Some(format!(
                "bit offset {bit_offset} is before the previous member's ({last_offset})"
            ))
        } else if bit_offset.div_ceil(8) > u64::from(byte_size) {
            Some(format!(
                "bit offset {bit_offset} is past the end of the {byte_size} bytes"
            ))
        } else if member.bitfield_size == 0
            && (bit_offset / 8).saturating_add(*size.insert(map.lowered_size(&chain)?))
                > u64::from(byte_size)
        {
            Some(format!(
                "at byte {} with {} bytes, it ends past the {byte_size} bytes",
                bit_offset / 8,
                map.lowered_size(&chain)?
            ))
        } else if member.bitfield_size > 255 {
            Some(format!("a bitfield of {} bits", member.bitfield_size))
        } else if has_bitfields {
            TypeMap::kflag_member_problem(member, &chain, byte_size, float)
        } else {
            map.float_member_problem(member, &chain, float)
        };
        if let Some(problem) = problem {
            map.leave_out(
                force,
                this,
                format!(
                    "{}: {problem}",
                    describe_member(&describe(name), index, member)
                ),
            )?;
            kept.get_or_insert_with(|| (0..index).collect());
            continue;
        }
        if let Some(kept) = &mut kept {
            kept.push(index);
        }
        if !may_hold_itself {
            may_hold_itself = match size {
                // It fits (checked above), so if it is on a by-value loop
                // it is as large as the composite and at its start, or of
                // no size (see check_resolvable).
                Some(size) => size == 0 || (bit_offset == 0 && size == u64::from(byte_size)),
                // A bitfield, whose fit is not checked: any that is not an
                // integer may be on a loop.
                None => !matches!(chain.node, Some(Node::Base { .. } | Node::Enum { .. })),
            };
        }
        // A name that is no C identifier: with encode_force the member
        // stays, anonymous (the kernel takes anonymous members).
        if !member_name.is_empty() && !map.name_ok(&member_name) {
            map.leave_out(
                force,
                this,
                format!(
                    "{}: its name is not a C identifier",
                    describe_member(&describe(name), index, member)
                ),
            )?;
            member_name = Name::EMPTY;
        }
        last_offset = bit_offset;
        let bitfield_size = member.bitfield_size as u8;
        kind_flag |= bitfield_size != 0;
        lowered.push(Member {
            name: member_name,
            ty,
            bit_offset: bit_offset as u32,
            bitfield_size,
        });
    }
    if lowered.len() > MAX_VLEN {
        map.leave_out(
            force,
            this,
            format!(
                "{} has {} members, BTF holds at most {MAX_VLEN}: the rest",
                describe(name),
                lowered.len()
            ),
        )?;
        lowered.truncate(MAX_VLEN);
        kept.get_or_insert_with(|| (0..MAX_VLEN).collect())
            .truncate(MAX_VLEN);
    }
    if let (Some(kept), Some(node)) = (kept, this) {
        map.kept_members.borrow_mut().insert(node.0, kept);
    }
    let composite = Composite {
        name,
        size: byte_size,
        members: lowered.into_boxed_slice(),
        kind_flag,
    };
    let ty = match kind {
        CompositeKind::Union => Type::Union(composite),
        CompositeKind::Struct | CompositeKind::Class => Type::Struct(composite),
    };
    Ok(LoweredComposite {
        ty,
        may_hold_itself,
    })
}

/// How a left-out member is named: after its aggregate (`composite`),
/// by position and name. Built only when one is left out.
#[cold]
fn describe_member(composite: &str, index: usize, member: &dwarf::model::Member<'_, '_>) -> String {
    format!(
        "{composite}: member {index} ({})",
        quoted(member.name.unwrap_or(""))
    )
}

/// The kernel's `MAX_RESOLVE_DEPTH`: how long a chain of types still to
/// resolve (each one referring to a later one) `btf_resolve` follows.
const MAX_RESOLVE_DEPTH: u32 = 32;

/// The type a PTR, TYPEDEF, qualifier, TYPE_TAG or ARRAY refers to.
fn reference_target(ty: &Type<'_>) -> Option<TypeId> {
    match ty {
        Type::Ptr(t) | Type::Const(t) | Type::Volatile(t) | Type::Restrict(t) => Some(*t),
        Type::Typedef(named) => Some(named.ty),
        Type::TypeTag(named) => Some(named.ty),
        Type::Array(array) => Some(array.elem),
        _ => None,
    }
}

/// What the kernel's `btf_resolve` refuses in a CU's types, found before
/// they are written: a loop of references ("Loop detected": a typedef
/// cycle, or a struct that holds itself by value), and a chain of more
/// than [`MAX_RESOLVE_DEPTH`] references each to a later id ("Exceeded
/// max resolving depth"; a 40-level pointer as gcc orders it). The depth
/// is counted on the CU's ids, whose order the output keeps. Linear in
/// the types; nothing is allocated per type but a few small tables.
///
/// `may_hold_themselves` lists the structs and unions (by index) that may
/// be on a by-value loop; the others' members are not followed. Each
/// member lowering kept fits in its composite (offset plus size at most
/// the composite's size), so along a loop of composites each holding the
/// next by value, sizes never grow and thus are all equal: every member
/// on the loop is as large as its composite and at its start, or has no
/// size (a zero-length array). Most composites have no such member:
/// following every member of every struct and union cost 330 M of the
/// 13.3 G instructions of Debian 6.1's vmlinux (cachegrind, `-j1`).
fn check_resolvable(
    map: &TypeMap<'_, '_, '_>,
    types: &[Type<'_>],
    may_hold_themselves: &[usize],
) -> Result<(), Error> {
    // Forward chains: from the last id down, each reference type's depth
    // is one more than its target's when the target comes later.
    let mut depth = vec![0u32; types.len()];
    for index in (0..types.len()).rev() {
        let Some(target) = types.get(index).and_then(reference_target) else {
            continue;
        };
        depth[index] = match local_index(types, target) {
            Some(next) if next > index => depth[next].saturating_add(1),
            _ => 1,
        };
        if depth[index] > MAX_RESOLVE_DEPTH {
            return Err(map.unencodable(
                map.node_of(index),
                format!(
                    "a chain of more than {MAX_RESOLVE_DEPTH} references, each to a type written \
                     after it: past the kernel's resolve depth (MAX_RESOLVE_DEPTH)"
                ),
            ));
        }
    }
    if !has_loop(types, may_hold_themselves) {
        return Ok(());
    }
    match first_loop(types) {
        Some(on_loop) => Err(map.unencodable(
            map.node_of(on_loop),
            "the type refers back to itself (a typedef or qualifier loop, or a struct \
             or union holding itself by value): the kernel's \"Loop detected\""
                .to_string(),
        )),
        None => Ok(()),
    }
}

/// The index of a type in `types`, if `id` is one of them.
fn local_index(types: &[Type<'_>], id: TypeId) -> Option<usize> {
    let index = (id.0 as usize).checked_sub(1)?;
    (index < types.len()).then_some(index)
}

/// Where a member of type `id` leads by value (through typedefs,
/// qualifiers and arrays, not pointers): its struct or union, if any.
fn held_by_value(types: &[Type<'_>], mut id: TypeId) -> Option<usize> {
    for _ in 0..=types.len() {
        let index = local_index(types, id)?;
        match &types[index] {
            Type::Struct(_) | Type::Union(_) => return Some(index),
            Type::Ptr(_) => return None,
            other => id = reference_target(other)?,
        }
    }
    None
}

/// The reference type a reference type refers to, if that is one too.
fn next_reference(types: &[Type<'_>], index: usize) -> Option<usize> {
    let next = local_index(types, reference_target(&types[index])?)?;
    reference_target(&types[next]).map(|_| next)
}

/// Whether [`first_loop`] would find a loop, found in a quicker way: the
/// reference types, each with one way out, are walked once each; of the
/// composites only those in `may_hold_themselves` are searched (see
/// [`check_resolvable`]), and composites lead only to composites.
fn has_loop(types: &[Type<'_>], may_hold_themselves: &[usize]) -> bool {
    // Each walk along a chain marks what it passes with its number: it
    // ends at a type an earlier walk passed, or loops back to its own.
    let mut walk_of = vec![0u32; types.len()];
    let mut walk = 0u32;
    for start in 0..types.len() {
        if walk_of[start] != 0 || reference_target(&types[start]).is_none() {
            continue;
        }
        walk += 1;
        let mut at = start;
        walk_of[at] = walk;
        while let Some(next) = next_reference(types, at) {
            if walk_of[next] == walk {
                return true;
            }
            if walk_of[next] != 0 {
                break;
            }
            walk_of[next] = walk;
            at = next;
        }
    }
    // Composites holding each other by value, among those listed (any
    // other is a dead end).
    let mut state = vec![DONE; types.len()];
    for &index in may_hold_themselves {
        if let Some(slot) = state.get_mut(index) {
            *slot = UNSEEN;
        }
    }
    search_for_loop(types, may_hold_themselves.iter().copied(), &mut state).is_some()
}

/// A type on the first loop found following each reference type's chain
/// (one way out each) and each composite's members held by value, in
/// index order: the type a loop's error names.
fn first_loop(types: &[Type<'_>]) -> Option<usize> {
    let mut state = vec![UNSEEN; types.len()];
    search_for_loop(types, 0..types.len(), &mut state)
}

/// The states of [`search_for_loop`]: a type not reached yet, one on the
/// current path, and one whose successors are all done (or a dead end).
const UNSEEN: u8 = 0;
const ON_PATH: u8 = 1;
const DONE: u8 = 2;

/// Depth-first from each of `starts` in turn, without recursion, over
/// what each type leads to (a composite to the composites it holds by
/// value, a reference type to the reference type it refers to), marking
/// types in `state`: the first type found on the current path again,
/// which is on a loop.
fn search_for_loop(
    types: &[Type<'_>],
    starts: impl Iterator<Item = usize>,
    state: &mut [u8],
) -> Option<usize> {
    let successors = |index: usize, out: &mut Vec<usize>| match &types[index] {
        Type::Struct(c) | Type::Union(c) => {
            out.extend(c.members.iter().filter_map(|m| held_by_value(types, m.ty)));
        }
        _ => out.extend(next_reference(types, index)),
    };
    // `path` holds each open type and where its successors start in
    // `pending`.
    let mut path: Vec<(usize, usize)> = Vec::new();
    let mut pending: Vec<usize> = Vec::new();
    for start in starts {
        if state.get(start) != Some(&UNSEEN) {
            continue;
        }
        state[start] = ON_PATH;
        path.push((start, pending.len()));
        successors(start, &mut pending);
        while let Some(&(index, first)) = path.last() {
            if pending.len() == first {
                state[index] = DONE;
                path.pop();
                continue;
            }
            let Some(child) = pending.pop() else { break };
            match state[child] {
                ON_PATH => return Some(child),
                UNSEEN => {
                    state[child] = ON_PATH;
                    path.push((child, pending.len()));
                    successors(child, &mut pending);
                }
                _ => {}
            }
        }
    }
    None
}

/// Most members, enumerators or parameters a BTF type holds (its 16-bit
/// `vlen`).
const MAX_VLEN: usize = 0xffff;

/// `struct`, `union` or `class`, for messages.
fn kind_name(kind: CompositeKind) -> &'static str {
    match kind {
        CompositeKind::Struct => "struct",
        CompositeKind::Union => "union",
        CompositeKind::Class => "class",
    }
}

/// A name for messages: quoted, escaped, `(anon)` when empty.
fn quoted(name: &str) -> String {
    if name.is_empty() {
        "(anon)".to_string()
    } else {
        format!("{name:?}")
    }
}

/// ENUM or ENUM64. pahole: 4 bytes or less, or `enum64` off → ENUM, whose
/// kind_flag (signed) libbpf sets when a value is negative; wider → ENUM64,
/// signed as the enum's type is. Without `enum64` the values are cut to
/// their low 32 bits and read as unsigned.
fn lower_enum<'input>(
    map: &TypeMap<'_, 'input, '_>,
    this: Option<NodeId>,
    mut name: &'input str,
    byte_size: u32,
    underlying_signed: Option<bool>,
    all_enumerators: &[dwarf::model::Enumerator<'input>],
    features: &Features,
) -> Result<Type<'input>, Error> {
    let force = features.encode_force;
    // A forward-declared enum has no DW_AT_byte_size; pahole gives it the
    // size of an int (pahole 1.24 writes `ENUM 'e' size=4 vlen=0`).
    let byte_size = if byte_size == 0 { 4 } else { byte_size };
    // btf_enum_check_meta: "Unexpected size", and "Invalid name" for the
    // enum's name (optional) and each enumerator's (required).
    if !matches!(byte_size, 1 | 2 | 4 | 8) {
        return Err(map.unencodable(
            this,
            format!(
                "enum {} of {byte_size} bytes: BTF enums have 1, 2, 4 or 8",
                quoted(name)
            ),
        ));
    }
    let original_name = name;
    if !name.is_empty() && !map.name_ok(name) {
        map.leave_out(
            force,
            this,
            format!("enum {}: the kernel wants a C identifier", quoted(name)),
        )?;
        name = "";
    }
    let mut valid = Vec::new();
    let enumerators: &[dwarf::model::Enumerator<'input>] =
        if all_enumerators.iter().all(|e| map.name_ok(e.name)) {
            all_enumerators
        } else {
            for e in all_enumerators {
                if map.name_ok(e.name) {
                    valid.push(*e);
                } else {
                    map.leave_out(
                        force,
                        this,
                        format!(
                            "enum {}: enumerator {} is no C identifier",
                            quoted(name),
                            quoted(e.name)
                        ),
                    )?;
                }
            }
            &valid
        };
    if enumerators.len() > MAX_VLEN {
        map.leave_out(
            force,
            this,
            format!(
                "enum {} has {} enumerators, BTF holds at most {MAX_VLEN}: the rest",
                quoted(name),
                enumerators.len()
            ),
        )?;
    }
    let enumerators = &enumerators[..enumerators.len().min(MAX_VLEN)];
    // libbpf's dedup takes an ENUM without values for a declaration, and
    // one without a name too for a declaration of every anonymous enum,
    // whatever their sizes (btf_compat_enum): a member of this one could
    // end up with an 8-byte anonymous enum's id and end past its struct.
    // C has no such enum (an empty one is a named declaration); crafted
    // DWARF, or the leave-outs above, can make one, and nothing can be
    // left out in its place.
    if name.is_empty() && enumerators.is_empty() {
        let what = if original_name.is_empty() && all_enumerators.is_empty() {
            "enum without a name or an enumerator".to_string()
        } else {
            format!(
                "enum {} is left without a name or an enumerator the kernel takes",
                quoted(original_name)
            )
        };
        return Err(map.unencodable(
            this,
            format!(
                "{what}: libbpf's dedup would take it for a declaration of any \
                 anonymous enum, whatever the size"
            ),
        ));
    }
    let any_negative = enumerators.iter().any(|e| e.negative);
    if byte_size <= 4 || !features.enum64 {
        let signed = features.enum64 && any_negative;
        // The model keeps ENUM values as the i64 libbpf was given: the low
        // 32 bits, sign-extended when the enum is signed.
        let widen = |value: u64| match signed {
            true => i64::from(value as u32 as i32) as u64,
            false => u64::from(value as u32),
        };
        let values = enumerators
            .iter()
            .map(|e| EnumValue {
                name: e.name,
                value: widen(e.value),
            })
            .collect();
        Ok(Type::Enum(Enum {
            name,
            size: byte_size,
            signed,
            values,
        }))
    } else {
        let values = enumerators
            .iter()
            .map(|e| EnumValue {
                name: e.name,
                value: e.value,
            })
            .collect();
        let signed = underlying_signed.unwrap_or(any_negative);
        Ok(Type::Enum64(Enum {
            name,
            size: byte_size,
            signed,
            values,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::test_support::*;
    use crate::test_types::test_name;
    use dwarf::model::{Enumerator, Member as DwMember, Param as DwParam, ParamLocation};

    fn lower(cu: &CuModel<'static, '_>, features: &Features) -> Vec<Type<'static>> {
        let map = TypeMap::new(cu, 8).unwrap();
        lower_types(&map, features).unwrap()
    }

    #[test]
    fn base_types_follow_pahole_encoding() {
        // Facts from pahole's add_base_type: signed (incl. signed char and
        // plain char) → SIGNED, _Bool → BOOL, never CHAR; floats are INT
        // without `float`.
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            base("char", 1, BaseEncoding::SignedChar),
            base("unsigned char", 1, BaseEncoding::UnsignedChar),
            base("_Bool", 1, BaseEncoding::Boolean),
            base("double", 8, BaseEncoding::Float),
            base("DW_ATE_unsigned_24", 3, BaseEncoding::Unsigned),
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(types[0], int("int", 4, IntEncoding::SIGNED));
        assert_eq!(types[1], int("char", 1, IntEncoding::SIGNED));
        assert_eq!(types[2], int("unsigned char", 1, 0));
        assert_eq!(types[3], int("_Bool", 1, IntEncoding::BOOL));
        assert_eq!(types[4], int("double", 8, 0));
        assert_eq!(types[5], int(SANITIZED_INT_NAME, 4, 0));

        let floats = Features {
            float: true,
            ..Features::default()
        };
        let types = lower(&cu, &floats);
        assert_eq!(
            types[4],
            Type::Float(Float {
                name: "double",
                size: 8
            })
        );
    }

    #[test]
    fn complex_float_is_an_error_with_float_feature() {
        let cu = cu_with(vec![base(
            "complex double",
            16,
            BaseEncoding::Other(DW_ATE_COMPLEX_FLOAT),
        )]);
        let features = Features {
            float: true,
            ..Features::default()
        };
        let map = TypeMap::new(&cu, 8).unwrap();
        assert!(matches!(
            lower_types(&map, &features),
            Err(Error::UnsupportedFloat { .. })
        ));
        // Without it, an INT as wide as the type.
        assert_eq!(
            lower(&cu, &Features::default())[0],
            int("complex double", 16, 0)
        );
    }

    #[test]
    fn arrays_flatten_and_use_int_index() {
        let arena = bumpalo::Bump::new();
        let cu = cu_with(vec![
            base("char", 1, BaseEncoding::SignedChar),
            Node::Array {
                elem: node(0),
                dims: arena.alloc_slice_copy(&[3, 4]),
            },
            Node::Array {
                elem: node(0),
                dims: arena.alloc_slice_copy(&[0]),
            },
        ]);
        let types = lower(&cu, &Features::default());
        // No `int` in the CU: one is added after the nodes (id 4).
        assert_eq!(types[3], int("int", 4, IntEncoding::SIGNED));
        assert_eq!(
            types[1],
            Type::Array(Array {
                elem: TypeId(1),
                index: TypeId(4),
                nelems: 12
            })
        );
        assert_eq!(
            types[2],
            Type::Array(Array {
                elem: TypeId(1),
                index: TypeId(4),
                nelems: 0
            })
        );

        let cu = cu_with(vec![
            Node::Array {
                elem: node(1),
                dims: arena.alloc_slice_copy(&[5]),
            },
            base("int", 4, BaseEncoding::Signed),
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(types.len(), 2);
        assert_eq!(
            types[0],
            Type::Array(Array {
                elem: TypeId(2),
                index: TypeId(2),
                nelems: 5
            })
        );
    }

    #[test]
    fn bitfields_set_kind_flag_and_declarations_are_fwd() {
        let arena = bumpalo::Bump::new();
        let members = arena.alloc_slice_copy(&[
            DwMember {
                name: Some("a"),
                ty: node(0),
                bit_offset: 0,
                bitfield_size: 3,
                decl_tags: &[],
            },
            DwMember {
                name: None,
                ty: node(0),
                bit_offset: 32,
                bitfield_size: 0,
                decl_tags: &[],
            },
        ]);
        let cu = cu_with(vec![
            base("unsigned int", 4, BaseEncoding::Unsigned),
            composite(CompositeKind::Struct, Some("s"), 8, false, members),
            composite(CompositeKind::Union, Some("u"), 0, true, &[]),
            // A union's members are all at bit 0 (btf_struct_check_meta).
            composite(
                CompositeKind::Union,
                Some("v"),
                4,
                false,
                arena.alloc_slice_copy(&[DwMember {
                    bit_offset: 0,
                    ..members[1]
                }]),
            ),
        ]);
        let types = lower(&cu, &Features::default());
        let Type::Struct(s) = &types[1] else {
            panic!("{:?}", types[1])
        };
        assert!(s.kind_flag);
        assert_eq!(
            s.members[0],
            Member {
                name: test_name("a"),
                ty: TypeId(1),
                bit_offset: 0,
                bitfield_size: 3
            }
        );
        assert_eq!(s.members[1].name, "");
        assert_eq!(
            types[2],
            Type::Fwd(Fwd {
                name: "u",
                union: true
            })
        );
        let Type::Union(u) = &types[3] else { panic!() };
        assert!(!u.kind_flag);
    }

    #[test]
    fn enums_signedness_and_enum64() {
        let arena = bumpalo::Bump::new();
        let neg = arena.alloc_slice_copy(&[
            Enumerator {
                name: "A",
                value: u64::MAX,
                negative: true,
            },
            Enumerator {
                name: "B",
                value: 2,
                negative: false,
            },
        ]);
        let big = arena.alloc_slice_copy(&[Enumerator {
            name: "BIG",
            value: 1 << 32,
            negative: false,
        }]);
        let cu = cu_with(vec![
            Node::Enum {
                name: Some("n"),
                byte_size: 4,
                declaration: false,
                underlying_signed: Some(true),
                enumerators: neg,
            },
            Node::Enum {
                name: Some("b"),
                byte_size: 8,
                declaration: false,
                underlying_signed: Some(false),
                enumerators: big,
            },
        ]);
        let types = lower(&cu, &Features::default());
        let Type::Enum(n) = &types[0] else { panic!() };
        assert!(n.signed);
        assert_eq!(
            n.values[0].value,
            u64::MAX,
            "-1, sign-extended as the reader widens it"
        );
        let Type::Enum64(b) = &types[1] else {
            panic!("{:?}", types[1])
        };
        assert!(!b.signed && b.values[0].value == 1 << 32);

        // --skip_encoding_btf_enum64: an 8-byte ENUM with values cut to 32
        // bits, unsigned (pahole passes (uint32_t)value).
        let declared = cu_with(vec![Node::Enum {
            name: Some("fwd_e"),
            byte_size: 0,
            declaration: true,
            underlying_signed: None,
            enumerators: &[],
        }]);
        assert_eq!(
            lower(&declared, &Features::default())[0],
            Type::Enum(Enum {
                name: "fwd_e",
                size: 4,
                signed: false,
                values: Box::default()
            })
        );

        let no64 = Features {
            enum64: false,
            ..Features::default()
        };
        let types = lower(&cu, &no64);
        let Type::Enum(b) = &types[1] else { panic!() };
        assert_eq!((b.size, b.signed, b.values[0].value), (8, false, 0));
        let Type::Enum(n) = &types[0] else { panic!() };
        assert!(!n.signed);
    }

    #[test]
    fn atomic_and_unsupported_read_as_void() {
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Qualified {
                qualifier: Qualifier::Atomic,
                target: node(0),
            },
            Node::Pointer {
                target: node(1),
                type_tags: &[],
            },
            Node::Unsupported { tag: 0x4107 },
            Node::Qualified {
                qualifier: Qualifier::Const,
                target: node(3),
            },
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(
            types,
            vec![
                int("int", 4, IntEncoding::SIGNED),
                Type::Ptr(TypeId::VOID),
                Type::Const(TypeId::VOID)
            ]
        );
    }

    #[test]
    fn type_tags_chain_last_tag_first() {
        // `int __tag1 __tag2 *p` with clang 14: pahole gives
        // PTR -> TYPE_TAG tag2 -> TYPE_TAG tag1 -> int.
        let arena = bumpalo::Bump::new();
        let tags: &[&str] = arena.alloc_slice_copy(&["tag1", "tag2"]);
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Pointer {
                target: node(0),
                type_tags: tags,
            },
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(types[1], Type::Ptr(TypeId(4)));
        assert_eq!(
            types[2],
            Type::TypeTag(TypeTag {
                name: "tag1",
                ty: TypeId(1),
                attribute: false,
            })
        );
        assert_eq!(
            types[3],
            Type::TypeTag(TypeTag {
                name: "tag2",
                ty: TypeId(3),
                attribute: false,
            })
        );

        let off = Features {
            type_tag: false,
            ..Features::default()
        };
        assert_eq!(
            lower(&cu, &off),
            vec![int("int", 4, IntEncoding::SIGNED), Type::Ptr(TypeId(1))]
        );
    }

    #[test]
    fn decl_tags_on_members_aggregates_and_typedefs() {
        let arena = bumpalo::Bump::new();
        let mtag: &[&str] = arena.alloc_slice_copy(&["mtag"]);
        let members = arena.alloc_slice_copy(&[
            DwMember {
                name: Some("p"),
                ty: node(0),
                bit_offset: 0,
                bitfield_size: 0,
                decl_tags: &[],
            },
            DwMember {
                name: Some("m"),
                ty: node(0),
                bit_offset: 32,
                bitfield_size: 0,
                decl_tags: mtag,
            },
        ]);
        let stag: &[&str] = arena.alloc_slice_copy(&["stag"]);
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Composite {
                kind: CompositeKind::Struct,
                name: Some("st"),
                byte_size: 8,
                declaration: false,
                members,
                decl_tags: stag,
            },
            Node::Typedef {
                name: "myint",
                target: node(0),
                decl_tags: arena.alloc_slice_copy(&["tdtag"]),
            },
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(
            &types[3..],
            &[
                Type::DeclTag(DeclTag {
                    name: "mtag",
                    ty: TypeId(2),
                    component_idx: 1,
                    attribute: false,
                }),
                Type::DeclTag(DeclTag {
                    name: "stag",
                    ty: TypeId(2),
                    component_idx: -1,
                    attribute: false,
                }),
                Type::DeclTag(DeclTag {
                    name: "tdtag",
                    ty: TypeId(3),
                    component_idx: -1,
                    attribute: false,
                }),
            ]
        );
        let off = Features {
            decl_tag: false,
            ..Features::default()
        };
        assert_eq!(lower(&cu, &off).len(), 3);
    }

    #[test]
    fn subroutine_varargs_marker() {
        let arena = bumpalo::Bump::new();
        let params = arena.alloc_slice_copy(&[DwParam {
            name: None,
            ty: node(0),
            location: ParamLocation::Unknown,
            entry: Default::default(),
            decl_tags: &[],
        }]);
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Subroutine {
                ret: node(0),
                params,
                varargs: true,
            },
            Node::Subroutine {
                ret: TypeRef::Void,
                params: &[],
                varargs: false,
            },
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(
            types[1],
            Type::FuncProto(FuncProto {
                ret: TypeId(1),
                params: vec![
                    Param {
                        name: test_name(""),
                        ty: TypeId(1)
                    },
                    Param {
                        name: test_name(""),
                        ty: TypeId::VOID
                    }
                ]
                .into(),
            })
        );
        assert_eq!(
            types[2],
            Type::FuncProto(FuncProto {
                ret: TypeId::VOID,
                params: Box::default()
            })
        );
    }

    #[test]
    fn byte_size_follows_typedefs_and_arrays() {
        let arena = bumpalo::Bump::new();
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Typedef {
                name: "t",
                target: node(0),
                decl_tags: &[],
            },
            Node::Array {
                elem: node(1),
                dims: arena.alloc_slice_copy(&[2, 3]),
            },
            Node::Pointer {
                target: TypeRef::Void,
                type_tags: &[],
            },
            // A typedef cycle (bad input) must not hang.
            Node::Typedef {
                name: "loop",
                target: node(4),
                decl_tags: &[],
            },
        ]);
        let map = TypeMap::new(&cu, 8).unwrap();
        assert_eq!(map.byte_size(node(2)).unwrap(), 24);
        assert_eq!(map.byte_size(node(3)).unwrap(), 8);
        assert_eq!(map.byte_size(node(4)).unwrap(), 0);
        assert!(map.id(node(99)).is_err());
    }

    /// Lowers `cu`, returning the types or the error's text, and the
    /// warnings.
    fn try_lower(
        cu: &CuModel<'static, '_>,
        force: bool,
    ) -> (Result<Vec<Type<'static>>, String>, Vec<String>) {
        let features = Features {
            encode_force: force,
            float: true,
            ..Features::default()
        };
        let mut map = TypeMap::new(cu, 8).unwrap();
        map.force = force;
        map.float = features.float;
        let types = lower_types(&map, &features).map_err(|err| err.to_string());
        (types, map.take_warnings())
    }

    fn member(
        name: Option<&'static str>,
        bit_offset: u64,
        tags: &'static [&'static str],
    ) -> DwMember<'static, 'static> {
        DwMember {
            name,
            ty: node(0),
            bit_offset,
            bitfield_size: 0,
            decl_tags: tags,
        }
    }

    #[test]
    fn what_btf_cannot_hold_is_an_error_or_left_out_with_force() {
        let arena = bumpalo::Bump::new();
        // struct bigs { char pad[0x20000000]; int after; }: `after` at bit
        // 2^32, which BTF's 32-bit offset would cut to 0.
        let members = arena.alloc_slice_copy(&[
            member(Some("pad"), 0, &[]),
            member(Some("after"), 1 << 32, &["t"]),
        ]);
        let mut cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            composite(
                CompositeKind::Struct,
                Some("bigs"),
                0x2000_0004,
                false,
                members,
            ),
        ]);
        cu.node_offsets = vec![0x10, 0x2a];
        let (types, warnings) = try_lower(&cu, false);
        let err = types.unwrap_err();
        assert!(
            err.contains("DIE 0x2a") && err.contains("\"bigs\"") && err.contains("\"after\""),
            "{err}"
        );
        assert!(warnings.is_empty());
        let (types, warnings) = try_lower(&cu, true);
        let types = types.unwrap();
        let Type::Struct(s) = &types[1] else { panic!() };
        assert_eq!(s.members.len(), 1);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("left out"));
        // The left-out member's decl tag goes with it.
        assert!(!types.iter().any(|t| matches!(t, Type::DeclTag(_))));

        // int a[65536][65536][16]: the element count wraps in 32 bits.
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Array {
                elem: node(0),
                dims: arena.alloc_slice_copy(&[65536, 65536, 16]),
            },
        ]);
        assert!(try_lower(&cu, true)
            .0
            .unwrap_err()
            .contains("2^32 - 1 elements"));
        // Wide dimensions with a zero among them are no elements.
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Array {
                elem: node(0),
                dims: arena.alloc_slice_copy(&[u64::MAX, u64::MAX, 0]),
            },
        ]);
        assert!(try_lower(&cu, false).0.is_ok());
    }

    #[test]
    fn kernel_layout_and_size_rules() {
        let arena = bumpalo::Bump::new();
        let out_of_order =
            arena.alloc_slice_copy(&[member(Some("a"), 32, &[]), member(Some("b"), 0, &[])]);
        let past_end = arena.alloc_slice_copy(&[member(Some("a"), 64, &[])]);
        let union_at_32 = arena.alloc_slice_copy(&[member(Some("a"), 32, &[])]);
        for (kind, size, members, what) in [
            (
                CompositeKind::Struct,
                8,
                &out_of_order[..],
                "before the previous",
            ),
            (CompositeKind::Struct, 8, &past_end[..], "past"),
            (CompositeKind::Struct, 2, &out_of_order[..1], "past the end"),
            (CompositeKind::Union, 8, &union_at_32[..], "not 0"),
        ] {
            let cu = cu_with(vec![
                base("int", 4, BaseEncoding::Signed),
                composite(kind, Some("s"), size, false, members),
            ]);
            let err = try_lower(&cu, false).0.unwrap_err();
            assert!(err.contains(what), "{err}");
        }
        let enumerators = arena.alloc_slice_copy(&[Enumerator {
            name: "A",
            value: 1,
            negative: false,
        }]);
        let cu = cu_with(vec![Node::Enum {
            name: Some("e"),
            byte_size: 3,
            declaration: false,
            underlying_signed: None,
            enumerators,
        }]);
        assert!(try_lower(&cu, true).0.unwrap_err().contains("1, 2, 4 or 8"));
        // An enum with neither a name nor an enumerator (crafted, or left
        // so by encode_force) is an error even with encode_force: libbpf's
        // dedup would merge it with any anonymous enum. Named, it is a
        // declaration, and kept.
        let bad_names = arena.alloc_slice_copy(&[Enumerator {
            name: "1x",
            value: 1,
            negative: false,
        }]);
        for (name, enumerators, forced_ok) in [
            (None, &[][..], false),
            (Some("not an identifier"), &[][..], false),
            (None, &*bad_names, false),
            (Some("e"), &[][..], true),
            (Some("e"), &*bad_names, true),
            (None, &*enumerators, true),
        ] {
            let cu = cu_with(vec![Node::Enum {
                name,
                byte_size: 2,
                declaration: false,
                underlying_signed: None,
                enumerators,
            }]);
            let forced = try_lower(&cu, true).0;
            assert_eq!(forced.is_ok(), forced_ok, "{name:?} {forced:?}");
            if !forced_ok {
                assert!(
                    forced
                        .unwrap_err()
                        .contains("without a name or an enumerator"),
                    "{name:?}"
                );
            }
        }
        let cu = cu_with(vec![base("long double", 6, BaseEncoding::Float)]);
        assert!(try_lower(&cu, true).0.unwrap_err().contains("FLOAT sizes"));
        let cu = cu_with(vec![base("long double", 12, BaseEncoding::Float)]);
        assert!(try_lower(&cu, false).0.is_ok());
    }

    /// The kernel's checks of the members of a struct with bitfields
    /// (kind_flag; the integration test causes::members_of_a_struct_with_bitfields
    /// has the kernel's verdicts): an error, or the member left out.
    #[test]
    fn members_of_a_struct_with_bitfields() {
        let arena = bumpalo::Bump::new();
        // 0 int, 1 enum e (1 byte), 2 int *, 3 double (FLOAT), 4 __int128.
        let enumerators = arena.alloc_slice_copy(&[Enumerator {
            name: "A",
            value: 1,
            negative: false,
        }]);
        let nodes = || {
            vec![
                base("int", 4, BaseEncoding::Signed),
                Node::Enum {
                    name: Some("e"),
                    byte_size: 1,
                    declaration: false,
                    underlying_signed: None,
                    enumerators,
                },
                Node::Pointer {
                    target: node(0),
                    type_tags: &[],
                },
                base("double", 8, BaseEncoding::Float),
                base("__int128", 16, BaseEncoding::Signed),
            ]
        };
        let field = |name, ty: u32, bit_offset, bitfield_size| DwMember {
            name: Some(name),
            ty: node(ty),
            bit_offset,
            bitfield_size,
            decl_tags: &[],
        };
        for (size, members, what) in [
            (
                8,
                vec![field("a", 0, 0, 33)],
                "a bitfield of 33 bits of a 32-bit integer",
            ),
            (8, vec![field("a", 1, 0, 33)], "an enum bitfield of 33 bits"),
            (8, vec![field("a", 2, 0, 3)], "a bitfield of a pointer"),
            (
                8,
                vec![field("a", 3, 0, 3)],
                "a bitfield of a floating-point type",
            ),
            (
                4,
                vec![field("a", 0, 30, 5)],
                "bits 30..35 end past the 4 bytes",
            ),
            (
                4,
                vec![field("a", 0, 0, 3), field("b", 1, 8, 0)],
                "bits 8..40 end past the 4 bytes (an enum member counts as 32 bits",
            ),
            (32, vec![field("a", 4, 4, 125)], "nr_copy_bits exceeds 128"),
            (
                0x20_0004,
                vec![field("a", 0, 1 << 24, 3)],
                "bit offset 16777216 does not fit the 24 bits",
            ),
        ] {
            let members = arena.alloc_slice_copy(&members);
            let mut all = nodes();
            all.push(composite(
                CompositeKind::Struct,
                Some("s"),
                size,
                false,
                members,
            ));
            let cu = cu_with(all);
            let (types, warnings) = try_lower(&cu, false);
            let err = types.unwrap_err();
            assert!(err.contains(what), "{what}: {err}");
            assert!(warnings.is_empty());
            let (types, warnings) = try_lower(&cu, true);
            let Type::Struct(s) = &types.unwrap()[5] else {
                panic!()
            };
            assert_eq!(s.members.len(), members.len() - 1, "{what}");
            assert!(warnings[0].contains(what), "{warnings:?}");
        }
        // Without bitfields the enum member is counted by its size, and
        // fits.
        let members = arena.alloc_slice_copy(&[field("a", 0, 0, 0), field("b", 1, 32, 0)]);
        let mut all = nodes();
        all.push(composite(
            CompositeKind::Struct,
            Some("s"),
            8,
            false,
            members,
        ));
        assert!(try_lower(&cu_with(all), false).0.is_ok());
    }

    #[test]
    fn names_the_kernel_refuses() {
        let arena = bumpalo::Bump::new();
        let members = arena.alloc_slice_copy(&[member(Some("a-b"), 0, &[])]);
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            composite(CompositeKind::Struct, Some("s t"), 4, false, members),
        ]);
        let err = try_lower(&cu, false).0.unwrap_err();
        assert!(err.contains("\"s t\""), "{err}");
        let (types, warnings) = try_lower(&cu, true);
        let Type::Struct(s) = &types.unwrap()[1] else {
            panic!()
        };
        assert_eq!((s.name, s.members[0].name.is_empty()), ("", true));
        assert_eq!(warnings.len(), 2);

        let enumerators = arena.alloc_slice_copy(&[
            Enumerator {
                name: "",
                value: 1,
                negative: false,
            },
            Enumerator {
                name: "B",
                value: 2,
                negative: false,
            },
        ]);
        let cu = cu_with(vec![Node::Enum {
            name: Some("e"),
            byte_size: 4,
            declaration: false,
            underlying_signed: None,
            enumerators,
        }]);
        assert!(try_lower(&cu, false).0.unwrap_err().contains("enumerator"));
        let Type::Enum(e) = &try_lower(&cu, true).0.unwrap()[0] else {
            panic!()
        };
        assert_eq!(e.values.len(), 1);

        let long = "x".repeat(129);
        let long: &'static str = Box::leak(long.into_boxed_str());
        for node in [
            Node::Typedef {
                name: long,
                target: TypeRef::Void,
                decl_tags: &[],
            },
            Node::Typedef {
                name: "",
                target: TypeRef::Void,
                decl_tags: &[],
            },
            composite(CompositeKind::Union, Some("1u"), 0, true, &[]),
        ] {
            assert!(try_lower(&cu_with(vec![node]), true).0.is_err());
        }
        assert!(try_lower(
            &cu_with(vec![Node::Typedef {
                name: &long[..128],
                target: TypeRef::Void,
                decl_tags: &[]
            }]),
            false
        )
        .0
        .is_ok());

        // An empty btf_decl_tag value: "Invalid value" in the kernel.
        let cu = cu_with(vec![Node::Typedef {
            name: "t",
            target: TypeRef::Void,
            decl_tags: arena.alloc_slice_copy(&[""]),
        }]);
        assert!(try_lower(&cu, false)
            .0
            .unwrap_err()
            .contains("btf_decl_tag"));
        assert_eq!(try_lower(&cu, true).0.unwrap().len(), 1);
    }

    #[test]
    fn loops_and_chains_the_kernel_cannot_resolve() {
        let arena = bumpalo::Bump::new();
        let ptr = |to: u32| Node::Pointer {
            target: node(to),
            type_tags: &[],
        };
        let typedef = |name: &'static str, to: u32| Node::Typedef {
            name,
            target: node(to),
            decl_tags: &[],
        };
        // A typedef loop, and a struct holding itself through a typedef
        // and an array (a pointer to itself is fine).
        let cu = cu_with(vec![typedef("a", 1), typedef("b", 0)]);
        assert!(try_lower(&cu, true)
            .0
            .unwrap_err()
            .contains("Loop detected"));
        let members =
            arena.alloc_slice_copy(&[member(Some("next"), 0, &[]), member(Some("self"), 0, &[])]);
        let members: &[DwMember<'static, '_>] = arena.alloc_slice_copy(&[
            DwMember {
                ty: node(1),
                ..members[0]
            },
            DwMember {
                ty: node(3),
                ..members[1]
            },
        ]);
        let cu = cu_with(vec![
            composite(CompositeKind::Struct, Some("s"), 16, false, members),
            ptr(0),
            typedef("t", 0),
            Node::Array {
                elem: node(2),
                dims: arena.alloc_slice_copy(&[1]),
            },
        ]);
        assert!(try_lower(&cu, false)
            .0
            .unwrap_err()
            .contains("Loop detected"));
        let cu = cu_with(vec![
            composite(CompositeKind::Struct, Some("s"), 16, false, &members[..1]),
            ptr(0),
        ]);
        assert!(try_lower(&cu, false).0.is_ok());

        // 40 pointers, outermost first as gcc writes them: each refers to
        // a later id, 40 deep (the kernel stops at 32); innermost first,
        // each refers to an earlier one and the kernel takes it.
        let mut nodes: Vec<Node<'static, '_>> = (1..=40).map(ptr).collect();
        nodes.push(base("int", 4, BaseEncoding::Signed));
        assert!(try_lower(&cu_with(nodes), false)
            .0
            .unwrap_err()
            .contains("MAX_RESOLVE_DEPTH"));
        let mut nodes = vec![base("int", 4, BaseEncoding::Signed)];
        nodes.extend((0..40).map(ptr));
        assert!(try_lower(&cu_with(nodes), false).0.is_ok());
        let mut nodes: Vec<Node<'static, '_>> = (1..=32).map(ptr).collect();
        nodes.push(base("int", 4, BaseEncoding::Signed));
        assert!(try_lower(&cu_with(nodes), false).0.is_ok());
    }

    #[test]
    fn an_int_of_float_encoding_is_no_array_index() {
        // pahole indexes arrays by the unit's first base type named `int`;
        // with the float feature one of float encoding is a FLOAT, which
        // the kernel refuses as an index ("Invalid index").
        let arena = bumpalo::Bump::new();
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Float),
            base("long", 8, BaseEncoding::Signed),
            Node::Array {
                elem: node(1),
                dims: arena.alloc_slice_copy(&[4]),
            },
        ]);
        let error = try_lower(&cu, false).0.unwrap_err();
        assert!(error.contains("Invalid index"), "{error}");
        // encode_force: the arrays get an int of their own (id 4, after
        // the three nodes), as in a unit without `int`.
        let (types, warnings) = try_lower(&cu, true);
        let types = types.unwrap();
        assert!(
            warnings.len() == 1 && warnings[0].contains("Invalid index"),
            "{warnings:?}"
        );
        assert!(matches!(&types[0], Type::Float(f) if f.name == "int"));
        assert!(matches!(&types[2], Type::Array(a) if a.index == TypeId(4)));
        assert!(
            matches!(&types[3], Type::Int(i) if i.name == "int" && i.size == 4 && i.bits == 32),
            "{:?}",
            types[3]
        );
        // Without the float feature the same `int` is an INT, and the index.
        let features = Features::default();
        let types = lower(&cu, &features);
        assert!(matches!(&types[0], Type::Int(_)));
        assert!(matches!(&types[2], Type::Array(a) if a.index == TypeId(1)));
        // A unit without arrays needs no index: nothing is said.
        let cu = cu_with(vec![base("int", 4, BaseEncoding::Float)]);
        let (types, warnings) = try_lower(&cu, true);
        assert!(types.is_ok() && warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn loops_of_every_shape_are_found_and_others_pass() {
        // The loop check searches only composites with a member as large
        // as they are at their start, or of no size: every loop of
        // composites holding each other by value has one.
        let arena = bumpalo::Bump::new();
        let holding = |name: &'static str, to: u32, bit_offset: u64| DwMember {
            ty: node(to),
            ..member(Some(name), bit_offset, &[])
        };
        let members = |list: &[DwMember<'static, 'static>]| -> &[DwMember<'static, 'static>] {
            arena.alloc_slice_copy(list)
        };
        let int = || base("int", 4, BaseEncoding::Signed);
        let array = |to: u32, dims: &[u64]| Node::Array {
            elem: node(to),
            dims: arena.alloc_slice_copy(dims),
        };
        use CompositeKind::{Struct, Union};
        let loops = [
            // Two structs of one size, each at the other's start.
            vec![
                composite(Struct, Some("a"), 8, false, members(&[holding("b", 1, 0)])),
                composite(Struct, Some("b"), 8, false, members(&[holding("a", 0, 0)])),
            ],
            // A union holding itself beside a smaller member.
            vec![
                composite(
                    Union,
                    Some("u"),
                    8,
                    false,
                    members(&[holding("i", 1, 0), holding("u", 0, 0)]),
                ),
                int(),
            ],
            // A struct ending in a flexible array of itself (no size),
            // through a const typedef; no other member is as large.
            vec![
                composite(
                    Struct,
                    Some("f"),
                    8,
                    false,
                    members(&[
                        holding("i", 1, 0),
                        holding("j", 1, 32),
                        holding("tail", 2, 64),
                    ]),
                ),
                int(),
                array(3, &[0]),
                Node::Qualified {
                    qualifier: Qualifier::Const,
                    target: node(4),
                },
                Node::Typedef {
                    name: "f_t",
                    target: node(0),
                    decl_tags: &[],
                },
            ],
            // An empty struct holding an empty struct holding the first.
            vec![
                composite(Struct, Some("e"), 0, false, members(&[holding("g", 1, 0)])),
                composite(Struct, Some("g"), 0, false, members(&[holding("e", 0, 0)])),
            ],
        ];
        for nodes in loops {
            let error = try_lower(&cu_with(nodes), false).0.unwrap_err();
            assert!(error.contains("Loop detected"), "{error}");
        }
        // A struct holding a smaller one that holds an int, at the start
        // and after it, is no loop.
        let cu = cu_with(vec![
            composite(
                Struct,
                Some("big"),
                16,
                false,
                members(&[holding("first", 1, 0), holding("second", 1, 64)]),
            ),
            composite(
                Struct,
                Some("small"),
                8,
                false,
                members(&[holding("i", 2, 0)]),
            ),
            int(),
        ]);
        assert!(try_lower(&cu, false).0.is_ok());
    }

    #[test]
    fn the_quick_loop_search_agrees_with_the_full_one() {
        // Random tables of pointers, typedefs, consts, arrays and structs
        // whose members refer anywhere: with every composite listed, the
        // quick search (chains walked once, composites apart) finds a loop
        // exactly when the full one does.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |below: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(below)) as u32
        };
        let (mut with_loops, mut without) = (0, 0);
        for _ in 0..3000 {
            let count = 1 + next(12);
            let target = |next: &mut dyn FnMut(u32) -> u32| TypeId(next(count + 1));
            let types: Vec<Type<'static>> = (0..count)
                .map(|_| match next(6) {
                    0 => Type::Ptr(target(&mut next)),
                    1 => Type::Typedef(Named {
                        name: "t",
                        ty: target(&mut next),
                    }),
                    2 => Type::Const(target(&mut next)),
                    3 => Type::Array(Array {
                        elem: target(&mut next),
                        index: TypeId::VOID,
                        nelems: 1,
                    }),
                    _ => Type::Struct(Composite {
                        name: "s",
                        size: 8,
                        members: (0..next(3))
                            .map(|_| Member {
                                name: Name::EMPTY,
                                ty: target(&mut next),
                                bit_offset: 0,
                                bitfield_size: 0,
                            })
                            .collect(),
                        kind_flag: false,
                    }),
                })
                .collect();
            let composites: Vec<usize> = (0..types.len())
                .filter(|&i| matches!(types[i], Type::Struct(_)))
                .collect();
            let full = first_loop(&types).is_some();
            assert_eq!(has_loop(&types, &composites), full, "{types:?}");
            if full {
                with_loops += 1;
            } else {
                without += 1;
            }
        }
        assert!(with_loops > 300 && without > 300, "{with_loops} {without}");
    }
}
