//! Cross-CU type deduplication with the semantics of libbpf's
//! `btf__dedup()` (libbpf 1.7, which pahole 1.31 embeds).
//!
//! The input is every CU's types in CU order, as the lowering produces them
//! (with exact copies already collapsed by [`Collapser`], which leaves the
//! result unchanged); the output holds one type per distinct type graph, in the
//! order of first (canonical) occurrence, exactly the type graph libbpf
//! would produce from the same input. The passes:
//!
//! 1. primitives (INT, FLOAT, FWD, ENUM/ENUM64, enum forward declarations
//!    resolved to full enums) by equality;
//! 2. STRUCT, UNION and TYPEDEF by type-graph equivalence, resolving FWDs
//!    to the structs/unions they meet (module `equiv`);
//! 3. FWDs whose name has exactly one canonical STRUCT/UNION, of their
//!    kind, are resolved to it;
//! 4. reference types (PTR, modifiers, ARRAY, FUNC, FUNC_PROTO, tags) by
//!    equality once their targets are canonical;
//! 5. compaction and renumbering. VAR and DATASEC are never merged.
//!
//! Split BTF: base types are canonical and immutable. A split type
//! equivalent to a base type becomes the base id; a split type that would
//! only be equivalent if a base FWD were resolved stays in the split.
//!
//! Deliberately reproduced libbpf 1.7 quirks (they decide the output):
//! split TYPEDEFs never match base TYPEDEFs (the base is filed under a
//! different signature), and the "identical types" fallback treats two
//! ARRAYs with equal element counts as identical. [`Flavor::Libbpf1_1`]
//! reproduces the libbpf that pahole 1.24 links instead.
//!
//! Which canonical candidate is tried first decides the result when
//! several fit, so the candidate table (module `table`) replays the iteration
//! order of libbpf's chained hash map, growth reversals included.
//!
//! The passes are inherently sequential (each type's outcome depends on
//! every earlier one); setup and the final copy run in parallel, and the
//! first two passes can run while the table is still being filled
//! ([`StreamingDedup`], module `streaming`). On Debian's vmlinux, the CUs
//! lower to 3.3 million types; the collapse leaves 0.85 million for these
//! passes (about 0.3 s of CPU, 0.2 s of it while the walk goes on; 1.1 s
//! for the uncollapsed table).
//!
//! How it is checked (tests at the end of this file): hand-derived
//! graphs; [`Flavor::Libbpf1_1`] against the system's libbpf 1.1 (an
//! oracle built at test time) on those graphs, on synthetic CUs cut from
//! vmlinux, on real modules split on Debian's `.BTF` and on all of
//! vmlinux; [`Flavor::Libbpf1_7`] against pahole 1.31's reference BTF of
//! vmlinux and six modules (identical outside FUNC selection). The heavy
//! ones are `#[ignore]`d: `cargo test --release -p btf-writer -- --ignored`.

use crate::types::Btf;

pub use self::collapse::{Collapser, CuIds, Leftovers, MergedNames, PreparedCu};
pub use self::common::{Dedup, Error, Flavor};
pub use self::streaming::StreamingDedup;

mod collapse;
mod common;
mod equiv;
mod keys;
mod output;
mod phases;
mod state;
mod streaming;
mod table;
mod view;

#[cfg(test)]
mod test_cus;
#[cfg(test)]
mod test_oracle;

/// Deduplicates `btf`, which is split on `base` when one is given, as
/// libbpf 1.7 does.
pub fn dedup<'a>(btf: &Btf<'a>, base: Option<&Btf<'a>>) -> Result<Dedup<'a>, Error> {
    dedup_as(btf, base, Flavor::default())
}

/// A base BTF set up once for deduplicating many splits on it (a kernel's
/// modules on vmlinux): its types validated, canonical and filed as
/// candidates. [`dedup_on`] then costs time in the split's size only.
#[derive(Debug)]
pub struct PreparedBase<'t, 'a> {
    types: &'t [crate::types::Type<'a>],
    flavor: Flavor,
    state: state::BaseState<'a>,
}

impl<'t, 'a> PreparedBase<'t, 'a> {
    /// Prepares the standalone `base` for splits deduplicated as libbpf
    /// `flavor` does.
    pub fn new(base: &'t Btf<'a>, flavor: Flavor) -> Result<Self, Error> {
        if base.base_type_count != 0 {
            return Err(Error::BaseMismatch {
                expected: 0,
                found: base.base_type_count,
            });
        }
        let state = state::BaseState::new(&base.types, flavor)?;
        Ok(PreparedBase {
            types: &base.types,
            flavor,
            state,
        })
    }

    /// Number of types in the base.
    pub fn type_count(&self) -> u32 {
        self.types.len() as u32
    }
}

/// [`dedup`] of a split on a [`PreparedBase`]: the same result as
/// `dedup_as(btf, Some(base), flavor)` with the flavor the base was
/// prepared for.
pub fn dedup_on<'a>(btf: &Btf<'a>, base: &PreparedBase<'_, 'a>) -> Result<Dedup<'a>, Error> {
    if btf.base_type_count as usize != base.types.len() {
        return Err(Error::BaseMismatch {
            expected: btf.base_type_count,
            found: base.types.len() as u32,
        });
    }
    let types = view::Types::new(base.types, &btf.types);
    let mut deduper = state::Deduper::on_base(types, base.flavor, &base.state)?;
    deduper.run()?;
    let (btf, remap) = deduper.finish(btf)?;
    Ok(Dedup { btf, remap })
}

/// [`dedup`] reproducing the given libbpf version.
pub fn dedup_as<'a>(
    btf: &Btf<'a>,
    base: Option<&Btf<'a>>,
    flavor: Flavor,
) -> Result<Dedup<'a>, Error> {
    let base_types = base.map_or(&[][..], |b| &b.types[..]);
    if btf.base_type_count as usize != base_types.len() {
        return Err(Error::BaseMismatch {
            expected: btf.base_type_count,
            found: base_types.len() as u32,
        });
    }
    let types = view::Types::new(base_types, &btf.types);
    let mut deduper = state::Deduper::new(types, flavor)?;
    deduper.run()?;
    let (btf, remap) = deduper.finish(btf)?;
    Ok(Dedup { btf, remap })
}

#[cfg(test)]
mod tests {
    //! Hand-built graphs in the spirit of the kernel selftests
    //! (`prog_tests/btf.c` dedup cases, `btf_dedup_split.c`). Expected
    //! outputs are derived by hand from libbpf's algorithm; the derivation
    //! is sketched next to each case.

    use super::*;
    use crate::test_reference::read as reference;
    use crate::test_types::test_name;
    use crate::types::*;

