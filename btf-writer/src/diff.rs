//! Semantic comparison of two BTF tables, independent of type-id order:
//! the project's `btfdiff`.
//!
//! Every type is reduced to a canonical description: its kind and all its
//! fields, with each referenced type described in place of its id. A
//! reference to a *named* STRUCT, UNION, ENUM, ENUM64, FWD or TYPEDEF is
//! described by kind and name only; that cuts the cycles C allows (they all
//! go through a named aggregate) and keeps descriptions small, while the
//! named type's own fields are still compared through its own description.
//! Everything else (pointers, qualifiers, arrays, prototypes, anonymous
//! aggregates, ints, ...) is expanded inline.
//!
//! Descriptions are hash-consed: each distinct description gets a node id,
//! children are node ids, and two types have equal descriptions exactly
//! when their node ids are equal (the interner compares full values, the
//! hash only picks the bucket). Both sides share one interner, so comparing
//! the two tables is comparing multisets of node ids, per kind.
//!
//! Types of a base table are described the same way as the split's, so a
//! split referencing base type X equals one referencing an equal X in
//! another base, whatever X's id. Only the split's own types are counted.
//!
//! Everything the model holds is compared, including a STRUCT/UNION's
//! `kind_flag` (libbpf, hence pahole, sets it when a member is a bitfield) and
//! parameter names. ENUM values are compared on their 32 stored bits.
//! A loop that does not pass through a named type is invalid BTF (the
//! kernel rejects it); it is cut with a `<cycle>` marker, and the result
//! then depends on where the walk entered the loop.

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::hash::{BuildHasherDefault, Hash, Hasher};

use crate::dump::{fwd_kind_name, int_encoding_name, linkage_name, signedness};
use crate::raw::Kind;
use crate::types::{Btf, Composite, Enum, Linkage, Type, TypeId};

/// How many example descriptions [`diff`] keeps per kind and side.
pub const DEFAULT_MAX_EXAMPLES: usize = 5;

/// Rendered descriptions longer than this are cut, so that one huge
/// struct cannot flood a report.
const MAX_RENDERED_LEN: usize = 2000;

/// Nesting beyond this is rendered as `...`; descriptions of valid BTF are
/// far shallower, and rendering recurses.
const MAX_RENDER_DEPTH: usize = 48;

/// The comparison of one kind's types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindDiff {
    /// The kind.
    pub kind: Kind,
    /// Number of types of this kind in `a` (split part only).
    pub a_total: usize,
    /// Number of types of this kind in `b` (split part only).
    pub b_total: usize,
    /// Types of `a` without an equal counterpart in `b` (multiset
    /// difference: two equal types in `a` and one in `b` count one).
    pub only_a: usize,
    /// Types of `b` without an equal counterpart in `a`.
    pub only_b: usize,
    /// Some of `a`'s extra descriptions, sorted, at most the requested count.
    pub examples_a: Vec<String>,
    /// Some of `b`'s extra descriptions, sorted.
    pub examples_b: Vec<String>,
}

impl KindDiff {
    /// Whether the two sides hold the same multiset of this kind.
    pub fn is_empty(&self) -> bool {
        self.only_a == 0 && self.only_b == 0
    }
}

/// The result of [`diff`]: one entry per kind present on either side, in
/// kind-number order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffReport {
    /// Per-kind comparisons.
    pub kinds: Vec<KindDiff>,
}

impl DiffReport {
    /// Whether both sides hold exactly the same types.
    pub fn is_empty(&self) -> bool {
        self.kinds.iter().all(KindDiff::is_empty)
    }

    /// The entries with differences whose kind is not in `allowed`; empty
    /// when all differences are of the allowed kinds.
    pub fn differences_outside(&self, allowed: &[Kind]) -> Vec<&KindDiff> {
        self.kinds
            .iter()
            .filter(|entry| !entry.is_empty())
            .filter(|entry| !allowed.contains(&entry.kind))
            .collect()
    }

    /// The entry of `kind`, if either side has that kind.
    pub fn kind(&self, kind: Kind) -> Option<&KindDiff> {
        self.kinds.iter().find(|entry| entry.kind == kind)
    }

    /// Total number of unmatched types, both sides together.
    pub fn difference_count(&self) -> usize {
        self.kinds
            .iter()
            .map(|entry| entry.only_a + entry.only_b)
            .sum()
    }
}

/// Like `diff(1)`, an empty report prints nothing, so that "no output"
/// means "same types". Otherwise every kind gets its count line (equal
/// kinds too, for context), followed by its examples.
impl fmt::Display for DiffReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return Ok(());
        }
        for entry in &self.kinds {
            let kind = entry.kind;
            writeln!(
                f,
                "{kind}: a={} b={} only_a={} only_b={}",
                entry.a_total, entry.b_total, entry.only_a, entry.only_b
            )?;
            for example in &entry.examples_a {
                writeln!(f, "  only in a: {example}")?;
            }
            for example in &entry.examples_b {
                writeln!(f, "  only in b: {example}")?;
            }
        }
        Ok(())
    }
}

/// What [`diff_with`] compares and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffOptions {
    /// Example descriptions kept per kind and side.
    pub max_examples: usize,
    /// Compare DATASECs' layout too: the section size and each variable's
    /// offset. Off by default: the layout is the linker's, not the types'
    /// (the same objects linked in another order place the variables
    /// elsewhere), so by default a DATASEC is its name and the multiset of
    /// its variables with their sizes.
    pub datasec_layout: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            max_examples: DEFAULT_MAX_EXAMPLES,
            datasec_layout: false,
        }
    }
}

/// Compares `a` and `b` (each optionally split on a base) semantically,
/// with the default [`DiffOptions`].
pub fn diff(a: &Btf, a_base: Option<&Btf>, b: &Btf, b_base: Option<&Btf>) -> DiffReport {
    diff_with(a, a_base, b, b_base, &DiffOptions::default())
}

/// [`diff`] keeping up to `max_examples` example descriptions per kind and
/// side.
pub fn diff_with_examples(
    a: &Btf,
    a_base: Option<&Btf>,
    b: &Btf,
    b_base: Option<&Btf>,
    max_examples: usize,
) -> DiffReport {
    let options = DiffOptions {
        max_examples,
        ..DiffOptions::default()
    };
    diff_with(a, a_base, b, b_base, &options)
}

/// [`diff`] with explicit options.
pub fn diff_with(
    a: &Btf,
    a_base: Option<&Btf>,
    b: &Btf,
    b_base: Option<&Btf>,
    options: &DiffOptions,
) -> DiffReport {
    compare(a, a_base, b, b_base, options)
}

