//! Facts derived by hand from the C fixtures (x86-64 SysV layout rules)
//! and from Documentation/bpf/btf.rst, checked on btfenc's BTF through
//! bpftool's dump. The same facts are checked on pahole's BTF too: that
//! proves the facts themselves are right, not our encoder.

use btfenc_tests::raw_dump::{Dump, DumpedType};
use btfenc_tests::Encoder;

use crate::fixtures::{encode_into, scratch};

/// Collects every failed fact so one run reports all of them.
#[derive(Default)]
struct Facts {
    failures: Vec<String>,
}

impl Facts {
    fn check(&mut self, holds: bool, fact: impl Into<String>) {
        if !holds {
            self.failures.push(fact.into());
        }
    }

    fn attr(&mut self, ty: &DumpedType, key: &str, expected: &str) {
        let found = ty.attr(key);
        self.check(
            found == Some(expected),
            format!(
                "{} '{}': {key}={expected}, found {found:?}",
                ty.kind, ty.name
            ),
        );
    }

    /// Member `name` sits at `bits_offset`, with `bitfield_size` when it
    /// is a bitfield and without one otherwise.
    fn member_at(
        &mut self,
        ty: &DumpedType,
        name: &str,
        bits_offset: &str,
        bitfield: Option<&str>,
    ) {
        let offset = ty.member_attr(name, "bits_offset");
        let size = ty.member_attr(name, "bitfield_size");
        self.check(
            offset == Some(bits_offset) && size == bitfield,
            format!(
                "{} '{}' member '{name}': bits_offset={bits_offset} bitfield_size={bitfield:?}, \
                 found {:?}",
                ty.kind,
                ty.name,
                ty.member(name)
            ),
        );
    }

    /// The `type_id` chain from member `name` reads exactly `expected`.
    fn member_chain(&mut self, dump: &Dump, ty: &DumpedType, name: &str, expected: &str) {
        let found = ty.member_type(name).map(|id| dump.chain_text(id));
        self.check(
            found.as_deref() == Some(expected),
            format!(
                "{} '{}' member '{name}' -> {expected}, found {found:?}",
                ty.kind, ty.name
            ),
        );
    }

    fn finish(self, what: &str) {
        assert!(
            self.failures.is_empty(),
            "{} fact(s) do not hold for {what}:\n  {}",
            self.failures.len(),
            self.failures.join("\n  ")
        );
    }
}

/// The `nr_elems` of each ARRAY along the chain from `id`.
fn array_dims(dump: &Dump, id: u32) -> Vec<String> {
    dump.chain(id)
        .iter()
        .filter(|ty| ty.kind == "ARRAY")
        .filter_map(|ty| ty.attr("nr_elems").map(str::to_string))
        .collect()
}

