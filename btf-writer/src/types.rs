//! The in-memory BTF type model: one variant per BTF kind
//! (`Documentation/bpf/btf.rst`, section 2.2), with the kind-specific fields
//! decoded. The on-disk layout lives in [`crate::raw`]; this module is what
//! the lowering produces, dedup rewrites, the writer serializes and the
//! reader returns.
//!
//! Names are borrowed (`&'a str`, or a [`Name`] where a type has many of
//! them: members and parameters): from the mapped DWARF strings when
//! lowering, from the BTF string section when reading. An empty name is an
//! anonymous type.

pub use crate::name::{Name, NameTooLong};

/// A BTF type id. 0 is `void`; a split BTF's first id is its base's type
/// count + 1, so ids are absolute across base and split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

impl TypeId {
    /// `void`.
    pub const VOID: TypeId = TypeId(0);
}

/// `BTF_INT_ENCODING`: at most one of the bits is set, as libbpf requires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IntEncoding(pub u8);

impl IntEncoding {
    /// `BTF_INT_SIGNED`.
    pub const SIGNED: u8 = 1 << 0;
    /// `BTF_INT_CHAR`.
    pub const CHAR: u8 = 1 << 1;
    /// `BTF_INT_BOOL`.
    pub const BOOL: u8 = 1 << 2;
}

/// `BTF_KIND_INT`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Int<'a> {
    /// Name.
    pub name: &'a str,
    /// Size in bytes.
    pub size: u32,
    /// Encoding bits.
    pub encoding: IntEncoding,
    /// `BTF_INT_OFFSET` (always 0 from pahole).
    pub offset: u8,
    /// `BTF_INT_BITS`.
    pub bits: u8,
}

/// `BTF_KIND_ARRAY`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Array {
    /// Element type.
    pub elem: TypeId,
    /// Index type.
    pub index: TypeId,
    /// Number of elements.
    pub nelems: u32,
}

/// A member of a STRUCT or UNION.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Member<'a> {
    /// Name (empty for anonymous members).
    pub name: Name<'a>,
    /// Member type.
    pub ty: TypeId,
    /// Offset in bits from the start of the aggregate.
    pub bit_offset: u32,
    /// Bitfield width, 0 when not a bitfield. When any member of an
    /// aggregate has a non-zero width, the aggregate is written with
    /// kind_flag = 1 and `offset = bitfield_size << 24 | bit_offset`.
    pub bitfield_size: u8,
}

/// `BTF_KIND_STRUCT` / `BTF_KIND_UNION`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Composite<'a> {
    /// Name (empty for anonymous aggregates).
    pub name: &'a str,
    /// Size in bytes.
    pub size: u32,
    /// Members in order.
    pub members: Box<[Member<'a>]>,
    /// Written with kind_flag = 1 (bitfield encoding of member offsets).
    /// Readers set it from the file; lowering sets it when any member is a
    /// bitfield, as pahole does.
    pub kind_flag: bool,
}

/// An enumerator of ENUM (value fits 32 bits) or ENUM64.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumValue<'a> {
    /// Name.
    pub name: &'a str,
    /// The value's bits; ENUM keeps only the low 32.
    pub value: u64,
}

/// `BTF_KIND_ENUM` / `BTF_KIND_ENUM64`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Enum<'a> {
    /// Name (empty for anonymous enums).
    pub name: &'a str,
    /// Size in bytes.
    pub size: u32,
    /// kind_flag: values are signed.
    pub signed: bool,
    /// Enumerators in order.
    pub values: Box<[EnumValue<'a>]>,
}

/// `BTF_KIND_FWD`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fwd<'a> {
    /// Name.
    pub name: &'a str,
    /// kind_flag: a union rather than a struct.
    pub union: bool,
}

/// TYPEDEF: a name and a referenced type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Named<'a> {
    /// Name.
    pub name: &'a str,
    /// Referenced type.
    pub ty: TypeId,
}

/// `btf_func_linkage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// `BTF_FUNC_STATIC` / `BTF_VAR_STATIC` (0).
    Static,
    /// `BTF_FUNC_GLOBAL` / `BTF_VAR_GLOBAL_ALLOCATED` (1).
    Global,
    /// `BTF_FUNC_EXTERN` / `BTF_VAR_GLOBAL_EXTERN` (2).
    Extern,
}

/// `BTF_KIND_FUNC` and `BTF_KIND_VAR`: a name, a type and a linkage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Object<'a> {
    /// Name.
    pub name: &'a str,
    /// FUNC_PROTO for FUNC, the variable's type for VAR.
    pub ty: TypeId,
    /// Linkage (kept in `info.vlen` for FUNC, in the trailing u32 for VAR).
    pub linkage: Linkage,
}

/// A FUNC_PROTO parameter. The trailing `{ "", 0 }` marks varargs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param<'a> {
    /// Name (empty when unknown).
    pub name: Name<'a>,
    /// Type (`VOID` only for the varargs marker).
    pub ty: TypeId,
}

/// `BTF_KIND_FUNC_PROTO`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FuncProto<'a> {
    /// Return type.
    pub ret: TypeId,
    /// Parameters.
    pub params: Box<[Param<'a>]>,
}

/// One `btf_var_secinfo`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VarSecInfo {
    /// The VAR.
    pub ty: TypeId,
    /// Offset within the section.
    pub offset: u32,
    /// Size of the variable.
    pub size: u32,
}