// One lifetime for both sides' strings so that one interner serves both;
// `Btf` is covariant, so the callers' distinct lifetimes shrink to it.
fn compare<'t, 's>(
    a: &'t Btf<'s>,
    a_base: Option<&'t Btf<'s>>,
    b: &'t Btf<'s>,
    b_base: Option<&'t Btf<'s>>,
    options: &DiffOptions,
) -> DiffReport {
    let max_examples = options.max_examples;
    let mut interner = Interner::default();
    let mut counts: HashMap<(Kind, NodeId), [usize; 2], FastBuild> = HashMap::default();
    let mut totals: HashMap<Kind, [usize; 2]> = HashMap::new();
    for (side, (btf, base)) in [(a, a_base), (b, b_base)].into_iter().enumerate() {
        let mut describer = Describer::new(btf, base, options.datasec_layout);
        let mut id = btf.first_id().0;
        for ty in &btf.types {
            let kind = Kind::of(ty);
            let node = describer.describe(&mut interner, TypeId(id));
            bump(counts.entry((kind, node)).or_default(), side);
            bump(totals.entry(kind).or_default(), side);
            id = id.wrapping_add(1);
        }
    }

    let mut extras: HashMap<Kind, [Vec<(NodeId, usize)>; 2]> = HashMap::new();
    for (&(kind, node), &[in_a, in_b]) in &counts {
        if in_a > in_b {
            extras.entry(kind).or_default()[0].push((node, in_a - in_b));
        } else if in_b > in_a {
            extras.entry(kind).or_default()[1].push((node, in_b - in_a));
        }
    }

    let mut kinds = Vec::new();
    for kind in (Kind::INT.0..=Kind::MAX.0).map(Kind) {
        let Some(&[a_total, b_total]) = totals.get(&kind) else {
            continue;
        };
        let [extra_a, extra_b] = extras.remove(&kind).unwrap_or_default();
        kinds.push(KindDiff {
            kind,
            a_total,
            b_total,
            only_a: extra_a.iter().map(|&(_, n)| n).sum(),
            only_b: extra_b.iter().map(|&(_, n)| n).sum(),
            examples_a: examples(&interner, &extra_a, max_examples),
            examples_b: examples(&interner, &extra_b, max_examples),
        });
    }
    DiffReport { kinds }
}

fn bump(pair: &mut [usize; 2], side: usize) {
    if let Some(count) = pair.get_mut(side) {
        *count += 1;
    }
}

/// Renders the extras and keeps the first `max` in sorted order, so that
/// the report does not depend on hash-map iteration order.
fn examples(interner: &Interner<'_>, extras: &[(NodeId, usize)], max: usize) -> Vec<String> {
    if max == 0 {
        return Vec::new();
    }
    let mut rendered: Vec<String> = extras
        .iter()
        .map(|&(node, count)| {
            let mut text = interner.render(node);
            if count > 1 {
                let _ = write!(text, " (x{count})");
            }
            text
        })
        .collect();
    rendered.sort_unstable();
    rendered.truncate(max);
    rendered
}

/// A multiplicative word hasher in the style of rustc's FxHash: several
/// times faster than SipHash on the small keys hashed here, and hash
/// flooding is no concern when comparing two files.
#[derive(Default)]
struct FastHasher(u64);

type FastBuild = BuildHasherDefault<FastHasher>;

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, value: u8) {
        self.add(u64::from(value));
    }

    fn write_u32(&mut self, value: u32) {
        self.add(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.add(value);
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The id of an interned description.
type NodeId = u32;

/// How a named type is described when referenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum RefKind {
    Struct,
    Union,
    Enum,
    Enum64,
    FwdStruct,
    FwdUnion,
    Typedef,
}

/// A member: name, type, bit offset, bitfield size.
type MemberDesc<'s> = (&'s str, NodeId, u32, u8);

/// A canonical description; referenced types are node ids of their own
/// descriptions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Desc<'s> {
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
    },
}

/// Hash-consing store of descriptions. Lookup hashes a description to a
/// bucket and then compares full values, so equal ids mean equal
/// descriptions, never just equal hashes.
#[derive(Default)]
struct Interner<'s> {
    nodes: Vec<Desc<'s>>,
    /// First node of each hash bucket.
    heads: HashMap<u64, NodeId, FastBuild>,
    /// Next node in the same bucket, `NO_NODE` at the end.
    next_in_bucket: Vec<NodeId>,
}

const NO_NODE: NodeId = NodeId::MAX;

impl<'s> Interner<'s> {
    fn intern(&mut self, desc: Desc<'s>) -> NodeId {
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

    fn render(&self, node: NodeId) -> String {
        let mut out = String::new();
        self.render_into(&mut out, node, 0);
        if out.len() > MAX_RENDERED_LEN {
            let mut cut = MAX_RENDERED_LEN;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("...");
        }
        out
    }

    fn render_into(&self, out: &mut String, node: NodeId, depth: usize) {
        if depth > MAX_RENDER_DEPTH || out.len() > MAX_RENDERED_LEN {
            out.push_str("...");
            return;
        }
        let Some(desc) = self.nodes.get(node as usize) else {
            out.push_str("<?>");
            return;
        };
        let depth = depth + 1;
        // `write!` into a String cannot fail.
        match desc {
            Desc::Void => out.push_str("void"),
            Desc::Dangling => out.push_str("<dangling>"),
            Desc::Cycle => out.push_str("<cycle>"),
            Desc::Ref(kind, name) => {
                let kind = match kind {
                    RefKind::Struct => "struct",
                    RefKind::Union => "union",
                    RefKind::Enum => "enum",
                    RefKind::Enum64 => "enum64",
                    RefKind::FwdStruct => "fwd struct",
                    RefKind::FwdUnion => "fwd union",
                    RefKind::Typedef => "typedef",
                };
                let _ = write!(out, "{kind} {name}");
            }
            Desc::Int {
                name,
                size,
                encoding,
                offset,
                bits,
            } => {
                // Only unusual offsets and widths are shown, to keep the
                // examples readable; they are compared all the same.
                let encoding = int_encoding_name(*encoding);
                let _ = write!(out, "INT '{name}' size={size} encoding={encoding}");
                if *offset != 0 {
                    let _ = write!(out, " bits_offset={offset}");
                }
                if u64::from(*bits) != u64::from(*size) * 8 {
                    let _ = write!(out, " nr_bits={bits}");
                }
            }
            Desc::Ptr(ty) => self.render_wrapped(out, "PTR", *ty, depth),
            Desc::Volatile(ty) => self.render_wrapped(out, "VOLATILE", *ty, depth),
            Desc::Const(ty) => self.render_wrapped(out, "CONST", *ty, depth),
            Desc::Restrict(ty) => self.render_wrapped(out, "RESTRICT", *ty, depth),
            Desc::Array {
                elem,
                index,
                nelems,
            } => {
                self.render_wrapped(out, "ARRAY", *elem, depth);
                let _ = write!(out, "[{nelems}] index=");
                self.render_into(out, *index, depth);
            }
            Desc::Struct {
                name,
                size,
                kind_flag,
                members,
            } => self.render_aggregate(out, "STRUCT", name, *size, *kind_flag, members, depth),
            Desc::Union {
                name,
                size,
                kind_flag,
                members,
            } => self.render_aggregate(out, "UNION", name, *size, *kind_flag, members, depth),
            Desc::Enum {
                name,
                size,
                signed,
                values,
            } => render_enum(out, "ENUM", name, *size, *signed, values),
            Desc::Enum64 {
                name,
                size,
                signed,
                values,
            } => render_enum(out, "ENUM64", name, *size, *signed, values),
            Desc::Fwd { name, union } => {
                let _ = write!(out, "FWD '{name}' fwd_kind={}", fwd_kind_name(*union));
            }
            Desc::Typedef { name, ty } => {
                let _ = write!(out, "TYPEDEF '{name}' = ");
                self.render_into(out, *ty, depth);
            }
            Desc::TypeTag { name, ty } => {
                let _ = write!(out, "TYPE_TAG '{name}'(");
                self.render_into(out, *ty, depth);
                out.push(')');
            }
            Desc::Func { name, ty, linkage } => {
                let _ = write!(out, "FUNC '{name}' linkage={} ", linkage_name(*linkage));
                self.render_into(out, *ty, depth);
            }
            Desc::Var { name, ty, linkage } => {
                let _ = write!(out, "VAR '{name}' linkage={} ", linkage_name(*linkage));
                self.render_into(out, *ty, depth);
            }
            Desc::FuncProto { ret, params } => {
                out.push_str("FUNC_PROTO (");
                for (i, (name, ty)) in params.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "'{name}': ");
                    self.render_into(out, *ty, depth);
                }
                out.push_str(") -> ");
                self.render_into(out, *ret, depth);
            }
            Desc::Datasec { name, size, vars } => {
                let _ = write!(out, "DATASEC '{name}'");
                if let Some(size) = size {
                    let _ = write!(out, " size={size}");
                }
                out.push_str(" {");
                for (i, (ty, offset, size)) in vars.iter().enumerate() {
                    if i > 0 {
                        out.push_str("; ");
                    }
                    self.render_into(out, *ty, depth);
                    if let Some(offset) = offset {
                        let _ = write!(out, " @{offset}");
                    }
                    let _ = write!(out, " size={size}");
                }
                out.push('}');
            }
            Desc::Float { name, size } => {
                let _ = write!(out, "FLOAT '{name}' size={size}");
            }
            Desc::DeclTag {
                name,
                ty,
                component_idx,
            } => {
                let _ = write!(out, "DECL_TAG '{name}' component_idx={component_idx} on ");
                self.render_into(out, *ty, depth);
            }
        }
    }

    fn render_wrapped(&self, out: &mut String, kind: &str, ty: NodeId, depth: usize) {
        out.push_str(kind);
        out.push('(');
        self.render_into(out, ty, depth);
        out.push(')');
    }

    #[allow(clippy::too_many_arguments)]
    fn render_aggregate(
        &self,
        out: &mut String,
        kind: &str,
        name: &str,
        size: u32,
        kind_flag: bool,
        members: &[MemberDesc<'_>],
        depth: usize,
    ) {
        let _ = write!(
            out,
            "{kind} '{name}' size={size} kflag={} {{",
            u8::from(kind_flag)
        );
        for (i, (member, ty, bit_offset, bitfield_size)) in members.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            let _ = write!(out, "'{member}': ");
            self.render_into(out, *ty, depth);
            let _ = write!(out, " @{bit_offset}");
            if *bitfield_size != 0 {
                let _ = write!(out, ":{bitfield_size}");
            }
        }
        out.push('}');
    }
}