fn kinds_c(dump: &Dump, facts: &mut Facts) {
    // Packed: 30 + 10 + 20 bits, 'spans' straddles bit 32, 'tail' starts
    // at the next byte after bit 60: offset 64, size 9.
    let spanning = dump.one("STRUCT", "fx_spanning");
    facts.attr(spanning, "size", "9");
    facts.member_at(spanning, "low", "0", Some("30"));
    facts.member_at(spanning, "spans", "30", Some("10"));
    facts.member_at(spanning, "high", "40", Some("20"));
    facts.member_at(spanning, "tail", "64", None);

    // ':0' moves to the next int unit (32); 'wide' (40 bits) cannot fit
    // after bit 46 in its 64-bit unit, so it starts at 64; the int after
    // the bitfields lands at 128; alignment 8 rounds 20 bytes to 24.
    let bits = dump.one("STRUCT", "fx_bitfields");
    facts.attr(bits, "size", "24");
    facts.member_at(bits, "one_bit", "0", Some("1"));
    facts.member_at(bits, "signed_three", "1", Some("3"));
    facts.member_at(bits, "after_zero", "32", Some("5"));
    facts.member_at(bits, "color", "37", Some("4"));
    facts.member_at(bits, "sign", "41", Some("4"));
    facts.member_at(bits, "bool_bit", "45", Some("1"));
    facts.member_at(bits, "wide", "64", Some("40"));
    facts.member_at(bits, "byte_bit", "104", Some("2"));
    facts.member_at(bits, "typedef_bits", "106", Some("7"));
    facts.member_at(bits, "plain", "128", None);
    facts.member_chain(dump, bits, "color", "ENUM 'fx_color'");
    facts.member_chain(
        dump,
        bits,
        "typedef_bits",
        "TYPEDEF 'fx_u32' -> INT 'unsigned int'",
    );

    let signed = dump.one("ENUM", "fx_signed");
    facts.attr(signed, "size", "4");
    facts.attr(signed, "encoding", "SIGNED");
    facts.check(
        signed.member("FX_NEG") == Some("'FX_NEG' val=-3"),
        format!("FX_NEG = -3, found {:?}", signed.member("FX_NEG")),
    );
    let color = dump.one("ENUM", "fx_color");
    facts.check(
        color.member("FX_BLUE") == Some("'FX_BLUE' val=6"),
        format!("FX_BLUE = 6, found {:?}", color.member("FX_BLUE")),
    );
    let wide = dump.one("ENUM64", "fx_wide");
    facts.attr(wide, "size", "8");
    facts.attr(wide, "encoding", "UNSIGNED");
    facts.check(
        wide.member("FX_WIDE_BIG") == Some("'FX_WIDE_BIG' val=78187493520ULL"),
        format!(
            "FX_WIDE_BIG = 0x1234567890, found {:?}",
            wide.member("FX_WIDE_BIG")
        ),
    );
    let wide_neg = dump.one("ENUM64", "fx_wide_neg");
    facts.attr(wide_neg, "encoding", "SIGNED");
    facts.check(
        wide_neg.member("FX_WIDE_MIN") == Some("'FX_WIDE_MIN' val=-4294967296LL"),
        format!(
            "FX_WIDE_MIN = -2^32, found {:?}",
            wide_neg.member("FX_WIDE_MIN")
        ),
    );

    // Multi-dimensional arrays: btf.rst allows nesting one ARRAY per
    // dimension or (as pahole does) one flattened ARRAY; either way the
    // element counts multiply to the C total and end at the element type.
    // [0] and flexible arrays have nr_elems=0.
    let arrays = dump.one("STRUCT", "fx_arrays");
    for (member, total, element) in [
        ("one", 4, "INT 'int'"),
        ("grid", 3 * 4, "INT 'int'"),
        ("cube", 2 * 3 * 5, "INT 'char'"),
        ("empty", 0, "INT 'int'"),
        ("lists", 2, "STRUCT 'fx_list'"),
    ] {
        let chain = arrays
            .member_type(member)
            .map(|id| dump.chain(id))
            .unwrap_or_default();
        let found_total = array_dims(dump, chain.first().map_or(0, |ty| ty.id))
            .iter()
            .map(|dim| dim.parse::<u64>().unwrap_or(u64::MAX))
            .product::<u64>();
        let leaf = chain.last().map(|ty| format!("{} '{}'", ty.kind, ty.name));
        facts.check(
            chain.first().map(|ty| ty.kind.as_str()) == Some("ARRAY")
                && found_total == total
                && leaf.as_deref() == Some(element),
            format!(
                "fx_arrays.{member} holds {total} x {element}, found {:?}",
                arrays.member_type(member).map(|id| dump.chain_text(id))
            ),
        );
    }
    let flexible = dump.one("STRUCT", "fx_flexible");
    facts.attr(flexible, "size", "8");
    facts.member_at(flexible, "entries", "64", None);
    let entries = flexible.member_type("entries").and_then(|id| dump.get(id));
    facts.check(
        entries.and_then(|ty| ty.attr("nr_elems")) == Some("0"),
        format!("flexible array has nr_elems=0, found {entries:?}"),
    );

    // Floats: these tests encode with --btf_gen_floats.
    for (name, size) in [("float", "4"), ("double", "8"), ("long double", "16")] {
        facts.attr(dump.one("FLOAT", name), "size", size);
    }
    let base = dump.one("STRUCT", "fx_base_types");
    let leaf = |member: &str| {
        base.member_type(member)
            .and_then(|id| dump.chain(id).last().map(|ty| (*ty).clone()))
    };
    let bool_type = leaf("flag");
    facts.check(
        bool_type.as_ref().and_then(|ty| ty.attr("encoding")) == Some("BOOL")
            && bool_type.as_ref().and_then(|ty| ty.attr("size")) == Some("1"),
        format!("_Bool is a 1-byte INT with encoding=BOOL, found {bool_type:?}"),
    );
    for (member, encoding) in [("i128", "SIGNED"), ("u128", "(none)")] {
        let int = leaf(member);
        facts.check(
            int.as_ref().map(|ty| ty.kind.as_str()) == Some("INT")
                && int.as_ref().and_then(|ty| ty.attr("size")) == Some("16")
                && int.as_ref().and_then(|ty| ty.attr("nr_bits")) == Some("128")
                && int.as_ref().and_then(|ty| ty.attr("encoding")) == Some(encoding),
            format!("{member} is a 16-byte INT, encoding={encoding}, found {int:?}"),
        );
    }

    let quals = dump.one("STRUCT", "fx_qualifiers");
    facts.member_chain(dump, quals, "ci", "CONST '(anon)' -> INT 'int'");
    facts.member_chain(dump, quals, "vi", "VOLATILE '(anon)' -> INT 'int'");
    facts.member_chain(
        dump,
        quals,
        "rp",
        "RESTRICT '(anon)' -> PTR '(anon)' -> INT 'char'",
    );
    facts.member_chain(
        dump,
        quals,
        "cw",
        "TYPEDEF 'fx_cword' -> CONST '(anon)' -> TYPEDEF 'fx_word' -> TYPEDEF 'fx_u32' -> INT 'unsigned int'",
    );
    // const volatile: the two modifiers may come in either order.
    let cvl: Vec<String> = quals
        .member_type("cvl")
        .map(|id| dump.chain(id).iter().map(|ty| ty.kind.clone()).collect())
        .unwrap_or_default();
    let mut modifiers = cvl.iter().take(2).cloned().collect::<Vec<_>>();
    modifiers.sort();
    facts.check(
        modifiers == ["CONST", "VOLATILE"] && cvl.get(2).map(String::as_str) == Some("INT"),
        format!("cvl is const volatile long, found {cvl:?}"),
    );
}