/// `BTF_KIND_DATASEC`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Datasec<'a> {
    /// Section name.
    pub name: &'a str,
    /// Section size.
    pub size: u32,
    /// Variables, sorted by offset.
    pub vars: Box<[VarSecInfo]>,
}

/// `BTF_KIND_FLOAT`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Float<'a> {
    /// Name.
    pub name: &'a str,
    /// Size in bytes (2, 4, 8, 12 or 16).
    pub size: u32,
}

/// `BTF_KIND_DECL_TAG`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeclTag<'a> {
    /// The tag value.
    pub name: &'a str,
    /// The tagged type (STRUCT, UNION, VAR, FUNC or TYPEDEF).
    pub ty: TypeId,
    /// -1 for the type itself, else the member or parameter index.
    pub component_idx: i32,
    /// kind_flag: the tag is an attribute (`__attribute__((NAME))`), not a
    /// `btf_decl_tag("NAME")`. Only with `component_idx` -1.
    pub attribute: bool,
}

/// `BTF_KIND_TYPE_TAG`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TypeTag<'a> {
    /// The tag value.
    pub name: &'a str,
    /// Referenced type.
    pub ty: TypeId,
    /// kind_flag: the tag is an attribute (`__attribute__((NAME))`, as in
    /// Linux's `address_space(1)`), not a `btf_type_tag("NAME")`.
    pub attribute: bool,
}

/// One BTF type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type<'a> {
    /// `BTF_KIND_INT` (1).
    Int(Int<'a>),
    /// `BTF_KIND_PTR` (2).
    Ptr(TypeId),
    /// `BTF_KIND_ARRAY` (3).
    Array(Array),
    /// `BTF_KIND_STRUCT` (4).
    Struct(Composite<'a>),
    /// `BTF_KIND_UNION` (5).
    Union(Composite<'a>),
    /// `BTF_KIND_ENUM` (6).
    Enum(Enum<'a>),
    /// `BTF_KIND_FWD` (7).
    Fwd(Fwd<'a>),
    /// `BTF_KIND_TYPEDEF` (8).
    Typedef(Named<'a>),
    /// `BTF_KIND_VOLATILE` (9).
    Volatile(TypeId),
    /// `BTF_KIND_CONST` (10).
    Const(TypeId),
    /// `BTF_KIND_RESTRICT` (11).
    Restrict(TypeId),
    /// `BTF_KIND_FUNC` (12).
    Func(Object<'a>),
    /// `BTF_KIND_FUNC_PROTO` (13).
    FuncProto(FuncProto<'a>),
    /// `BTF_KIND_VAR` (14).
    Var(Object<'a>),
    /// `BTF_KIND_DATASEC` (15).
    Datasec(Datasec<'a>),
    /// `BTF_KIND_FLOAT` (16).
    Float(Float<'a>),
    /// `BTF_KIND_DECL_TAG` (17).
    DeclTag(DeclTag<'a>),
    /// `BTF_KIND_TYPE_TAG` (18).
    TypeTag(TypeTag<'a>),
    /// `BTF_KIND_ENUM64` (19).
    Enum64(Enum<'a>),
}

/// A BTF type table: standalone, or split on a base.
///
/// `types[i]` has id `first_id() + i`. For a split table the base's
/// strings are not copied; the writer continues string offsets after
/// `base_str_len`.
#[derive(Clone, Debug, Default)]
pub struct Btf<'a> {
    /// The types, in id order.
    pub types: Vec<Type<'a>>,
    /// Number of types in the base (0 for standalone BTF).
    pub base_type_count: u32,
    /// Length of the base's string section (0 for standalone BTF).
    pub base_str_len: u32,
}

impl<'a> Btf<'a> {
    /// Id of `types[0]`.
    pub fn first_id(&self) -> TypeId {
        TypeId(self.base_type_count + 1)
    }

    /// Adds a type and returns its id.
    pub fn add(&mut self, ty: Type<'a>) -> TypeId {
        self.types.push(ty);
        TypeId(self.base_type_count + self.types.len() as u32)
    }

    /// The type with `id`, if it belongs to this table (not the base).
    pub fn get(&self, id: TypeId) -> Option<&Type<'a>> {
        let index = id.0.checked_sub(self.base_type_count + 1)?;
        self.types.get(index as usize)
    }

    /// Number of types in this table (not counting the base, nor void).
    pub fn count(&self) -> u32 {
        self.types.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vmlinux run lowers 3.3 M types and keeps 0.85 M of them until the
    /// dedup, so every word of `Type` counts: the variable-length parts are
    /// boxed slices, without the capacity word of a `Vec` (56 -> 48 bytes).
    #[test]
    fn type_model_stays_compact() {
        assert!(std::mem::size_of::<Type<'_>>() <= 48);
    }

    /// About 2 M members and 0.7 M parameters stay in memory until the
    /// dedup of a vmlinux; a [`Name`] instead of a `&str` (and the 4-byte
    /// alignment it brings) takes 8 bytes off each.
    #[test]
    fn members_and_params_stay_compact() {
        assert!(std::mem::size_of::<Member<'_>>() <= 24);
        assert!(std::mem::size_of::<Param<'_>>() <= 16);
    }
}