fn render_enum(
    out: &mut String,
    kind: &str,
    name: &str,
    size: u32,
    signed: bool,
    values: &[(&str, u64)],
) {
    let encoding = signedness(signed);
    let _ = write!(out, "{kind} '{name}' size={size} encoding={encoding} {{");
    for (i, (value_name, value)) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if signed {
            let _ = write!(out, "{value_name}={}", *value as i64);
        } else {
            let _ = write!(out, "{value_name}={value}");
        }
    }
    out.push('}');
}

/// Progress of one type id's description.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Unvisited,
    InProgress,
    Done(NodeId),
}

/// Describes the types of one side (a table and its optional base),
/// memoizing per type id.
struct Describer<'t, 's> {
    btf: &'t Btf<'s>,
    base: Option<&'t Btf<'s>>,
    /// Number of base ids with a slot (those the base really holds).
    base_slots: u32,
    /// [`DiffOptions::datasec_layout`].
    datasec_layout: bool,
    /// Indexed by [`Describer::slot`].
    states: Vec<State>,
    /// The interned name-only (or void/dangling) reference node of each id,
    /// `NO_NODE` until first needed: most references are to named types.
    leaf_nodes: Vec<NodeId>,
}

/// What a reference to a type id is described as.
enum Reference<'s> {
    /// A fixed description (void, dangling, a named-type reference).
    Leaf(Desc<'s>),
    /// The full description of the type, which needs describing first.
    Expand,
}

impl<'t, 's> Describer<'t, 's> {
    fn new(btf: &'t Btf<'s>, base: Option<&'t Btf<'s>>, datasec_layout: bool) -> Self {
        let base_slots = base.map_or(0, |base| base.count().min(btf.base_type_count));
        let slots = base_slots as usize + btf.types.len() + 1;
        Describer {
            btf,
            base,
            base_slots,
            datasec_layout,
            states: vec![State::Unvisited; slots],
            leaf_nodes: vec![NO_NODE; slots],
        }
    }

    /// Where `id` is kept in `states` and `leaf_nodes`: slots exist only
    /// for ids that resolve, so a table claiming a huge base without
    /// supplying one costs nothing.
    fn slot(&self, id: TypeId) -> Option<usize> {
        if id.0 <= self.btf.base_type_count {
            (id.0 <= self.base_slots).then_some(id.0 as usize)
        } else {
            let index = id.0 - self.btf.base_type_count - 1;
            (index < self.btf.count()).then_some(self.base_slots as usize + 1 + index as usize)
        }
    }

    fn get(&self, id: TypeId) -> Option<&'t Type<'s>> {
        if id == TypeId::VOID {
            None
        } else if id.0 <= self.btf.base_type_count {
            self.base.and_then(|base| base.get(id))
        } else {
            self.btf.get(id)
        }
    }

    fn state(&self, id: TypeId) -> State {
        self.slot(id)
            .and_then(|slot| self.states.get(slot))
            .copied()
            .unwrap_or(State::Unvisited)
    }

    fn set_state(&mut self, id: TypeId, state: State) {
        if let Some(slot) = self.slot(id).and_then(|slot| self.states.get_mut(slot)) {
            *slot = state;
        }
    }