fn structs_c(dump: &Dump, facts: &mut Facts) {
    let packed = dump.one("STRUCT", "fx_packed");
    facts.attr(packed, "size", "15");
    facts.member_at(packed, "i", "8", None);
    facts.member_at(packed, "l", "40", None);
    facts.member_at(packed, "s", "104", None);
    facts.attr(dump.one("STRUCT", "fx_cacheline"), "size", "64");
    let aligned = dump.one("STRUCT", "fx_member_aligned");
    facts.attr(aligned, "size", "128");
    facts.member_at(aligned, "aligned_int", "128", None);
    facts.member_at(aligned, "line", "512", None);
    let union = dump.one("UNION", "fx_union");
    facts.attr(union, "size", "16");
    for member in ["i", "d", "p", "bytes"] {
        facts.member_at(union, member, "0", None);
    }

    // Only pointers to these exist: each is a FWD of the right flavour
    // and never a full definition.
    for (name, flavour, kind) in [
        ("fx_opaque", "struct", "STRUCT"),
        ("fx_opaque_u", "union", "UNION"),
        ("fx_never_defined", "struct", "STRUCT"),
        ("fx_never_defined_u", "union", "UNION"),
    ] {
        facts.attr(dump.one("FWD", name), "fwd_kind", flavour);
        facts.check(
            dump.find_all(kind, name).is_empty(),
            format!("{name} is never defined, yet a {kind} exists"),
        );
    }

    // int, then an 8-aligned anonymous union (a struct of two u32 inside),
    // an anonymous-typed 'point' and 'pun': 4+4(pad)+8+8+4 -> 32.
    let nested = dump.one("STRUCT", "fx_nested");
    facts.attr(nested, "size", "32");
    facts.member_at(nested, "kind", "0", None);
    facts.member_at(nested, "(anon)", "64", None);
    facts.member_at(nested, "point", "128", None);
    facts.member_at(nested, "pun", "192", None);
    let anon_union = nested.member_type("(anon)").and_then(|id| dump.get(id));
    match anon_union {
        Some(anon_union) => {
            facts.check(
                anon_union.kind == "UNION" && anon_union.name == "(anon)",
                format!("fx_nested's anonymous member is an anonymous UNION: {anon_union:?}"),
            );
            facts.attr(anon_union, "size", "8");
            let inner = anon_union.member_type("(anon)").and_then(|id| dump.get(id));
            match inner {
                Some(inner) => {
                    facts.check(
                        inner.kind == "STRUCT",
                        format!("inner anonymous STRUCT: {inner:?}"),
                    );
                    facts.member_at(inner, "lo", "0", None);
                    facts.member_at(inner, "hi", "32", None);
                }
                None => facts.check(false, "the anonymous union holds an anonymous struct"),
            }
        }
        None => facts.check(false, "fx_nested has an anonymous member"),
    }
}

