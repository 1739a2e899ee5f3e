//! Canonical descriptions of types and the interner that gives each
//! distinct description one node id.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::hasher::{FastBuild, FastHasher};
use crate::types::Linkage;

/// The id of an interned description.
pub(super) type NodeId = u32;

/// How a named type is described when referenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum RefKind {
    Struct,
    Union,
    Enum,
    Enum64,
    FwdStruct,
    FwdUnion,
    Typedef,
}

/// A member: name, type, bit offset, bitfield size.
pub(super) type MemberDesc<'s> = (&'s str, NodeId, u32, u8);

/// A canonical description; referenced types are node ids of their own
/// descriptions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Desc<'s> {
    Void,
    /// A reference to an id that exists in neither the table nor its base.
    Dangling,
    /// A back edge that does not pass through a named type (invalid BTF:
    /// the kernel rejects such loops); cut here so that we terminate.
    Cycle,
    Ref(RefKind, &'s str),
    Int {
        name: &'s str,
        size: u32,
        encoding: u8,
        offset: u8,
        bits: u8,
    },
    Ptr(NodeId),
    Volatile(NodeId),
    Const(NodeId),
    Restrict(NodeId),
    Array {
        elem: NodeId,
        index: NodeId,
        nelems: u32,
    },
    Struct {
        name: &'s str,
        size: u32,
        kind_flag: bool,
        members: Box<[MemberDesc<'s>]>,
    },
    Union {
        name: &'s str,
        size: u32,
        kind_flag: bool,
        members: Box<[MemberDesc<'s>]>,
    },
    Enum {
        name: &'s str,
        size: u32,
        signed: bool,
        values: Box<[(&'s str, u64)]>,
    },
    Enum64 {
        name: &'s str,
        size: u32,
        signed: bool,
        values: Box<[(&'s str, u64)]>,
    },
    Fwd {
        name: &'s str,
        union: bool,
    },
    Typedef {
        name: &'s str,
        ty: NodeId,
    },
    TypeTag {
        name: &'s str,
        ty: NodeId,
        attribute: bool,
    },
    Func {
        name: &'s str,
        ty: NodeId,
        linkage: Linkage,
    },
    Var {
        name: &'s str,
        ty: NodeId,
        linkage: Linkage,
    },
    FuncProto {
        ret: NodeId,
        params: Box<[(&'s str, NodeId)]>,
    },
    /// Without layout comparison, `size` and the offsets are `None` and
    /// the variables are sorted.
    Datasec {
        name: &'s str,
        size: Option<u32>,
        vars: Box<[(NodeId, Option<u32>, u32)]>,
    },
    Float {
        name: &'s str,
        size: u32,
    },
    DeclTag {
        name: &'s str,
        ty: NodeId,
        component_idx: i32,
        attribute: bool,
    },
}

/// Hash-consing store of descriptions. Lookup hashes a description to a
/// bucket and then compares full values, so equal ids mean equal
/// descriptions, never just equal hashes.
#[derive(Default)]
pub(super) struct Interner<'s> {
    pub(super) nodes: Vec<Desc<'s>>,
    /// First node of each hash bucket.
    heads: HashMap<u64, NodeId, FastBuild>,
    /// Next node in the same bucket, `NO_NODE` at the end.
    next_in_bucket: Vec<NodeId>,
}

pub(super) const NO_NODE: NodeId = NodeId::MAX;

impl<'s> Interner<'s> {
    pub(super) fn intern(&mut self, desc: Desc<'s>) -> NodeId {
        let mut hasher = FastHasher::default();
        desc.hash(&mut hasher);
        let hash = hasher.finish();
        let head = self.heads.get(&hash).copied().unwrap_or(NO_NODE);
        let mut cursor = head;
        while let Some(existing) = self.nodes.get(cursor as usize) {
            if *existing == desc {
                return cursor;
            }
            cursor = self
                .next_in_bucket
                .get(cursor as usize)
                .copied()
                .unwrap_or(NO_NODE);
        }
        let node = self.nodes.len() as NodeId;
        self.nodes.push(desc);
        self.next_in_bucket.push(head);
        self.heads.insert(hash, node);
        node
    }
}