    fn classify(&self, id: TypeId) -> Reference<'s> {
        if id == TypeId::VOID {
            return Reference::Leaf(Desc::Void);
        }
        let Some(ty) = self.get(id) else {
            return Reference::Leaf(Desc::Dangling);
        };
        match named_reference(ty) {
            Some(desc) => Reference::Leaf(desc),
            None => Reference::Expand,
        }
    }

    /// The node of `root`'s own full description (not its name-only
    /// reference form).
    ///
    /// Walks the graph with an explicit stack, so that long reference
    /// chains cannot overflow the call stack; every id is described once.
    fn describe(&mut self, interner: &mut Interner<'s>, root: TypeId) -> NodeId {
        if let State::Done(node) = self.state(root) {
            return node;
        }
        let Some(_) = self.get(root) else {
            let desc = if root == TypeId::VOID {
                Desc::Void
            } else {
                Desc::Dangling
            };
            return interner.intern(desc);
        };
        // (type id, index of the next reference to look at)
        let mut stack: Vec<(TypeId, usize)> = vec![(root, 0)];
        self.set_state(root, State::InProgress);
        'walk: while let Some(&(id, start)) = stack.last() {
            let Some(ty) = self.get(id) else {
                // Only ids that resolved are pushed; treat defensively.
                stack.pop();
                continue;
            };
            let mut index = start;
            while let Some(child) = reference_at(ty, index) {
                index += 1;
                if let Reference::Expand = self.classify(child) {
                    if self.state(child) == State::Unvisited {
                        if let Some(top) = stack.last_mut() {
                            top.1 = index;
                        }
                        self.set_state(child, State::InProgress);
                        stack.push((child, 0));
                        continue 'walk;
                    }
                }
            }
            let desc = self.build(interner, ty);
            let node = interner.intern(desc);
            self.set_state(id, State::Done(node));
            stack.pop();
        }
        match self.state(root) {
            State::Done(node) => node,
            // Unreachable: the walk finishes the root last.
            State::Unvisited | State::InProgress => interner.intern(Desc::Cycle),
        }
    }

    /// The node a reference to `id` is described by; every expandable
    /// child has been described (or is on the walk stack) by now.
    fn reference_node(&mut self, interner: &mut Interner<'s>, id: TypeId) -> NodeId {
        let slot = self.slot(id);
        let cached = slot
            .and_then(|slot| self.leaf_nodes.get(slot))
            .copied()
            .unwrap_or(NO_NODE);
        if cached != NO_NODE {
            return cached;
        }
        match self.classify(id) {
            Reference::Leaf(desc) => {
                let node = interner.intern(desc);
                if let Some(cache) = slot.and_then(|slot| self.leaf_nodes.get_mut(slot)) {
                    *cache = node;
                }
                node
            }
            Reference::Expand => match self.state(id) {
                State::Done(node) => node,
                State::InProgress | State::Unvisited => interner.intern(Desc::Cycle),
            },
        }
    }

    fn build(&mut self, interner: &mut Interner<'s>, ty: &'t Type<'s>) -> Desc<'s> {
        let layout = self.datasec_layout;
        let mut node = |id: TypeId| self.reference_node(interner, id);
        match ty {
            Type::Int(int) => Desc::Int {
                name: int.name,
                size: int.size,
                encoding: int.encoding.0,
                offset: int.offset,
                bits: int.bits,
            },
            Type::Ptr(target) => Desc::Ptr(node(*target)),
            Type::Volatile(target) => Desc::Volatile(node(*target)),
            Type::Const(target) => Desc::Const(node(*target)),
            Type::Restrict(target) => Desc::Restrict(node(*target)),
            Type::Array(array) => Desc::Array {
                elem: node(array.elem),
                index: node(array.index),
                nelems: array.nelems,
            },
            Type::Struct(composite) => {
                let (name, size, kind_flag, members) = aggregate_fields(composite, &mut node);
                Desc::Struct {
                    name,
                    size,
                    kind_flag,
                    members,
                }
            }
            Type::Union(composite) => {
                let (name, size, kind_flag, members) = aggregate_fields(composite, &mut node);
                Desc::Union {
                    name,
                    size,
                    kind_flag,
                    members,
                }
            }
            Type::Enum(e) => Desc::Enum {
                name: e.name,
                size: e.size,
                signed: e.signed,
                // ENUM stores 32 bits; compare those, sign-extended when
                // signed, whatever extension the model chose.
                values: enum_values(e, |value| {
                    if e.signed {
                        value as u32 as i32 as i64 as u64
                    } else {
                        u64::from(value as u32)
                    }
                }),
            },
            Type::Enum64(e) => Desc::Enum64 {
                name: e.name,
                size: e.size,
                signed: e.signed,
                values: enum_values(e, |value| value),
            },
            Type::Fwd(fwd) => Desc::Fwd {
                name: fwd.name,
                union: fwd.union,
            },
            Type::Typedef(named) => Desc::Typedef {
                name: named.name,
                ty: node(named.ty),
            },
            Type::TypeTag(named) => Desc::TypeTag {
                name: named.name,
                ty: node(named.ty),
            },
            Type::Func(func) => Desc::Func {
                name: func.name,
                ty: node(func.ty),
                linkage: func.linkage,
            },
            Type::Var(var) => Desc::Var {
                name: var.name,
                ty: node(var.ty),
                linkage: var.linkage,
            },
            Type::FuncProto(proto) => Desc::FuncProto {
                ret: node(proto.ret),
                params: proto
                    .params
                    .iter()
                    .map(|param| (param.name, node(param.ty)))
                    .collect(),
            },
            Type::Datasec(datasec) => {
                let mut vars: Vec<(NodeId, Option<u32>, u32)> = datasec
                    .vars
                    .iter()
                    .map(|var| (node(var.ty), layout.then_some(var.offset), var.size))
                    .collect();
                if !layout {
                    // Node ids come from the interner both sides share, so
                    // equal multisets sort to equal sequences.
                    vars.sort_unstable();
                }
                Desc::Datasec {
                    name: datasec.name,
                    size: layout.then_some(datasec.size),
                    vars: vars.into_boxed_slice(),
                }
            }
            Type::Float(float) => Desc::Float {
                name: float.name,
                size: float.size,
            },
            Type::DeclTag(tag) => Desc::DeclTag {
                name: tag.name,
                ty: node(tag.ty),
                component_idx: tag.component_idx,
            },
        }
    }
}

type AggregateFields<'s> = (&'s str, u32, bool, Box<[MemberDesc<'s>]>);

fn aggregate_fields<'s>(
    composite: &Composite<'s>,
    node: &mut impl FnMut(TypeId) -> NodeId,
) -> AggregateFields<'s> {
    let members = composite
        .members
        .iter()
        .map(|member| {
            (
                member.name,
                node(member.ty),
                member.bit_offset,
                member.bitfield_size,
            )
        })
        .collect();
    (composite.name, composite.size, composite.kind_flag, members)
}

fn enum_values<'s>(e: &Enum<'s>, normalize: impl Fn(u64) -> u64) -> Box<[(&'s str, u64)]> {
    e.values
        .iter()
        .map(|value| (value.name, normalize(value.value)))
        .collect()
}

/// The name-only description of a reference to `ty`, for the kinds that
/// are referenced by name; `None` when the type must be expanded inline.
fn named_reference<'s>(ty: &Type<'s>) -> Option<Desc<'s>> {
    let (kind, name) = match ty {
        Type::Struct(c) => (RefKind::Struct, c.name),
        Type::Union(c) => (RefKind::Union, c.name),
        Type::Enum(e) => (RefKind::Enum, e.name),
        Type::Enum64(e) => (RefKind::Enum64, e.name),
        Type::Fwd(fwd) if fwd.union => (RefKind::FwdUnion, fwd.name),
        Type::Fwd(fwd) => (RefKind::FwdStruct, fwd.name),
        Type::Typedef(named) => (RefKind::Typedef, named.name),
        _ => return None,
    };
    if name.is_empty() {
        None
    } else {
        Some(Desc::Ref(kind, name))
    }
}