fn funcs_c(encoder: Encoder, dump: &Dump, facts: &mut Facts) {
    // btf.rst: a variadic FUNC_PROTO ends with a parameter of name 0 and
    // type 0.
    for func in ["fx_sum_varargs", "fx_printf_like"] {
        let proto = dump.target(dump.one("FUNC", func));
        let last = proto.and_then(|proto| proto.members.last().cloned());
        facts.check(
            proto.map(|p| p.kind.as_str()) == Some("FUNC_PROTO")
                && proto.and_then(|p| p.attr("vlen")) == Some("2")
                && last.as_deref() == Some("'(anon)' type_id=0"),
            format!("{func} is variadic with one named parameter, found {proto:?}"),
        );
    }
    let logger = dump.one("TYPEDEF", "fx_logger_t");
    let logger_chain = logger.type_id().map(|id| dump.chain(id));
    let logger_proto = logger_chain
        .as_ref()
        .and_then(|chain| chain.get(1).copied());
    facts.check(
        logger_proto.map(|p| p.kind.as_str()) == Some("FUNC_PROTO")
            && logger_proto
                .and_then(|p| p.members.last())
                .map(String::as_str)
                == Some("'(anon)' type_id=0"),
        format!("fx_logger_t is a pointer to a variadic FUNC_PROTO, found {logger_chain:?}"),
    );
    let no_args = dump.target(dump.one("FUNC", "fx_no_args"));
    facts.check(
        no_args.and_then(|p| p.attr("ret_type_id")) == Some("0")
            && no_args.and_then(|p| p.attr("vlen")) == Some("0"),
        format!("fx_no_args is void(void), found {no_args:?}"),
    );
    // The static helpers are kept out of line with their signature
    // (FX_KEEP), so each must have exactly one FUNC.
    for func in ["fx_account", "fx_self", "fx_funcs_touch"] {
        facts.check(
            dump.find_all("FUNC", func).len() == 1,
            format!("exactly one FUNC '{func}'"),
        );
    }
    // fx_many_args: pahole 1.24 keeps it; pahole 1.31 (btfenc's default)
    // leaves it out with any flags, "due to unexpected register usage for
    // parameter" (its ninth argument goes on the stack after a float):
    // measured with the real pahole 1.31 on exec/prog-gcc, multi-cu/*.o
    // and compressed/zlib-multi-cu.o, default flags and the kernel's.
    let many_args = match encoder {
        Encoder::Pahole => 1,
        Encoder::Btfenc => 0,
    };
    facts.check(
        dump.find_all("FUNC", "fx_many_args").len() == many_args,
        format!("{many_args} FUNC 'fx_many_args'"),
    );
}

