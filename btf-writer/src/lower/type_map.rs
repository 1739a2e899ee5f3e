//! [`TypeMap`]: a CU's node → BTF id map, and what lowering asks of the
//! CU's nodes before it writes a type: where a chain of typedefs and
//! qualifiers ends, a type's size, and what the kernel's member checks
//! refuse. Types, functions and variables are all lowered through it.

use foldhash::fast::FixedState;

use dwarf::model::{BaseEncoding, CompositeKind, CuModel, Node, NodeId, Qualifier, TypeRef};

use super::base::{int_size, lowers_to_float};
use super::error::Error;
use crate::types::{Name, TypeId};

/// How deep [`TypeMap::byte_size`] follows typedefs and qualifiers before
/// deciding the input is cyclic.
const MAX_TYPE_DEPTH: u32 = 64;

/// The CU's node → BTF id map, and the types lowered so far.
#[derive(Debug)]
pub(crate) struct TypeMap<'m, 'input, 'arena> {
    pub(super) cu: &'m CuModel<'input, 'arena>,
    /// BTF id of each node, `VOID` for nodes BTF cannot express.
    ids: Vec<TypeId>,
    /// Address size in bytes, for pointer sizes.
    pointer_size: u32,
    /// What `encode_force` left out, one line each, in node order.
    warnings: std::cell::RefCell<Vec<String>>,
    /// For aggregates that lost members to `encode_force`: the index of
    /// the member each lowered one is, by node.
    pub(super) kept_members:
        std::cell::RefCell<std::collections::HashMap<u32, Vec<usize>, FixedState>>,
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
    /// own size (12 bytes for i386's `long double`), as [`super::base::lower_base`]
    /// writes it.
    // Always inlined, with `size_of`: it is asked of nearly every member
    // (5.8 M times on Debian 6.1's vmlinux), and as a call it cost 0.7% of
    // all instructions more (cachegrind, `-j1`).
    #[inline(always)]
    pub(super) fn lowered_size(&self, end: &ChainEnd<'_, '_, '_>) -> Result<u64, Error> {
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
    pub(super) node: Option<&'m Node<'input, 'arena>>,
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
    pub(super) fn kflag_member_problem(
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
    pub(super) fn float_member_problem(
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

/// Whether BTF has a kind for the node (pahole's loader drops the rest and
/// references to them read as void).
pub(super) fn is_expressible(node: &Node<'_, '_>) -> bool {
    !matches!(
        node,
        Node::Unsupported { .. }
            | Node::Qualified {
                qualifier: Qualifier::Atomic,
                ..
            }
    )
}

/// `struct`, `union` or `class`, for messages.
pub(super) fn kind_name(kind: CompositeKind) -> &'static str {
    match kind {
        CompositeKind::Struct => "struct",
        CompositeKind::Union => "union",
        CompositeKind::Class => "class",
    }
}

/// A name for messages: quoted, escaped, `(anon)` when empty.
pub(super) fn quoted(name: &str) -> String {
    if name.is_empty() {
        "(anon)".to_string()
    } else {
        format!("{name:?}")
    }
}