/// The `index`-th type id that `ty` references, in field order.
fn reference_at(ty: &Type<'_>, index: usize) -> Option<TypeId> {
    match ty {
        Type::Int(_) | Type::Enum(_) | Type::Enum64(_) | Type::Fwd(_) | Type::Float(_) => None,
        Type::Ptr(target)
        | Type::Volatile(target)
        | Type::Const(target)
        | Type::Restrict(target) => (index == 0).then_some(*target),
        Type::Typedef(named) | Type::TypeTag(named) => (index == 0).then_some(named.ty),
        Type::Func(object) | Type::Var(object) => (index == 0).then_some(object.ty),
        Type::DeclTag(tag) => (index == 0).then_some(tag.ty),
        Type::Array(array) => match index {
            0 => Some(array.elem),
            1 => Some(array.index),
            _ => None,
        },
        Type::Struct(composite) | Type::Union(composite) => {
            composite.members.get(index).map(|member| member.ty)
        }
        Type::FuncProto(proto) => match index.checked_sub(1) {
            None => Some(proto.ret),
            Some(param) => proto.params.get(param).map(|param| param.ty),
        },
        Type::Datasec(datasec) => datasec.vars.get(index).map(|var| var.ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::*;

    fn int_type(name: &str, size: u32, signed: bool) -> Type<'_> {
        Type::Int(Int {
            name,
            size,
            encoding: IntEncoding(if signed { IntEncoding::SIGNED } else { 0 }),
            offset: 0,
            bits: (size * 8) as u8,
        })
    }

    fn member(name: &str, ty: TypeId, bit_offset: u32, bitfield_size: u8) -> Member<'_> {
        Member {
            name,
            ty,
            bit_offset,
            bitfield_size,
        }
    }

    /// A small table with every kind, a named cycle (list_head), an
    /// anonymous union nested in a struct, and a DATASEC.
    fn sample() -> Btf<'static> {
        let mut btf = Btf::default();
        let int = btf.add(int_type("int", 4, true));
        let uint = btf.add(int_type("unsigned int", 4, false));
        let list = TypeId(btf.count() + 2);
        let list_ptr = btf.add(Type::Ptr(list));
        btf.add(Type::Struct(Composite {
            name: "list_head",
            size: 16,
            kind_flag: false,
            members: vec![
                member("next", list_ptr, 0, 0),
                member("prev", list_ptr, 64, 0),
            ],
        }));
        let anon_union = btf.add(Type::Union(Composite {
            name: "",
            size: 4,
            kind_flag: false,
            members: vec![member("i", int, 0, 0), member("u", uint, 0, 0)],
        }));
        let flags = btf.add(Type::Struct(Composite {
            name: "flags",
            size: 24,
            kind_flag: true,
            members: vec![
                member("a", uint, 0, 3),
                member("b", uint, 3, 5),
                member("", anon_union, 32, 0),
                member("list", list, 64, 0),
            ],
        }));
        btf.add(Type::Enum(Enum {
            name: "e",
            size: 4,
            signed: true,
            values: vec![EnumValue {
                name: "NEG",
                value: u64::MAX,
            }],
        }));
        btf.add(Type::Enum64(Enum {
            name: "",
            size: 8,
            signed: false,
            values: vec![EnumValue {
                name: "BIG",
                value: 1 << 40,
            }],
        }));
        let fwd = btf.add(Type::Fwd(Fwd {
            name: "opaque",
            union: false,
        }));
        let fwd_ptr = btf.add(Type::Ptr(fwd));
        let typedef = btf.add(Type::Typedef(Named {
            name: "flags_t",
            ty: flags,
        }));
        let cint = btf.add(Type::Const(int));
        let vint = btf.add(Type::Volatile(cint));
        let tagged = btf.add(Type::TypeTag(Named {
            name: "user",
            ty: vint,
        }));
        let tagged_ptr = btf.add(Type::Ptr(tagged));
        btf.add(Type::Restrict(tagged_ptr));
        let array = btf.add(Type::Array(Array {
            elem: typedef,
            index: int,
            nelems: 3,
        }));
        let proto = btf.add(Type::FuncProto(FuncProto {
            ret: int,
            params: vec![
                Param {
                    name: "f",
                    ty: fwd_ptr,
                },
                Param {
                    name: "t",
                    ty: tagged_ptr,
                },
                Param {
                    name: "",
                    ty: TypeId::VOID,
                },
            ],
        }));
        let func = btf.add(Type::Func(Object {
            name: "fn",
            ty: proto,
            linkage: Linkage::Global,
        }));
        btf.add(Type::DeclTag(DeclTag {
            name: "kfunc",
            ty: func,
            component_idx: -1,
        }));
        btf.add(Type::DeclTag(DeclTag {
            name: "m",
            ty: flags,
            component_idx: 2,
        }));
        let var = btf.add(Type::Var(Object {
            name: "v",
            ty: array,
            linkage: Linkage::Global,
        }));
        btf.add(Type::Float(Float {
            name: "double",
            size: 8,
        }));
        btf.add(Type::Datasec(Datasec {
            name: ".data",
            size: 48,
            vars: vec![VarSecInfo {
                ty: var,
                offset: 0,
                size: 48,
            }],
        }));
        // Two equal anonymous PTRs: multisets, not sets.
        btf.add(Type::Ptr(int));
        btf.add(Type::Ptr(int));
        btf
    }

    /// `ty` with every referenced id passed through `m`.
    pub(super) fn remap_type<'a>(ty: Type<'a>, m: &impl Fn(TypeId) -> TypeId) -> Type<'a> {
        match ty {
            Type::Ptr(t) => Type::Ptr(m(t)),
            Type::Volatile(t) => Type::Volatile(m(t)),
            Type::Const(t) => Type::Const(m(t)),
            Type::Restrict(t) => Type::Restrict(m(t)),
            Type::Array(a) => Type::Array(Array {
                elem: m(a.elem),
                index: m(a.index),
                nelems: a.nelems,
            }),
            Type::Struct(mut c) => {
                c.members.iter_mut().for_each(|mb| mb.ty = m(mb.ty));
                Type::Struct(c)
            }
            Type::Union(mut c) => {
                c.members.iter_mut().for_each(|mb| mb.ty = m(mb.ty));
                Type::Union(c)
            }
            Type::Typedef(n) => Type::Typedef(Named { ty: m(n.ty), ..n }),
            Type::TypeTag(n) => Type::TypeTag(Named { ty: m(n.ty), ..n }),
            Type::Func(o) => Type::Func(Object { ty: m(o.ty), ..o }),
            Type::Var(o) => Type::Var(Object { ty: m(o.ty), ..o }),
            Type::FuncProto(mut p) => {
                p.ret = m(p.ret);
                p.params.iter_mut().for_each(|pa| pa.ty = m(pa.ty));
                Type::FuncProto(p)
            }
            Type::Datasec(mut d) => {
                d.vars.iter_mut().for_each(|v| v.ty = m(v.ty));
                Type::Datasec(d)
            }
            Type::DeclTag(t) => Type::DeclTag(DeclTag { ty: m(t.ty), ..t }),
            other @ (Type::Int(_)
            | Type::Enum(_)
            | Type::Enum64(_)
            | Type::Fwd(_)
            | Type::Float(_)) => other,
        }
    }

    /// A map from old to new absolute ids (indexed by old id) that
    /// renumbers `btf`'s own types by `order` (the type at `order[i]` moves
    /// to position i) and keeps void and the base's ids.
    pub(super) fn permutation_map(btf: &Btf<'_>, order: &[usize]) -> Vec<u32> {
        let first = btf.first_id().0 as usize;
        let mut map: Vec<u32> = (0..first as u32).collect();
        map.resize(first + btf.types.len(), 0);
        for (new_index, &old_index) in order.iter().enumerate() {
            map[first + old_index] = (first + new_index) as u32;
        }
        map
    }

    /// `btf`'s types in `order` with references rewritten by `map`
    /// (ids past the map, e.g. dangling ones, are kept).
    pub(super) fn reorder<'a>(btf: &Btf<'a>, order: &[usize], map: &[u32]) -> Btf<'a> {
        let m = |id: TypeId| TypeId(map.get(id.0 as usize).copied().unwrap_or(id.0));
        Btf {
            base_type_count: btf.base_type_count,
            base_str_len: btf.base_str_len,
            types: order
                .iter()
                .map(|&i| remap_type(btf.types[i].clone(), &m))
                .collect(),
        }
    }

    /// `btf` with its own types renumbered by `order`.
    pub(super) fn permute<'a>(btf: &Btf<'a>, order: &[usize]) -> Btf<'a> {
        reorder(btf, order, &permutation_map(btf, order))
    }

    /// A deterministic shuffle (xorshift), enough to scramble ids.
    pub(super) fn scrambled(len: usize, seed: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..len).collect();
        let mut state = seed | 1;
        for i in (1..len).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        order
    }

    #[test]
    fn a_table_equals_itself() {
        let btf = sample();
        let report = diff(&btf, None, &btf, None);
        assert!(report.is_empty(), "{report}");
        assert_eq!(report.to_string(), "");
        assert_eq!(
            report.kind(Kind::PTR).map(|k| (k.a_total, k.b_total)),
            Some((5, 5))
        );
        assert!(report.kinds.iter().all(|k| k.a_total == k.b_total));
    }

    #[test]
    fn permuting_ids_changes_nothing() {
        let btf = sample();
        for seed in [1, 7, 42, 1234] {
            let permuted = permute(&btf, &scrambled(btf.types.len(), seed));
            let report = diff(&btf, None, &permuted, None);
            assert!(report.is_empty(), "seed {seed}: {report}");
        }
    }

    #[test]
    fn renaming_a_member_is_one_struct_difference() {
        let btf = sample();
        let mut changed = btf.clone();
        let Some(Type::Struct(flags)) = changed.types.get_mut(5) else {
            panic!("layout")
        };
        assert_eq!(flags.name, "flags");
        flags.members[3].name = "node";
        let report = diff(&btf, None, &changed, None);
        assert_eq!(report.difference_count(), 2, "{report}");
        let structs = report.kind(Kind::STRUCT).unwrap();
        assert_eq!((structs.only_a, structs.only_b), (1, 1));
        assert!(
            report.differences_outside(&[Kind::STRUCT]).is_empty(),
            "{report}"
        );
        assert!(
            structs.examples_a[0].contains("'list': struct list_head @64"),
            "{report}"
        );
        assert!(
            structs.examples_b[0].contains("'node': struct list_head @64"),
            "{report}"
        );
    }

    #[test]
    fn changing_a_bitfield_size_is_one_struct_difference() {
        let btf = sample();
        let mut changed = btf.clone();
        let Some(Type::Struct(flags)) = changed.types.get_mut(5) else {
            panic!("layout")
        };
        flags.members[1].bitfield_size = 6;
        let report = diff(&btf, None, &changed, None);
        let structs = report.kind(Kind::STRUCT).unwrap();
        assert_eq!((structs.only_a, structs.only_b), (1, 1));
        assert_eq!(report.difference_count(), 2);
        assert!(structs.examples_b[0].contains("@3:6"), "{report}");
    }

    #[test]
    fn anonymous_changes_propagate_to_their_users() {
        let btf = sample();
        let mut changed = btf.clone();
        // The anonymous union is described inline inside `flags`.
        let Some(Type::Union(anon)) = changed.types.get_mut(4) else {
            panic!("layout")
        };
        anon.members[1].name = "w";
        let report = diff(&btf, None, &changed, None);
        assert_eq!(
            report.kind(Kind::UNION).map(|k| (k.only_a, k.only_b)),
            Some((1, 1))
        );
        assert_eq!(
            report.kind(Kind::STRUCT).map(|k| (k.only_a, k.only_b)),
            Some((1, 1))
        );
    }

    #[test]
    fn multiplicity_counts() {
        let btf = sample();
        let mut fewer = btf.clone();
        fewer.types.pop();
        let report = diff(&btf, None, &fewer, None);
        let ptrs = report.kind(Kind::PTR).unwrap();
        assert_eq!(
            (ptrs.a_total, ptrs.b_total, ptrs.only_a, ptrs.only_b),
            (5, 4, 1, 0)
        );
        assert_eq!(report.difference_count(), 1);
    }

    #[test]
    fn split_tables_compare_through_equal_bases_with_different_ids() {
        let mut base_a = Btf::default();
        let int_a = base_a.add(int_type("int", 4, true));
        let long_a = base_a.add(int_type("long", 8, true));
        let mut base_b = Btf::default();
        let long_b = base_b.add(int_type("long", 8, true));
        let int_b = base_b.add(int_type("int", 4, true));
        let split = |int: TypeId, long: TypeId| {
            let mut split = Btf {
                base_type_count: 2,
                ..Btf::default()
            };
            let ptr = split.add(Type::Ptr(int));
            split.add(Type::Struct(Composite {
                name: "s",
                size: 16,
                kind_flag: false,
                members: vec![member("p", ptr, 0, 0), member("l", long, 64, 0)],
            }));
            split
        };
        let split_a = split(int_a, long_a);
        let split_b = split(int_b, long_b);
        let report = diff(&split_a, Some(&base_a), &split_b, Some(&base_b));
        assert!(report.is_empty(), "{report}");
        assert_eq!(report.kinds.iter().map(|k| k.a_total).sum::<usize>(), 2);

        // Same ids, but the base's `long` became 4 bytes: the split's
        // struct differs although its own fields did not change.
        let mut base_c = base_a.clone();
        base_c.types[1] = int_type("long", 4, true);
        let report = diff(&split_a, Some(&base_a), &split_a, Some(&base_c));
        assert_eq!(
            report.kind(Kind::STRUCT).map(|k| (k.only_a, k.only_b)),
            Some((1, 1))
        );
    }

    #[test]
    fn datasec_layout_is_compared_only_on_request() {
        let btf = sample();
        let mut relinked = btf.clone();
        let Some(Type::Datasec(section)) = relinked
            .types
            .iter_mut()
            .find(|ty| matches!(ty, Type::Datasec(_)))
        else {
            panic!("layout")
        };
        let var = section.vars[0].clone();
        section.size += 64;
        section.vars.insert(0, VarSecInfo { offset: 0, ..var });
        section.vars[1].offset += 64;
        let mut original = btf.clone();
        let Some(Type::Datasec(section)) = original
            .types
            .iter_mut()
            .find(|ty| matches!(ty, Type::Datasec(_)))
        else {
            panic!("layout")
        };
        section.vars.push(VarSecInfo { offset: 48, ..var });
        section.size += 48;

        // Same variables (twice the same one), other offsets and size.
        assert!(diff(&original, None, &relinked, None).is_empty());
        let strict = DiffOptions {
            datasec_layout: true,
            ..DiffOptions::default()
        };
        let report = diff_with(&original, None, &relinked, None, &strict);
        assert_eq!(
            report.kind(Kind::DATASEC).map(|k| (k.only_a, k.only_b)),
            Some((1, 1))
        );
        assert!(report.to_string().contains(" @64 size=48"), "{report}");

        // A variable's size is compared either way.
        let mut resized = original.clone();
        if let Some(Type::Datasec(section)) = resized
            .types
            .iter_mut()
            .find(|ty| matches!(ty, Type::Datasec(_)))
        {
            section.vars[0].size = 8;
        }
        assert_eq!(diff(&original, None, &resized, None).difference_count(), 2);
    }

    #[test]
    fn a_split_without_its_base_describes_base_references_as_dangling() {
        // Claims a base of four billion types but supplies none: nothing
        // may be allocated per base id.
        let mut split = Btf {
            base_type_count: u32::MAX - 10,
            ..Btf::default()
        };
        split.add(Type::Ptr(TypeId(5)));
        split.add(Type::Ptr(TypeId(u32::MAX - 9)));
        let report = diff(&split, None, &split, None);
        assert!(report.is_empty(), "{report}");
        let mut other = split.clone();
        other.types[1] = Type::Ptr(TypeId(7));
        let report = diff(&split, None, &other, None);
        // PTR(dangling) vs PTR(PTR(dangling))
        assert_eq!(
            report.kind(Kind::PTR).map(|k| (k.only_a, k.only_b)),
            Some((1, 1))
        );
        assert!(report.to_string().contains("PTR(<dangling>)"));
    }

    #[test]
    fn invalid_graphs_terminate() {
        let mut btf = Btf::default();
        // PTR -> CONST -> PTR (itself) loop, an anonymous self-referencing
        // struct, a dangling id, and a 200k-long pointer chain.
        btf.add(Type::Ptr(TypeId(2)));
        btf.add(Type::Const(TypeId(1)));
        let anon = TypeId(btf.count() + 2);
        let anon_ptr = btf.add(Type::Ptr(anon));
        btf.add(Type::Struct(Composite {
            name: "",
            size: 8,
            kind_flag: false,
            members: vec![
                member("self", anon_ptr, 0, 0),
                member("bad", TypeId(9_999_999), 0, 0),
            ],
        }));
        let mut previous = btf.add(int_type("int", 4, true));
        for _ in 0..200_000 {
            previous = btf.add(Type::Ptr(previous));
        }
        let report = diff(&btf, None, &btf, None);
        assert!(report.is_empty(), "{report}");
        let mut shorter = btf.clone();
        shorter.types.pop();
        let report = diff(&btf, None, &shorter, None);
        assert_eq!(report.difference_count(), 1);
        let text = report.to_string();
        assert!(text.len() < 10 * MAX_RENDERED_LEN, "{} bytes", text.len());
    }

    #[test]
    fn display_lists_every_kind_and_examples() {
        let btf = sample();
        let mut fewer = btf.clone();
        fewer.types.retain(|ty| !matches!(ty, Type::Float(_)));
        let text = diff(&btf, None, &fewer, None).to_string();
        assert!(
            text.contains("FLOAT: a=1 b=0 only_a=1 only_b=0\n  only in a: FLOAT 'double' size=8\n"),
            "{text}"
        );
        assert!(
            text.contains("STRUCT: a=2 b=2 only_a=0 only_b=0\n"),
            "{text}"
        );
    }
}