fn percpu_vars(dump: &Dump, facts: &mut Facts) {
    // Per-CPU variables: a VAR each, listed in the one '.data..percpu'
    // DATASEC with their sizes.
    let sections = dump.find_all("DATASEC", ".data..percpu");
    facts.check(
        sections.len() == 1,
        format!("one DATASEC '.data..percpu', found {}", sections.len()),
    );
    facts.check(
        dump.one("VAR", "fx_percpu_counter")
            .type_id()
            .map(|id| dump.chain_text(id))
            .as_deref()
            == Some("INT 'int'"),
        "VAR fx_percpu_counter is an int",
    );
    for (var, size) in [("fx_percpu_counter", "4"), ("fx_percpu_stats_var", "24")] {
        let entry = sections.first().and_then(|section| {
            section
                .members
                .iter()
                .find(|line| line.ends_with(&format!("(VAR '{var}')")))
        });
        facts.check(
            entry.is_some_and(|line| line.contains(&format!(" size={size} "))),
            format!("DATASEC lists VAR '{var}' with size={size}, found {entry:?}"),
        );
    }
}

/// Types from types.h appear in every CU; after deduplication exactly
/// one copy of each must remain.
fn shared_types_deduplicated(dump: &Dump, facts: &mut Facts) {
    for (kind, name) in [
        ("STRUCT", "fx_header"),
        ("STRUCT", "fx_list"),
        ("STRUCT", "fx_ops"),
        ("TYPEDEF", "fx_u32"),
        ("TYPEDEF", "fx_cword"),
        ("TYPEDEF", "fx_logger_t"),
        ("ENUM", "fx_color"),
    ] {
        let copies = dump.find_all(kind, name).len();
        facts.check(
            copies == 1,
            format!("{kind} '{name}' once after dedup, found {copies}"),
        );
    }
}

fn tags_c(dump: &Dump, facts: &mut Facts, with_percpu_var: bool) {
    let tagged = dump.one("STRUCT", "fx_tagged");
    facts.member_chain(
        dump,
        tagged,
        "user_ptr",
        "PTR '(anon)' -> TYPE_TAG 'user' -> INT 'int'",
    );
    facts.member_chain(
        dump,
        tagged,
        "rcu_list",
        "PTR '(anon)' -> TYPE_TAG 'rcu' -> STRUCT 'fx_list'",
    );
    let union = dump.one("UNION", "fx_tagged_union");
    let typedef = dump.one("TYPEDEF", "fx_user_int_ptr");
    let func = dump.one("FUNC", "fx_tagged_func");
    let mut tags = vec![
        ("counter", tagged, "3"),
        ("tagged_struct", tagged, "-1"),
        ("union_member", union, "0"),
        ("tagged_union", union, "-1"),
        ("tagged_typedef", typedef, "-1"),
        ("arg_tag", func, "0"),
        ("kfunc", func, "-1"),
    ];
    if with_percpu_var {
        tags.push(("percpu_tag", dump.one("VAR", "fx_tagged_percpu"), "-1"));
    }
    for (tag, target, component) in tags {
        let decl = dump.find_all("DECL_TAG", tag);
        let expected_target = target.id.to_string();
        facts.check(
            decl.len() == 1
                && decl.first().and_then(|d| d.attr("type_id")) == Some(expected_target.as_str())
                && decl.first().and_then(|d| d.attr("component_idx")) == Some(component),
            format!(
                "DECL_TAG '{tag}' on {} '{}' component_idx={component}, found {decl:?}",
                target.kind, target.name
            ),
        );
    }
}

#[derive(Clone, Copy)]
struct Sources {
    kinds: bool,
    structs: bool,
    funcs: bool,
    /// Whether the per-CPU variables (of funcs.c, tags.c) become VARs:
    /// `ld -r` keeps `.data..percpu`, but a final link's default script
    /// folds `.data.*` into `.data`, so an executable has no per-CPU
    /// section and hence no VAR.
    percpu: bool,
    tags: bool,
    multi_cu: bool,
}