    fn int(name: &str) -> Type<'_> {
        crate::test_types::int(name, 4, IntEncoding::SIGNED)
    }
    fn ptr(to: u32) -> Type<'static> {
        Type::Ptr(TypeId(to))
    }
    fn st<'a>(name: &'a str, size: u32, members: &[(&'a str, u32, u32)]) -> Type<'a> {
        Type::Struct(Composite {
            name,
            size,
            members: members
                .iter()
                .map(|&(name, ty, bit_offset)| Member {
                    name: test_name(name),
                    ty: TypeId(ty),
                    bit_offset,
                    bitfield_size: 0,
                })
                .collect(),
            kind_flag: false,
        })
    }
    fn fwd(name: &str) -> Type<'_> {
        Type::Fwd(Fwd { name, union: false })
    }
    fn enm<'a>(name: &'a str, values: &[(&'a str, u64)]) -> Type<'a> {
        Type::Enum(Enum {
            name,
            size: 4,
            signed: false,
            values: values
                .iter()
                .map(|&(name, value)| EnumValue { name, value })
                .collect(),
        })
    }
    fn typedef(name: &str, to: u32) -> Type<'_> {
        Type::Typedef(Named {
            name,
            ty: TypeId(to),
        })
    }
    fn proto<'a>(ret: u32, params: &[(&'a str, u32)]) -> Type<'a> {
        Type::FuncProto(FuncProto {
            ret: TypeId(ret),
            params: params
                .iter()
                .map(|&(name, ty)| Param {
                    name: test_name(name),
                    ty: TypeId(ty),
                })
                .collect(),
        })
    }
    fn func(name: &str, proto: u32, linkage: Linkage) -> Type<'_> {
        Type::Func(Object {
            name,
            ty: TypeId(proto),
            linkage,
        })
    }
    fn var(name: &str, ty: u32) -> Type<'_> {
        Type::Var(Object {
            name,
            ty: TypeId(ty),
            linkage: Linkage::Global,
        })
    }
    fn standalone(types: Vec<Type<'_>>) -> Btf<'_> {
        Btf {
            types,
            base_type_count: 0,
            base_str_len: 0,
        }
    }
    /// Our libbpf 1.7 result; on the way, checks our libbpf 1.1 flavor
    /// against the system's libbpf (1.1), when it can be built against.
    fn run<'a>(types: Vec<Type<'a>>) -> Dedup<'a> {
        let btf = standalone(types);
        agrees_with_libbpf(&btf, None);
        match dedup(&btf, None) {
            Ok(d) => d,
            Err(e) => panic!("dedup failed: {e}"),
        }
    }

    /// Asserts that `dedup_as(.., Libbpf1_1)` decodes to exactly what the
    /// real libbpf 1.1 `btf__dedup` produces from the same raw input.
    /// Returns false when the oracle is unavailable.
    fn agrees_with_libbpf(btf: &Btf<'_>, base: Option<&Btf<'_>>) -> bool {
        let Some(theirs) = test_oracle::libbpf_dedup(btf, base) else {
            return false;
        };
        let ours = dedup_as(btf, base, Flavor::Libbpf1_1);
        let theirs = match theirs {
            Ok(t) => t,
            Err(status) => {
                assert!(ours.is_err(), "libbpf failed ({status}) where we succeeded");
                return true;
            }
        };
        let ours = match ours {
            Ok(d) => d,
            Err(e) => panic!("we failed ({e}) where libbpf succeeded"),
        };
        let parsed_base = theirs.base.as_deref().map(|b| parse(b, None));
        let theirs = parse(&theirs.deduped, parsed_base.as_ref()).btf;
        if let Some(i) = (0..ours.btf.types.len().max(theirs.types.len()))
            .find(|&i| ours.btf.types.get(i) != theirs.types.get(i))
        {
            let first = btf.base_type_count as usize + 1;
            panic!(
                "first difference at [{}] of {} vs {} types:\n ours:   {:?}\n libbpf: {:?}",
                first + i,
                ours.btf.types.len(),
                theirs.types.len(),
                ours.btf.types.get(i),
                theirs.types.get(i)
            );
        }
        true
    }
    fn ids(v: &[u32]) -> Vec<TypeId> {
        v.iter().map(|&i| TypeId(i)).collect()
    }

    #[test]
    fn identical_ints_merge_and_distinct_stay() {
        let d = run(vec![int("int"), int("int"), int("long")]);
        assert_eq!(d.btf.types, vec![int("int"), int("long")]);
        assert_eq!(d.remap, ids(&[0, 1, 1, 2]));
    }

    #[test]
    fn floats_merge_by_name_and_size() {
        let f = |name, size| Type::Float(Float { name, size });
        let d = run(vec![f("double", 8), f("double", 8), f("float", 4)]);
        assert_eq!(d.btf.types, vec![f("double", 8), f("float", 4)]);
    }

    /// A kernel's tracepoint unions (`__bpf_trace_tp_map_*`): one key for
    /// all (same size, member names and offsets), told apart only by the
    /// typedef of `handler`. Each stays its own, checked against the
    /// earlier ones by the names their members refer to; a later copy
    /// (whose `event` is only declared, a FWD by value, as one CU may see
    /// it) still merges into its original, and the FWD with it.
    #[test]
    fn unions_of_one_key_told_apart_by_their_members_types() {
        let union_of = |event, handler| {
            Type::Union(Composite {
                name: "",
                size: 8,
                members: crate::test_types::members(&[("event", event), ("handler", handler)]),
                kind_flag: false,
            })
        };
        let d = run(vec![
            int("int"),                  // 1
            st("ev", 8, &[("x", 1, 0)]), // 2
            typedef("h_a", 1),           // 3
            union_of(2, 3),              // 4
            typedef("h_b", 1),           // 5
            union_of(2, 5),              // 6
            typedef("h_c", 1),           // 7
            union_of(2, 7),              // 8
            int("int"),                  // 9 -> 1
            fwd("ev"),                   // 10 -> 2
            typedef("h_b", 9),           // 11 -> 5
            union_of(10, 11),            // 12 -> 6
        ]);
        assert_eq!(
            d.btf.types,
            vec![
                int("int"),
                st("ev", 8, &[("x", 1, 0)]),
                typedef("h_a", 1),
                union_of(2, 3),
                typedef("h_b", 1),
                union_of(2, 5),
                typedef("h_c", 1),
                union_of(2, 7),
            ]
        );
        assert_eq!(d.remap, ids(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 5, 6]));
    }

    /// CU1 only declares `struct foo`; CU2 defines it. Comparing the two
    /// `bar`s meets FWD foo (canonical side) against STRUCT foo (candidate
    /// side): equivalent, and the FWD is recorded as resolved to foo.
    #[test]
    fn fwd_resolves_to_struct_from_other_cu() {
        let d = run(vec![
            int("int"),                   // 1
            fwd("foo"),                   // 2
            ptr(2),                       // 3
            st("bar", 8, &[("p", 3, 0)]), // 4
            int("int"),                   // 5 -> 1
            st("foo", 4, &[("x", 5, 0)]), // 6
            ptr(6),                       // 7 -> 3
            st("bar", 8, &[("p", 7, 0)]), // 8 -> 4
        ]);
        assert_eq!(
            d.btf.types,
            vec![
                int("int"),
                ptr(4),
                st("bar", 8, &[("p", 2, 0)]),
                st("foo", 4, &[("x", 1, 0)])
            ]
        );
        assert_eq!(d.remap, ids(&[0, 1, 4, 2, 3, 1, 4, 2, 3]));
    }

    /// A FWD that is never compared against its struct in a graph is still
    /// resolved when the name is unambiguous (btf_dedup_resolve_fwds) ...
    #[test]
    fn lone_fwd_resolves_to_unique_struct() {
        let d = run(vec![
            fwd("foo"),
            ptr(1),
            int("int"),
            st("foo", 4, &[("x", 3, 0)]),
            ptr(4),
        ]);
        assert_eq!(
            d.btf.types,
            vec![ptr(3), int("int"), st("foo", 4, &[("x", 2, 0)])]
        );
    }

    /// ... but not when two different structs carry the name.
    #[test]
    fn lone_fwd_stays_when_name_is_ambiguous() {
        let d = run(vec![
            fwd("foo"),
            int("int"),
            st("foo", 4, &[("x", 2, 0)]),
            st("foo", 8, &[("y", 2, 0)]),
        ]);
        assert_eq!(d.btf.types.len(), 4);
        assert_eq!(d.btf.types[0], fwd("foo"));
    }

    /// A compiler duplicate in the candidate CU (two identical PTRs to
    /// `inner`) meets one PTR in the canonical graph: the hypothetical map
    /// contradiction is forgiven by the identical-types check.
    #[test]
    fn identical_duplicates_within_one_cu_are_tolerated() {
        let d = run(vec![
            int("int"),                                      // 1
            st("inner", 4, &[("a", 1, 0)]),                  // 2
            ptr(2),                                          // 3
            st("outer", 16, &[("m1", 3, 0), ("m2", 3, 64)]), // 4
            int("int"),                                      // 5
            st("inner", 4, &[("a", 5, 0)]),                  // 6 -> 2
            ptr(6),                                          // 7 -> 3
            ptr(6),                                          // 8 -> 3
            st("outer", 16, &[("m1", 7, 0), ("m2", 8, 64)]), // 9 -> 4
        ]);
        assert_eq!(
            d.btf.types,
            vec![
                int("int"),
                st("inner", 4, &[("a", 1, 0)]),
                ptr(2),
                st("outer", 16, &[("m1", 3, 0), ("m2", 3, 64)]),
            ]
        );
    }

    /// Same with identical duplicate structs, met before they are settled
    /// (the outer struct comes first in the second CU).
    #[test]
    fn identical_duplicate_structs_within_one_cu_are_tolerated() {
        let d = run(vec![
            int("int"),                                   // 1
            st("inner", 4, &[("a", 1, 0)]),               // 2
            st("outer", 8, &[("x", 2, 0), ("y", 2, 32)]), // 3
            int("int"),                                   // 4 -> 1
            st("outer", 8, &[("x", 6, 0), ("y", 7, 32)]), // 5 -> 3
            st("inner", 4, &[("a", 4, 0)]),               // 6 -> 2
            st("inner", 4, &[("a", 4, 0)]),               // 7 -> 2
        ]);
        assert_eq!(d.btf.types.len(), 3);
        assert_eq!(d.remap, ids(&[0, 1, 2, 3, 1, 3, 2, 2]));
        // libbpf 1.1 has the struct case of the fallback too.
        let btf = standalone(vec![
            int("int"),
            st("inner", 4, &[("a", 1, 0)]),
            st("outer", 8, &[("x", 2, 0), ("y", 2, 32)]),
            int("int"),
            st("outer", 8, &[("x", 6, 0), ("y", 7, 32)]),
            st("inner", 4, &[("a", 4, 0)]),
            st("inner", 4, &[("a", 4, 0)]),
        ]);
        assert_eq!(
            dedup_as(&btf, None, Flavor::Libbpf1_1).map(|d| d.btf.count()),
            Ok(3)
        );
    }

    /// What the kernel's `struct_group()` produces: a union of two
    /// identical anonymous structs. The compiler emits the two (and their
    /// array members) as distinct types in one CU while the canonical
    /// union, deduplicated earlier, has a single one: identical structs
    /// whose members are identical arrays must be tolerated (libbpf 1.1
    /// does it too, checked against it by `run`).
    #[test]
    fn struct_group_duplicates_are_tolerated() {
        let arr = |elem| {
            Type::Array(Array {
                elem: TypeId(elem),
                index: TypeId(elem),
                nelems: 0,
            })
        };
        let anon = |a, x| st("", 4, &[("a", a, 0), ("x", x, 0)]);
        let un = |s1, s2| {
            Type::Union(Composite {
                name: "",
                size: 4,
                members: vec![
                    Member {
                        name: test_name(""),
                        ty: TypeId(s1),
                        bit_offset: 0,
                        bitfield_size: 0,
                    },
                    Member {
                        name: test_name("hdr"),
                        ty: TypeId(s2),
                        bit_offset: 0,
                        bitfield_size: 0,
                    },
                ]
                .into(),
                kind_flag: false,
            })
        };
        let d = run(vec![
            int("int"),                     // 1
            arr(1),                         // 2
            anon(2, 1),                     // 3
            un(3, 3),                       // 4
            st("outer", 4, &[("u", 4, 0)]), // 5
            int("int"),                     // 6 -> 1
            st("outer", 4, &[("u", 8, 0)]), // 7 -> 5
            un(9, 11),                      // 8 -> 4
            anon(10, 6),                    // 9 -> 3
            arr(6),                         // 10 -> 2
            anon(12, 6),                    // 11 -> 3
            arr(6),                         // 12 -> 2
        ]);
        assert_eq!(d.remap, ids(&[0, 1, 2, 3, 4, 5, 1, 5, 4, 3, 2, 3, 2]));
    }

    #[test]
    fn self_referential_structs_merge() {
        let d = run(vec![
            st("list", 8, &[("next", 2, 0)]),
            ptr(1),
            st("list", 8, &[("next", 4, 0)]),
            ptr(3),
        ]);
        assert_eq!(d.btf.types, vec![st("list", 8, &[("next", 2, 0)]), ptr(1)]);
        assert_eq!(d.remap, ids(&[0, 1, 2, 1, 2]));
    }

    /// Mutually recursive structs whose cycle is entered at different
    /// points in the two CUs still collapse.
    #[test]
    fn mutually_recursive_structs_merge() {
        let d = run(vec![
            st("a", 8, &[("b", 2, 0)]), // 1
            ptr(3),                     // 2
            st("b", 8, &[("a", 4, 0)]), // 3
            ptr(1),                     // 4
            st("b", 8, &[("a", 6, 0)]), // 5 -> 3
            ptr(7),                     // 6 -> 4
            st("a", 8, &[("b", 8, 0)]), // 7 -> 1
            ptr(5),                     // 8 -> 2
        ]);
        assert_eq!(d.btf.types.len(), 4);
        assert_eq!(d.remap, ids(&[0, 1, 2, 3, 4, 3, 4, 1, 2]));
    }

    /// Structurally different structs of one name stay apart.
    #[test]
    fn different_layouts_stay_distinct() {
        let d = run(vec![
            int("int"),
            st("s", 4, &[("a", 1, 0)]),
            st("s", 4, &[("b", 1, 0)]),
        ]);
        assert_eq!(d.btf.types.len(), 3);
    }

    /// Go-style `type Foo func() Foo`: a typedef cycle without a struct.
    /// libbpf 1.7 dedups typedefs by graph equivalence, so this merges.
    #[test]
    fn recursive_typedefs_merge() {
        let d = run(vec![
            typedef("Foo", 2),
            ptr(3),
            proto(1, &[]),
            typedef("Foo", 5),
            ptr(6),
            proto(4, &[]),
        ]);
        assert_eq!(d.btf.types, vec![typedef("Foo", 2), ptr(3), proto(1, &[])]);
        assert_eq!(d.remap, ids(&[0, 1, 2, 3, 1, 2, 3]));
    }

    #[test]
    fn typedefs_of_equivalent_targets_merge() {
        let d = run(vec![
            int("int"),
            typedef("t", 1),
            int("int"),
            typedef("t", 3),
            typedef("u", 3),
        ]);
        assert_eq!(
            d.btf.types,
            vec![int("int"), typedef("t", 1), typedef("u", 1)]
        );
    }

    /// 1.7 compares typedefs as graphs: `foo_t` naming FWD foo and
    /// `foo_t` naming struct foo are equivalent, and the FWD is resolved
    /// through the typedef even though the name foo is ambiguous (a union
    /// foo exists). 1.1 keeps both typedefs and the FWD (checked against
    /// libbpf by `run`).
    #[test]
    fn typedef_of_fwd_merges_with_typedef_of_struct() {
        let un = Type::Union(Composite {
            name: "foo",
            size: 4,
            members: Box::default(),
            kind_flag: false,
        });
        let types = vec![
            fwd("foo"),                   // 1 -> 4
            typedef("foo_t", 1),          // 2
            int("int"),                   // 3
            st("foo", 4, &[("x", 3, 0)]), // 4
            typedef("foo_t", 4),          // 5 -> 2
            un.clone(),                   // 6
        ];
        let d = run(types.clone());
        assert_eq!(
            d.btf.types,
            vec![
                typedef("foo_t", 3),
                int("int"),
                st("foo", 4, &[("x", 2, 0)]),
                un
            ]
        );
        let v1_1 = dedup_as(&standalone(types), None, Flavor::Libbpf1_1).map(|d| d.btf.count());
        assert_eq!(v1_1, Ok(6));
    }

    /// libbpf 1.7's identical-types fallback reads both ARRAY records
    /// from the first type, so `int[4]` and `long[4]` meeting one
    /// canonical `int[4]` count as identical and the structs merge. 1.1
    /// compares element ids and keeps them apart.
    #[test]
    fn identical_arrays_quirk_of_libbpf_1_7() {
        let arr = |elem| {
            Type::Array(Array {
                elem: TypeId(elem),
                index: TypeId(1),
                nelems: 4,
            })
        };
        let long = Type::Int(Int {
            name: "long",
            size: 8,
            encoding: IntEncoding(IntEncoding::SIGNED),
            offset: 0,
            bits: 64,
        });
        let types = vec![
            int("int"),                                 // 1
            arr(1),                                     // 2
            st("s", 32, &[("a", 2, 0), ("b", 2, 128)]), // 3
            int("int"),                                 // 4 -> 1
            long.clone(),                               // 5
            Type::Array(Array {
                elem: TypeId(4),
                index: TypeId(4),
                nelems: 4,
            }), // 6 -> 2
            Type::Array(Array {
                elem: TypeId(5),
                index: TypeId(4),
                nelems: 4,
            }), // 7
            st("s", 32, &[("a", 6, 0), ("b", 7, 128)]), // 8 -> 3
        ];
        let d = run(types.clone());
        assert_eq!(
            d.btf.types,
            vec![
                int("int"),
                arr(1),
                st("s", 32, &[("a", 2, 0), ("b", 2, 128)]),
                long,
                arr(4)
            ]
        );
        let v1_1 = dedup_as(&standalone(types), None, Flavor::Libbpf1_1).map(|d| d.btf.count());
        assert_eq!(v1_1, Ok(6));
    }

    /// An enum forward declaration (vlen 0) merges into the full enum,
    /// whichever comes first.
    #[test]
    fn enum_fwd_merges_into_full_enum() {
        let d = run(vec![
            enm("e", &[]),
            enm("e", &[("A", 1)]),
            enm("e", &[]),
            ptr(1),
            ptr(3),
        ]);
        assert_eq!(d.btf.types, vec![enm("e", &[("A", 1)]), ptr(1)]);
        assert_eq!(d.remap, ids(&[0, 1, 1, 1, 2, 2]));
    }

    #[test]
    fn enum_fwd_merges_into_enum64_but_full_enums_of_two_widths_do_not() {
        let e64 = Type::Enum64(Enum {
            name: "e",
            size: 8,
            signed: false,
            values: vec![EnumValue {
                name: "A",
                value: 1 << 40,
            }]
            .into(),
        });
        let d = run(vec![e64.clone(), enm("e", &[])]);
        assert_eq!(d.btf.types, vec![e64.clone()]);
        let d = run(vec![e64.clone(), enm("e", &[("A", 1)])]);
        assert_eq!(d.btf.types.len(), 2);
    }

    #[test]
    fn enums_with_different_values_stay_distinct() {
        let d = run(vec![
            enm("e", &[("A", 1)]),
            enm("e", &[("A", 2)]),
            enm("e", &[("A", 1)]),
        ]);
        assert_eq!(
            d.btf.types,
            vec![enm("e", &[("A", 1)]), enm("e", &[("A", 2)])]
        );
    }

    #[test]
    fn funcs_and_protos_merge_but_linkage_matters() {
        let d = run(vec![
            int("int"),
            proto(1, &[("a", 1)]),
            func("f", 2, Linkage::Global),
            int("int"),
            proto(4, &[("a", 4)]),
            func("f", 5, Linkage::Global),
            func("f", 5, Linkage::Static),
            proto(4, &[("b", 4)]),
        ]);
        assert_eq!(
            d.btf.types,
            vec![
                int("int"),
                proto(1, &[("a", 1)]),
                func("f", 2, Linkage::Global),
                func("f", 2, Linkage::Static),
                proto(1, &[("b", 1)]),
            ]
        );
    }

    #[test]
    fn vars_and_datasecs_are_never_merged() {
        let sec = |vars: &[u32]| {
            Type::Datasec(Datasec {
                name: ".data",
                size: 8,
                vars: vars
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| VarSecInfo {
                        ty: TypeId(v),
                        offset: 4 * i as u32,
                        size: 4,
                    })
                    .collect(),
            })
        };
        let d = run(vec![
            int("int"),
            var("x", 1),
            int("int"),
            var("x", 3),
            sec(&[2, 4]),
        ]);
        assert_eq!(
            d.btf.types,
            vec![int("int"), var("x", 1), var("x", 1), sec(&[2, 3])]
        );
    }

    #[test]
    fn tags_follow_their_targets() {
        let cu = |o: u32| {
            vec![
                int("int"),
                Type::TypeTag(TypeTag {
                    name: "user",
                    ty: TypeId(o + 1),
                    attribute: false,
                }),
                ptr(o + 2),
                st("s", 8, &[("p", o + 3, 0)]),
                Type::DeclTag(DeclTag {
                    name: "tag",
                    ty: TypeId(o + 4),
                    component_idx: -1,
                    attribute: false,
                }),
                Type::DeclTag(DeclTag {
                    name: "tag",
                    ty: TypeId(o + 4),
                    component_idx: 0,
                    attribute: false,
                }),
            ]
        };
        let mut types = cu(0);
        types.extend(cu(6));
        let d = run(types);
        assert_eq!(d.btf.types, cu(0));
    }

    #[test]
    fn arrays_merge_by_element_index_and_count() {
        let arr = |elem, nelems| {
            Type::Array(Array {
                elem: TypeId(elem),
                index: TypeId(1),
                nelems,
            })
        };
        let d = run(vec![
            int("int"),
            arr(1, 4),
            int("int"),
            arr(3, 4),
            arr(3, 5),
        ]);
        assert_eq!(d.btf.types, vec![int("int"), arr(1, 4), arr(1, 5)]);
    }

    /// Base: int, struct foo, PTR foo. The split repeats all three and
    /// adds `bar`: the repeats become base ids, only bar stays.
    #[test]
    fn split_types_equal_to_base_become_base_ids() {
        let base = standalone(vec![int("int"), st("foo", 4, &[("x", 1, 0)]), ptr(2)]);
        let split = Btf {
            types: vec![
                int("int"),
                st("foo", 4, &[("x", 4, 0)]),
                ptr(5),
                st("bar", 8, &[("f", 6, 0)]),
            ],
            base_type_count: 3,
            base_str_len: 100,
        };
        let d = match dedup(&split, Some(&base)) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(d.btf.types, vec![st("bar", 8, &[("f", 3, 0)])]);
        assert_eq!((d.btf.base_type_count, d.btf.base_str_len), (3, 100));
        assert_eq!(d.remap, ids(&[0, 1, 2, 3, 1, 2, 3, 4]));
    }

    /// Base has only FWD foo and a `bar` pointing at it. The split defines
    /// foo and its own bar: equivalent only if the base FWD were resolved,
    /// which the immutable base forbids, so the split keeps everything.
    #[test]
    fn split_struct_needing_base_fwd_resolution_stays_split() {
        let base = standalone(vec![fwd("foo"), ptr(1), st("bar", 8, &[("p", 2, 0)])]);
        let split_types = vec![
            int("int"),
            st("foo", 4, &[("x", 4, 0)]),
            ptr(5),
            st("bar", 8, &[("p", 6, 0)]),
        ];
        let split = Btf {
            types: split_types.clone(),
            base_type_count: 3,
            base_str_len: 0,
        };
        let d = match dedup(&split, Some(&base)) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(d.btf.types, split_types);
    }

    /// libbpf 1.7 files base typedefs under a signature split typedefs
    /// never look up, so a split typedef equal to a base one is kept
    /// (pahole 1.31's module BTF shows such duplicates, e.g. `u32`).
    #[test]
    fn split_typedef_equal_to_base_typedef_is_kept() {
        let base = standalone(vec![int("int"), typedef("u32", 1)]);
        let split = Btf {
            types: vec![int("int"), typedef("u32", 3)],
            base_type_count: 2,
            base_str_len: 0,
        };
        let d = match dedup(&split, Some(&base)) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(d.btf.types, vec![typedef("u32", 1)]);
    }

    /// The kernel's `struct_group()`: a union of two anonymous structs
    /// with the same members. The base (already deduplicated) has one
    /// anonymous struct for both; a module CU has two, each with its own
    /// (equal) zero-length array. Checking `s` meets base struct 3 twice,
    /// with split 9 and 11: libbpf 1.1 forgives that because 9 and 11 are
    /// identical down to identical arrays, so everything maps to the base
    /// (Debian's af_key.ko against its vmlinux is this case).
    #[test]
    fn struct_group_twins_in_a_split_map_to_the_base_v1_1() {
        let arr = |elem| {
            Type::Array(Array {
                elem: TypeId(elem),
                index: TypeId(elem),
                nelems: 0,
            })
        };
        let un = |members: &[(&'static str, u32)]| {
            Type::Union(Composite {
                name: "",
                size: 4,
                members: crate::test_types::members(members),
                kind_flag: false,
            })
        };
        let base = standalone(vec![
            int("int"),                             // 1
            arr(1),                                 // 2
            st("", 4, &[("a", 2, 0), ("x", 1, 0)]), // 3
            un(&[("", 3), ("h", 3)]),               // 4
            st("s", 4, &[("", 4, 0)]),              // 5
        ]);
        let split = Btf {
            types: vec![
                int("int"),                              // 6
                st("s", 4, &[("", 8, 0)]),               // 7
                un(&[("", 9), ("h", 11)]),               // 8
                st("", 4, &[("a", 10, 0), ("x", 6, 0)]), // 9
                arr(6),                                  // 10
                st("", 4, &[("a", 12, 0), ("x", 6, 0)]), // 11
                arr(6),                                  // 12
            ],
            base_type_count: 5,
            base_str_len: 0,
        };
        agrees_with_libbpf(&split, Some(&base));
        let d = match dedup_as(&split, Some(&base), Flavor::Libbpf1_1) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(d.btf.types, vec![]);
        assert_eq!(d.remap, ids(&[0, 1, 2, 3, 4, 5, 1, 5, 4, 3, 2, 3, 2]));
    }

    /// `dedup_on` a prepared base is `dedup` on that base, for the hand
    /// cases above and real modules (pahole's splits re-deduplicated),
    /// with two splits in a row on one prepared base.
    #[test]
    fn prepared_base_gives_the_same_result() {
        fn same(split: &Btf<'_>, base: &Btf<'_>, prepared: &PreparedBase<'_, '_>, flavor: Flavor) {
            let direct = dedup_as(split, Some(base), flavor).map(|d| (d.btf.types, d.remap));
            let on = dedup_on(split, prepared).map(|d| (d.btf.types, d.remap));
            assert!(direct == on, "{flavor:?}: prepared-base dedup differs");
        }
        let cases = [
            (
                standalone(vec![int("int"), st("foo", 4, &[("x", 1, 0)]), ptr(2)]),
                vec![
                    int("int"),
                    st("foo", 4, &[("x", 4, 0)]),
                    ptr(5),
                    st("bar", 8, &[("f", 6, 0)]),
                ],
            ),
            (
                standalone(vec![fwd("foo"), ptr(1), st("bar", 8, &[("p", 2, 0)])]),
                vec![
                    int("int"),
                    st("foo", 4, &[("x", 4, 0)]),
                    ptr(5),
                    st("bar", 8, &[("p", 6, 0)]),
                ],
            ),
        ];
        for flavor in [Flavor::Libbpf1_1, Flavor::Libbpf1_7] {
            for (base, split_types) in &cases {
                let split = Btf {
                    types: split_types.clone(),
                    base_type_count: 3,
                    base_str_len: 0,
                };
                let prepared = PreparedBase::new(base, flavor).unwrap_or_else(|e| panic!("{e}"));
                same(&split, base, &prepared, flavor);
                same(&split, base, &prepared, flavor);
            }
        }
        let Some(base_data) = reference("vmlinux.btf") else {
            return;
        };
        let base = parse(&base_data, None);
        let vmlinux = &base.btf;
        let prepared =
            PreparedBase::new(vmlinux, Flavor::Libbpf1_7).unwrap_or_else(|e| panic!("{e}"));
        for module in ["tcp_bbr", "nf_conntrack", "af_key"] {
            let Some(data) = reference(&format!("modules/{module}.btf")) else {
                continue;
            };
            let split = parse(&data, Some(&base)).btf;
            same(&split, vmlinux, &prepared, Flavor::Libbpf1_7);
        }
        let short = Btf {
            types: vec![],
            base_type_count: 2,
            base_str_len: 0,
        };
        assert!(matches!(
            dedup_on(&short, &prepared),
            Err(Error::BaseMismatch { .. })
        ));
    }

    /// `data` read by the crate's reader (as a split on `base`, if given);
    /// a reference file or oracle output that does not parse fails the test.
    fn parse<'a>(
        data: &'a [u8],
        base: Option<&crate::read::Parsed<'a>>,
    ) -> crate::read::Parsed<'a> {
        crate::read::parse(data, base).unwrap_or_else(|e| panic!("{e}"))
    }

    /// CPU time (user + system) this process has used so far, in ms: the
    /// speed tests report it beside wall time, which is noisy on a shared
    /// machine.
    fn cpu_ms() -> u64 {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let after_name = stat.rsplit(')').next().unwrap_or("");
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        // utime and stime, fields 14 and 15 of the line, in 10 ms ticks.
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        (ticks(11) + ticks(12)) * 10
    }

    /// `types` with every non-void reference moved up by `by`.
    fn shifted<'a>(types: &[Type<'a>], by: u32) -> Vec<Type<'a>> {
        types
            .iter()
            .map(|t| {
                let mut t = t.clone();
                let shift = |id: TypeId| -> Result<TypeId, ()> {
                    Ok(if id.0 == 0 { id } else { TypeId(id.0 + by) })
                };
                let _ = t.remap_refs(shift);
                t
            })
            .collect()
    }

    /// libbpf's output is a fixed point of libbpf's dedup: vmlinux BTF
    /// (94,547 types per the reference README) dedups to itself.
    #[test]
    fn reference_vmlinux_is_a_fixed_point() {
        let Some(data) = reference("vmlinux.btf") else {
            return;
        };
        let vmlinux = parse(&data, None).btf;
        assert_eq!(vmlinux.count(), 94_547);
        let d = match dedup(&vmlinux, None) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(d.btf.count(), vmlinux.count());
        assert!(d.btf.types == vmlinux.types);
    }

    /// Two "CUs" each holding all of vmlinux collapse to one copy, the
    /// first, unchanged (VAR and DATASEC, never merged, stay twice).
    #[test]
    fn reference_vmlinux_twice_collapses_to_once() {
        let Some(data) = reference("vmlinux.btf") else {
            return;
        };
        let vmlinux = parse(&data, None).btf;
        let n = vmlinux.count();
        let mut types = vmlinux.types.clone();
        types.extend(shifted(&vmlinux.types, n));
        let d = match dedup(&standalone(types), None) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        let never_merged = vmlinux
            .types
            .iter()
            .filter(|t| matches!(t, Type::Var(_) | Type::Datasec(_)))
            .count() as u32;
        assert_eq!(d.btf.count(), n + never_merged);
        assert!(d.btf.types[..n as usize] == vmlinux.types[..]);
        // Every second-copy non-VAR/DATASEC id maps onto its first copy.
        for (i, t) in vmlinux.types.iter().enumerate() {
            if !matches!(t, Type::Var(_) | Type::Datasec(_)) {
                let first = i as u32 + 1;
                assert_eq!(d.remap[(first + n) as usize], TypeId(first), "type {first}");
            }
        }
    }

    /// Many synthetic CUs cut from vmlinux (FWD declarations, shuffled
    /// orders, in-CU duplicates), deduplicated by us and by libbpf.
    #[test]
    fn synthetic_cus_agree_with_libbpf() {
        synthetic_seeds_agree(1..=1, 8);
    }

    /// The same over many more seeds; run with `--release -- --ignored`.
    #[test]
    #[ignore]
    fn synthetic_cus_agree_with_libbpf_extensive() {
        synthetic_seeds_agree(100..=160, 24);
    }

    fn synthetic_seeds_agree(seeds: std::ops::RangeInclusive<u64>, cus: usize) {
        let Some(data) = reference("vmlinux.btf") else {
            return;
        };
        let vmlinux = parse(&data, None).btf;
        for seed in seeds {
            let quirks = test_cus::Quirks {
                shuffle_percent: 30,
                duplicate_ptr_percent: 5,
            };
            let btf = test_cus::concatenated_cus(&vmlinux, seed, cus, 3, quirks);
            if !agrees_with_libbpf(&btf, None) {
                return;
            }
        }
    }

    /// Module BTF split on vmlinux: pahole 1.31's output re-deduplicated
    /// on the same base.
    #[test]
    fn split_module_btf_agrees_with_libbpf() {
        split_modules_agree(&["tcp_bbr"]);
    }

    #[test]
    #[ignore]
    fn split_module_btf_agrees_with_libbpf_extensive() {
        split_modules_agree(&["af_key", "virtio_net", "nf_conntrack", "nf_tables", "xfs"]);
    }

    fn split_modules_agree(modules: &[&str]) {
        let Some(base_data) = reference("vmlinux.btf") else {
            return;
        };
        let base = parse(&base_data, None);
        for module in modules {
            let Some(data) = reference(&format!("modules/{module}.btf")) else {
                continue;
            };
            let split = parse(&data, Some(&base)).btf;
            if !agrees_with_libbpf(&split, Some(&base.btf)) {
                return;
            }
        }
    }

    /// Synthetic module CUs (cut from vmlinux, so mostly equal to base
    /// types, with FWDs and in-CU duplicates) split on vmlinux.
    #[test]
    fn split_synthetic_cus_agree_with_libbpf() {
        split_synthetic_seeds_agree(21..=21);
    }

    #[test]
    #[ignore]
    fn split_synthetic_cus_agree_with_libbpf_extensive() {
        split_synthetic_seeds_agree(200..=230);
    }

    fn split_synthetic_seeds_agree(seeds: std::ops::RangeInclusive<u64>) {
        let Some(data) = reference("vmlinux.btf") else {
            return;
        };
        let vmlinux = parse(&data, None).btf;
        for seed in seeds {
            let quirks = test_cus::Quirks {
                shuffle_percent: 30,
                duplicate_ptr_percent: 5,
            };
            let cus = test_cus::concatenated_cus(&vmlinux, seed, 6, 2, quirks);
            let split = Btf {
                types: shifted(&cus.types, vmlinux.count()),
                base_type_count: vmlinux.count(),
                base_str_len: 0,
            };
            if !agrees_with_libbpf(&split, Some(&vmlinux)) {
                return;
            }
            // Most types are base types again.
            let d = dedup(&split, Some(&vmlinux)).map(|d| d.btf.count());
            assert!(
                matches!(d, Ok(n) if n < split.count() / 4),
                "seed {seed}: {d:?} of {}",
                split.count()
            );
        }
    }

    /// Output and remap do not depend on the number of threads.
    #[test]
    fn result_is_independent_of_thread_count() {
        let Some(data) = reference("vmlinux.btf") else {
            return;
        };
        let vmlinux = parse(&data, None).btf;
        let quirks = test_cus::Quirks {
            shuffle_percent: 30,
            duplicate_ptr_percent: 5,
        };
        let btf = test_cus::concatenated_cus(&vmlinux, 5, 6, 3, quirks);
        let run_with = |threads: usize| {
            let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                Ok(p) => p,
                Err(e) => panic!("{e}"),
            };
            match pool.install(|| dedup(&btf, None)) {
                Ok(d) => (d.btf.types, d.remap),
                Err(e) => panic!("{e}"),
            }
        };
        let one = run_with(1);
        let four = run_with(4);
        assert!(one.0 == four.0);
        assert_eq!(one.1, four.1);
    }

    /// The same without in-CU duplicates, where libbpf 1.1 and 1.7 must
    /// agree with each other too (no typedef cycles, no duplicates).
    #[test]
    fn plain_synthetic_cus_agree_with_libbpf_and_across_flavors() {
        let Some(data) = reference("vmlinux.btf") else {
            return;
        };
        let vmlinux = parse(&data, None).btf;
        for seed in 11..=11 {
            let quirks = test_cus::Quirks {
                shuffle_percent: 0,
                duplicate_ptr_percent: 0,
            };
            let btf = test_cus::concatenated_cus(&vmlinux, seed, 24, 3, quirks);
            agrees_with_libbpf(&btf, None);
            let v1_1 = dedup_as(&btf, None, Flavor::Libbpf1_1).map(|d| d.btf.types);
            let v1_7 = dedup_as(&btf, None, Flavor::Libbpf1_7).map(|d| d.btf.types);
            assert!(v1_1 == v1_7, "seed {seed}");
        }
    }

    /// Speed on a realistic volume: 2,000 CUs cut from vmlinux. Run with
    /// `cargo test --release -p btf-writer -- --ignored dedup_speed --nocapture`.
    #[test]
    #[ignore]
    fn dedup_speed() {
        let Some(data) = reference("vmlinux.btf") else {
            return;
        };
        let vmlinux = parse(&data, None).btf;
        let quirks = test_cus::Quirks {
            shuffle_percent: 0,
            duplicate_ptr_percent: 0,
        };
        let btf = test_cus::concatenated_cus(&vmlinux, 7, 2000, 3, quirks);
        let started = std::time::Instant::now();
        let cpu_before = cpu_ms();
        let d = match dedup(&btf, None) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        eprintln!(
            "{} types -> {} in {:?} wall, {} ms CPU",
            btf.count(),
            d.btf.count(),
            started.elapsed(),
            cpu_ms() - cpu_before
        );
        let small = test_cus::concatenated_cus(&vmlinux, 7, 300, 3, quirks);
        let started = std::time::Instant::now();
        let ours = dedup_as(&small, None, Flavor::Libbpf1_1).map(|d| d.btf.count());
        let ours_time = started.elapsed();
        let started = std::time::Instant::now();
        let theirs = test_oracle::libbpf_dedup(&small, None).map(|r| r.is_ok());
        eprintln!(
            "{} types: ours {ours:?} in {ours_time:?}, libbpf ok={theirs:?} in {:?} (incl. I/O)",
            small.count(),
            started.elapsed()
        );
    }

    #[cfg(feature = "dwarf")]
    /// Dedup alone on Debian's real vmlinux, lowered by our pipeline with
    /// pahole 1.31's kernel features: times it and compares the result
    /// with pahole 1.31's. Run with `cargo test --release -p btf-writer --
    /// --ignored real_vmlinux --nocapture`; the vmlinux path can be set
    /// with `BTFENC_DEDUP_VMLINUX`.
    #[test]
    #[ignore]
    fn real_vmlinux_dedup_speed_and_result() {
        use crate::test_reference::{debian_debug, DEBIAN_VMLINUX};
        let path = std::env::var_os("BTFENC_DEDUP_VMLINUX")
            .map_or_else(|| debian_debug(DEBIAN_VMLINUX), std::path::PathBuf::from);
        let Some(reference) = reference("vmlinux.btf") else {
            return;
        };
        let Ok(features) = crate::lower::Features::parse(KERNEL_FEATURES, true) else {
            panic!("features");
        };
        with_lowered(&path, None, features, |btf| {
            for flavor in [Flavor::Libbpf1_7, Flavor::Libbpf1_1] {
                let started = std::time::Instant::now();
                let cpu_before = cpu_ms();
                let d = match dedup_as(btf, None, flavor) {
                    Ok(d) => d,
                    Err(e) => panic!("{e}"),
                };
                eprintln!(
                    "{flavor:?}: {} types -> {} in {:?} wall, {} ms CPU",
                    btf.count(),
                    d.btf.count(),
                    started.elapsed(),
                    cpu_ms() - cpu_before
                );
                if flavor == Flavor::Libbpf1_7 {
                    let theirs = parse(&reference, None).btf;
                    let report = crate::diff::diff(&d.btf, None, &theirs, None);
                    // Only FUNC selection (lowering, not dedup) may differ.
                    let outside = report.differences_outside(&[
                        crate::raw::Kind::FUNC,
                        crate::raw::Kind::FUNC_PROTO,
                    ]);
                    assert!(outside.is_empty(), "{report}");
                }
            }
        });
    }

    #[cfg(feature = "dwarf")]
    /// Real modules lowered with the kernel's 1.31 features, split on
    /// pahole 1.31's vmlinux.btf, deduplicated as libbpf 1.7: the same
    /// types as pahole 1.31's module BTF (FUNC selection aside).
    #[test]
    #[ignore]
    fn real_modules_match_pahole_1_31() {
        let Some(base_data) = reference("vmlinux.btf") else {
            return;
        };
        let Ok(base) = crate::read::parse(&base_data, None) else {
            return;
        };
        let Ok(features) = crate::lower::Features::parse(KERNEL_FEATURES, true) else {
            panic!("features");
        };
        let modules = crate::test_reference::debian_debug(crate::test_reference::DEBIAN_MODULES);
        for (module, name) in [
            ("net/ipv4/tcp_bbr.ko", "tcp_bbr"),
            ("net/key/af_key.ko", "af_key"),
            ("drivers/net/virtio_net.ko", "virtio_net"),
            ("net/netfilter/nf_conntrack.ko", "nf_conntrack"),
            ("net/netfilter/nf_tables.ko", "nf_tables"),
            ("fs/xfs/xfs.ko", "xfs"),
        ] {
            let Some(theirs_data) = reference(&format!("modules/{name}.btf")) else {
                continue;
            };
            let theirs = parse(&theirs_data, Some(&base)).btf;
            with_lowered(&modules.join(module), Some(&base), features, |split| {
                let ours = match dedup(split, Some(&base.btf)) {
                    Ok(d) => d,
                    Err(e) => panic!("{name}: {e}"),
                };
                let report =
                    crate::diff::diff(&ours.btf, Some(&base.btf), &theirs, Some(&base.btf));
                let outside = report
                    .differences_outside(&[crate::raw::Kind::FUNC, crate::raw::Kind::FUNC_PROTO]);
                eprintln!(
                    "{name}: {} types, pahole 1.31 {}",
                    ours.btf.count(),
                    theirs.count()
                );
                assert!(outside.is_empty(), "{name}: {report}");
            });
        }
    }

    #[cfg(feature = "dwarf")]
    /// Real modules lowered by our pipeline with pahole 1.24's
    /// `-J --btf_gen_floats`, split on the `.BTF` Debian's pahole 1.24
    /// left in vmlinux, deduplicated by us and by the system libbpf; and
    /// vmlinux itself the same way.
    #[test]
    #[ignore]
    fn real_kernel_agrees_with_libbpf() {
        use crate::test_reference::{debian_debug, DEBIAN_MODULES, DEBIAN_VMLINUX};
        use object::{Object, ObjectSection};
        let vmlinux_path = debian_debug(DEBIAN_VMLINUX);
        let Ok(vmlinux) = std::fs::read(&vmlinux_path) else {
            return;
        };
        let Ok(elf) = object::File::parse(&*vmlinux) else {
            return;
        };
        let Some(section) = elf.section_by_name(".BTF") else {
            return;
        };
        let Ok(base_bytes) = section.data() else {
            return;
        };
        let Ok(base) = crate::read::parse(base_bytes, None) else {
            return;
        };
        let modules = debian_debug(DEBIAN_MODULES);
        for module in [
            "net/ipv4/tcp_bbr.ko",
            "net/key/af_key.ko",
            "drivers/net/virtio_net.ko",
            "net/netfilter/nf_conntrack.ko",
            "net/netfilter/nf_tables.ko",
            "fs/xfs/xfs.ko",
        ] {
            with_lowered_legacy(&modules.join(module), Some(&base), |split| {
                let count =
                    |flavor| dedup_as(split, Some(&base.btf), flavor).map(|d| d.btf.count());
                eprintln!(
                    "{module}: {} types -> 1.1 flavor {:?}, 1.7 flavor {:?}",
                    split.count(),
                    count(Flavor::Libbpf1_1),
                    count(Flavor::Libbpf1_7)
                );
                agrees_with_libbpf(split, Some(&base.btf));
            });
        }
        with_lowered_legacy(&vmlinux_path, None, |btf| {
            eprintln!("vmlinux: {} types", btf.count());
            agrees_with_libbpf(btf, None);
        });
    }

    #[cfg(feature = "dwarf")]
    /// Runs `check` on our pipeline's pre-dedup BTF for `path`, lowered
    /// with pahole 1.24's `-J --btf_gen_floats` rules (split on `base`).
    fn with_lowered_legacy(
        path: &std::path::Path,
        base: Option<&crate::read::Parsed<'_>>,
        check: impl FnOnce(&Btf<'_>),
    ) {
        use crate::lower::{Features, LegacyFlags};
        let features = Features::legacy(LegacyFlags {
            btf_gen_floats: true,
            ..LegacyFlags::default()
        });
        with_lowered(path, base, features, check);
    }

    #[cfg(feature = "dwarf")]
    /// The kernel's `--btf_features` list for pahole >= 1.26.
    const KERNEL_FEATURES: &str = "encode_force,var,float,enum64,decl_tag,type_tag,\
                                   optimized_func,consistent_func,decl_tag_kfuncs";

    #[cfg(feature = "dwarf")]
    /// Runs `check` on our pipeline's pre-dedup BTF for `path` lowered
    /// with `features` (split on `base`).
    fn with_lowered(
        path: &std::path::Path,
        base: Option<&crate::read::Parsed<'_>>,
        features: crate::lower::Features,
        check: impl FnOnce(&Btf<'_>),
    ) {
        use crate::encode::{assemble, SplitBase};
        use crate::lower::{lower_cu, register_params_for_machine, Context};
        use rayon::prelude::*;
        let Ok(elf) = dwarf::ElfFile::open(path) else {
            return;
        };
        let (Ok(dwarf), Ok(symbols)) = (elf.dwarf(), elf.symbols()) else {
            return;
        };
        let mut ctx = Context::new(features, &symbols);
        ctx.relocatable = matches!(elf.kind(), dwarf::ElfKind::Relocatable);
        ctx.register_params = register_params_for_machine(elf.machine());
        ctx.lang_exclude = Context::parse_languages("rust").unwrap_or_default();
        let lowered: Vec<_> = dwarf
            .units()
            .par_iter()
            .filter_map(|header| {
                let arena = bumpalo::Bump::new();
                let cu = dwarf::walk::walk_unit(&dwarf, header, &arena).ok()?;
                lower_cu(&cu, &ctx).ok()
            })
            .collect();
        let split_base = base.map(|b| SplitBase {
            type_count: b.total_type_count(),
            str_len: b.str_end(),
        });
        if let Ok(btf) = assemble(lowered, &ctx, split_base) {
            check(&btf);
        }
    }

    #[test]
    #[ignore]
    fn vmlinux_twice_agrees_with_libbpf() {
        let Some(data) = reference("vmlinux.btf") else {
            return;
        };
        let vmlinux = parse(&data, None).btf;
        let mut types = vmlinux.types.clone();
        types.extend(shifted(&vmlinux.types, vmlinux.count()));
        agrees_with_libbpf(&standalone(types), None);
    }

    #[test]
    fn errors_are_reported_not_panicked() {
        let btf = standalone(vec![ptr(7)]);
        assert_eq!(
            dedup(&btf, None).err(),
            Some(Error::DanglingReference {
                type_id: TypeId(1),
                referenced: TypeId(7)
            })
        );
        let btf = standalone(vec![ptr(2), Type::Const(TypeId(1))]);
        assert!(matches!(
            dedup(&btf, None),
            Err(Error::ReferenceLoop { .. })
        ));
        let btf = Btf {
            types: vec![],
            base_type_count: 5,
            base_str_len: 0,
        };
        assert!(matches!(dedup(&btf, None), Err(Error::BaseMismatch { .. })));
    }

    #[test]
    fn long_reference_chains_are_no_loop() {
        // PTR 1 -> PTR 2 -> ... -> PTR 5000 -> INT 5001, each to a later
        // id, twice: the deep walk is no "reference types loop" (it was
        // past 1,000 levels) and does not run out of stack; the second
        // chain folds into the first.
        let n = 5000u32;
        let mut types: Vec<Type<'static>> = (1..=n).map(|id| ptr(id + 1)).collect();
        types.push(int("int"));
        types.extend((1..=n).map(|id| ptr(n + 1 + id + 1)));
        types.push(int("int"));
        let btf = standalone(types);
        let out = dedup(&btf, None).unwrap();
        assert_eq!(out.btf.types.len(), n as usize + 1);
        // A real loop is still one, however long.
        let mut types: Vec<Type<'static>> = (1..n).map(|id| ptr(id + 1)).collect();
        types.push(ptr(1));
        assert!(matches!(
            dedup(&standalone(types), None),
            Err(Error::ReferenceLoop { .. })
        ));
    }
}