/// The diff on pahole's real kernel BTF: vmlinux (95k types) and a split
/// module. Skipped, with a note on stderr, when the files are missing.
#[cfg(test)]
mod real_files {
    use super::tests::{permutation_map, permute, reorder, scrambled};
    use super::*;
    use crate::read;
    use std::path::Path;
    use std::time::Instant;

    
    fn load(relative: &str) -> Option<Vec<u8>> {
        let path = Path::new(crate::test_reference::dir()).join(relative);
        let bytes = std::fs::read(&path);
        if bytes.is_err() {
            eprintln!("skipped: {} not readable", path.display());
        }
        bytes.ok()
    }

    /// Per-kind counts of bpftool's dump of the file, the oracle for the
    /// report's totals; `None` when bpftool is unavailable.
    fn bpftool_kind_counts(relative: &str) -> Option<HashMap<String, usize>> {
        let path = Path::new(crate::test_reference::dir()).join(relative);
        let output = std::process::Command::new("bpftool")
            .args(["btf", "dump", "file"])
            .arg(path)
            .output()
            .ok()?;
        let mut counts = HashMap::new();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            if let Some(kind) = line
                .strip_prefix('[')
                .and_then(|rest| rest.split(' ').nth(1))
            {
                *counts.entry(kind.to_owned()).or_default() += 1;
            }
        }
        Some(counts)
    }

    #[test]
    fn vmlinux_equals_itself_and_its_permutations() {
        let Some(bytes) = load("vmlinux.btf") else {
            return;
        };
        let btf = read::parse(&bytes, None).unwrap().btf;

        let start = Instant::now();
        let report = diff(&btf, None, &btf, None);
        eprintln!("diff(vmlinux, vmlinux): {:?}", start.elapsed());
        assert!(report.is_empty(), "{report}");
        if let Some(counts) = bpftool_kind_counts("vmlinux.btf") {
            for entry in &report.kinds {
                let expected = counts.get(entry.kind.name()).copied().unwrap_or(0);
                assert_eq!(
                    (entry.a_total, entry.b_total),
                    (expected, expected),
                    "{}",
                    entry.kind
                );
            }
            assert_eq!(report.kinds.len(), counts.len());
        }

        let permuted = permute(&btf, &scrambled(btf.types.len(), 0x5eed));
        let start = Instant::now();
        let report = diff(&btf, None, &permuted, None);
        eprintln!("diff(vmlinux, permuted vmlinux): {:?}", start.elapsed());
        assert!(report.is_empty(), "{report}");
    }

    fn first_struct_where<'t, 'a>(
        btf: &'t mut Btf<'a>,
        wanted: impl Fn(&Composite<'a>) -> bool,
    ) -> &'t mut Composite<'a> {
        btf.types
            .iter_mut()
            .find_map(|ty| match ty {
                Type::Struct(c) if !c.name.is_empty() && wanted(c) => Some(c),
                _ => None,
            })
            .expect("vmlinux has such a struct")
    }

    #[test]
    fn single_changes_in_vmlinux_are_single_differences() {
        let Some(bytes) = load("vmlinux.btf") else {
            return;
        };
        let btf = read::parse(&bytes, None).unwrap().btf;

        let mut renamed = btf.clone();
        let target = first_struct_where(&mut renamed, |c| c.members.len() >= 2);
        let old_name = target.name;
        if let Some(first) = target.members.first_mut() {
            first.name = "btfenc_renamed_member";
        }
        let report = diff(&btf, None, &renamed, None);
        let structs = report.kind(Kind::STRUCT).unwrap();
        assert_eq!((structs.only_a, structs.only_b), (1, 1), "{report}");
        assert_eq!(report.difference_count(), 2, "{report}");
        assert!(
            structs.examples_b[0].starts_with(&format!("STRUCT '{old_name}'")),
            "{report}"
        );
        assert!(
            structs.examples_b[0].contains("btfenc_renamed_member"),
            "{report}"
        );

        let mut resized = btf.clone();
        let target = first_struct_where(&mut resized, |c| {
            c.members.iter().any(|m| m.bitfield_size == 1)
        });
        if let Some(bit) = target.members.iter_mut().find(|m| m.bitfield_size == 1) {
            bit.bitfield_size = 2;
        }
        let report = diff(&btf, None, &resized, None);
        assert_eq!(
            report.kind(Kind::STRUCT).map(|k| (k.only_a, k.only_b)),
            Some((1, 1)),
            "{report}"
        );
        assert!(
            report.differences_outside(&[Kind::STRUCT]).is_empty(),
            "{report}"
        );
    }

    /// Debian's own `.BTF` in the same vmlinux, written by pahole v1.24.
    const DEBIAN_VMLINUX: &str =
        ".cache/btfenc/extract/usr/lib/debug/boot/vmlinux-6.1.0-56-cloud-amd64";

    /// The `.BTF` section of a large ELF file, read without loading the
    /// whole file (the vmlinux is 590 MB).
    fn btf_section_of(path: &Path) -> Option<Vec<u8>> {
        use object::{Object, ObjectSection};
        let file = std::fs::File::open(path).ok()?;
        let cache = object::ReadCache::new(file);
        let elf = object::File::parse(&cache).ok()?;
        let data = elf.section_by_name(".BTF")?.data().ok()?;
        Some(data.to_vec())
    }

    /// The reference README (written by whoever produced it, not by this
    /// code) says pahole 1.24's and 1.31's BTF of this kernel have the same
    /// STRUCT/UNION/ENUM/TYPEDEF/ARRAY/PTR graph and differ only in which
    /// functions get a FUNC and in one per-CPU VAR.
    #[test]
    fn pahole_versions_differ_only_where_documented() {
        let home = std::env::var_os("HOME").unwrap_or_default();
        let debian_path = Path::new(&home).join(DEBIAN_VMLINUX);
        let (Some(new_bytes), Some(old_bytes)) =
            (load("vmlinux.btf"), btf_section_of(&debian_path))
        else {
            eprintln!("skipped: {} not readable", debian_path.display());
            return;
        };
        let new = read::parse(&new_bytes, None).unwrap().btf;
        let old = read::parse(&old_bytes, None).unwrap().btf;
        let report = diff(&new, None, &old, None);
        eprintln!("{report}");
        for kind in [
            Kind::STRUCT,
            Kind::UNION,
            Kind::ENUM,
            Kind::TYPEDEF,
            Kind::ARRAY,
            Kind::PTR,
        ] {
            let entry = report.kind(kind).unwrap();
            assert!(entry.is_empty(), "{report}");
        }
        let var = report.kind(Kind::VAR).unwrap();
        assert_eq!(var.only_a + var.only_b, 1, "{report}");
        assert!(!report.kind(Kind::FUNC).unwrap().is_empty());
    }

    /// Debian's xfs.ko, whose `.BTF` pahole v1.24 split on Debian's vmlinux.
    const DEBIAN_XFS: &str =
        ".cache/btfenc/extract/usr/lib/debug/lib/modules/6.1.0-56-cloud-amd64/kernel/fs/xfs/xfs.ko";

    /// The same module split on two different bases (pahole 1.24's and
    /// 1.31's vmlinux, whose type ids differ from the first FUNC on): its
    /// named aggregates must compare equal through the bases. (The other
    /// kinds differ: pahole 1.31's split repeats some typedefs, pointers
    /// and arrays that its base already has.)
    #[test]
    fn module_splits_on_different_bases_compare_through_them() {
        let home = std::env::var_os("HOME").unwrap_or_default();
        let old_vmlinux = btf_section_of(&Path::new(&home).join(DEBIAN_VMLINUX));
        let old_xfs = btf_section_of(&Path::new(&home).join(DEBIAN_XFS));
        let (Some(new_base_bytes), Some(new_xfs_bytes), Some(old_base_bytes), Some(old_xfs_bytes)) = (
            load("vmlinux.btf"),
            load("modules/xfs.btf"),
            old_vmlinux,
            old_xfs,
        ) else {
            eprintln!("skipped: Debian's vmlinux or xfs.ko not readable");
            return;
        };
        let new_base = read::parse(&new_base_bytes, None).unwrap();
        let new_xfs = read::parse(&new_xfs_bytes, Some(&new_base)).unwrap();
        let old_base = read::parse(&old_base_bytes, None).unwrap();
        let old_xfs = read::parse(&old_xfs_bytes, Some(&old_base)).unwrap();
        assert_ne!(new_xfs.btf.base_type_count, old_xfs.btf.base_type_count);
        let report = diff(
            &new_xfs.btf,
            Some(&new_base.btf),
            &old_xfs.btf,
            Some(&old_base.btf),
        );
        eprintln!("{report}");
        for kind in [Kind::STRUCT, Kind::UNION, Kind::ENUM] {
            let entry = report.kind(kind).unwrap();
            assert!(entry.a_total > 0 && entry.is_empty(), "{report}");
        }
    }

    #[test]
    fn split_module_compares_through_its_base() {
        let (Some(base_bytes), Some(split_bytes)) = (load("vmlinux.btf"), load("modules/xfs.btf"))
        else {
            return;
        };
        let base = read::parse(&base_bytes, None).unwrap();
        let split = read::parse(&split_bytes, Some(&base)).unwrap();
        let (base, split) = (&base.btf, &split.btf);

        let report = diff(split, Some(base), split, Some(base));
        assert!(report.is_empty(), "{report}");
        assert_eq!(
            report.kinds.iter().map(|k| k.a_total).sum::<usize>(),
            split.types.len()
        );

        // Permute the split's own ids.
        let permuted_split = permute(split, &scrambled(split.types.len(), 3));
        let report = diff(split, Some(base), &permuted_split, Some(base));
        assert!(report.is_empty(), "{report}");

        // Permute the base's ids and follow them in the split: the split's
        // descriptions must not depend on where the base put its types.
        let order = scrambled(base.types.len(), 11);
        let map = permutation_map(base, &order);
        let permuted_base = reorder(base, &order, &map);
        let split_order: Vec<usize> = (0..split.types.len()).collect();
        let relinked_split = reorder(split, &split_order, &map);
        let report = diff(split, Some(base), &relinked_split, Some(&permuted_base));
        assert!(report.is_empty(), "{report}");

        // A base where a struct the split refers to got another name: the
        // split's types that mention it no longer compare equal.
        let mut renamed_base = base.clone();
        let super_block = renamed_base
            .types
            .iter_mut()
            .find_map(|ty| match ty {
                Type::Struct(c) if c.name == "super_block" => Some(c),
                _ => None,
            })
            .expect("vmlinux has struct super_block");
        super_block.name = "btfenc_renamed";
        let report = diff(split, Some(base), split, Some(&renamed_base));
        assert!(!report.is_empty());
        let text = report.to_string();
        assert!(
            text.contains("struct super_block") && text.contains("struct btfenc_renamed"),
            "{text}"
        );
    }
}