fn check_facts(encoder: Encoder, path: &str, sources: Sources) {
    let dir = scratch();
    let out = encode_into(encoder, path, &["--btf_gen_floats"], dir.path(), "out.btf");
    let dump = Dump::of_file(&out, None);
    let mut facts = Facts::default();
    if sources.kinds {
        kinds_c(&dump, &mut facts);
    }
    if sources.structs {
        structs_c(&dump, &mut facts);
    }
    if sources.funcs {
        funcs_c(encoder, &dump, &mut facts);
    }
    if sources.funcs && sources.percpu {
        percpu_vars(&dump, &mut facts);
    }
    if sources.multi_cu {
        shared_types_deduplicated(&dump, &mut facts);
    }
    if sources.tags {
        tags_c(&dump, &mut facts, sources.percpu);
    }
    facts.finish(&format!("{encoder:?}'s BTF of {path}"));
}

const ALL: Sources = Sources {
    kinds: true,
    structs: true,
    funcs: true,
    percpu: true,
    tags: false,
    multi_cu: true,
};
const GCC_MULTI_CU: Sources = ALL;
const CLANG_MULTI_CU: Sources = Sources { tags: true, ..ALL };
const EXECUTABLE: Sources = Sources {
    percpu: false,
    ..ALL
};
const NONE: Sources = Sources {
    kinds: false,
    structs: false,
    funcs: false,
    percpu: false,
    tags: false,
    multi_cu: false,
};
const TAGS_ONLY: Sources = Sources {
    tags: true,
    percpu: true,
    ..NONE
};
/// pahole 1.24 encodes no VAR at all for BPF-target objects (observed on
/// both byte orders, although `.data..percpu` and its symbol are there):
/// elfutils 0.188 cannot apply R_BPF_64_ABS64, so the variables' addresses
/// are lost. btfenc follows pahole, so the per-CPU facts are left out.
const BPF_TAGS: Sources = Sources { tags: true, ..NONE };
const STRUCTS_ONLY: Sources = Sources {
    structs: true,
    ..NONE
};

/// The facts, on btfenc's output.
mod btfenc_output {
    use super::*;

    #[test]
    fn multi_cu_gcc_dwarf5() {
        check_facts(Encoder::Btfenc, "obj/multi-cu/gcc-dwarf5.o", GCC_MULTI_CU);
    }

    #[test]
    fn multi_cu_clang() {
        check_facts(Encoder::Btfenc, "obj/multi-cu/clang.o", CLANG_MULTI_CU);
    }

    #[test]
    fn exec_gcc() {
        check_facts(Encoder::Btfenc, "obj/exec/prog-gcc", EXECUTABLE);
    }

    #[test]
    fn zlib_multi_cu() {
        check_facts(
            Encoder::Btfenc,
            "obj/compressed/zlib-multi-cu.o",
            GCC_MULTI_CU,
        );
    }

    #[test]
    fn clang_tags() {
        check_facts(Encoder::Btfenc, "obj/clang/tags.o", TAGS_ONLY);
    }

    #[test]
    fn bpfeb_structs() {
        check_facts(Encoder::Btfenc, "obj/bpf/structs-bpfeb.o", STRUCTS_ONLY);
    }

    #[test]
    fn bpfeb_tags() {
        check_facts(Encoder::Btfenc, "obj/bpf/tags-bpfeb.o", BPF_TAGS);
    }
}

/// The same facts on pahole's output: a fact that fails here is a wrong
/// fact, not an encoder bug.
mod pahole_output {
    use super::*;

    #[test]
    fn multi_cu_gcc_dwarf5() {
        check_facts(Encoder::Pahole, "obj/multi-cu/gcc-dwarf5.o", GCC_MULTI_CU);
    }

    #[test]
    fn multi_cu_clang() {
        check_facts(Encoder::Pahole, "obj/multi-cu/clang.o", CLANG_MULTI_CU);
    }

    #[test]
    fn exec_gcc() {
        check_facts(Encoder::Pahole, "obj/exec/prog-gcc", EXECUTABLE);
    }

    #[test]
    fn bpfeb_structs() {
        check_facts(Encoder::Pahole, "obj/bpf/structs-bpfeb.o", STRUCTS_ONLY);
    }

    #[test]
    fn bpfeb_tags() {
        check_facts(Encoder::Pahole, "obj/bpf/tags-bpfeb.o", BPF_TAGS);
    }
}
