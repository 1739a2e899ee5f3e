//! Walker tests on tiny C files compiled on the fly. Expected values come
//! from the C source and the ABI (x86_64 layout rules), never from our own
//! output. A missing compiler skips a test loudly.

use std::path::{Path, PathBuf};
use std::process::Command;

use dwarf::model::*;
use dwarf::{ElfFile, ErrorKind};

/// Compiles `source` with `compiler` and `flags` into `out` inside a fresh
/// temporary directory; `None` (with a message) when the compiler is
/// missing or refuses the flags.
fn compile(
    compiler: &str,
    flags: &[&str],
    source: &str,
    out: &str,
) -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().ok()?;
    let src = dir.path().join("t.c");
    std::fs::write(&src, source).ok()?;
    let output = dir.path().join(out);
    let result = Command::new(compiler)
        .current_dir(dir.path())
        .args(flags)
        .arg("t.c")
        .arg("-o")
        .arg(&output)
        .output();
    match result {
        Ok(result) if result.status.success() => Some((dir, output)),
        Ok(result) => {
            eprintln!(
                "SKIPPED: {compiler} {flags:?} failed: {}",
                String::from_utf8_lossy(&result.stderr)
            );
            None
        }
        Err(err) => {
            eprintln!("SKIPPED: cannot run {compiler}: {err}");
            None
        }
    }
}

/// Walks every unit of `path` and hands the models to `check`.
fn with_models(path: &Path, check: impl FnOnce(&[CuModel<'_, '_>])) {
    let file = ElfFile::open(path).expect("open");
    let dwarf = file.dwarf().expect("dwarf");
    let arena = bumpalo::Bump::new();
    let models: Vec<_> = dwarf
        .units()
        .iter()
        .map(|unit| dwarf::walk::walk_unit(&dwarf, unit, &arena).expect("walk"))
        .collect();
    check(&models);
}

/// Compiles `source` to an object and walks its only unit.
fn with_object(compiler: &str, flags: &[&str], source: &str, check: impl FnOnce(&CuModel<'_, '_>)) {
    let mut all: Vec<&str> = vec!["-c"];
    all.extend_from_slice(flags);
    let Some((_dir, object)) = compile(compiler, &all, source, "t.o") else {
        return;
    };
    with_models(&object, |models| {
        assert_eq!(models.len(), 1, "{compiler} {flags:?}: one CU");
        check(&models[0]);
    });
}

fn composite<'m, 'i, 'a>(model: &'m CuModel<'i, 'a>, wanted: &str) -> &'m [Member<'i, 'a>] {
    model
        .nodes
        .iter()
        .find_map(|node| match node {
            Node::Composite {
                name: Some(name),
                members,
                declaration: false,
                ..
            } if *name == wanted => Some(*members),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no struct/union {wanted}"))
}

fn member<'m, 'i, 'a>(members: &'m [Member<'i, 'a>], wanted: &str) -> &'m Member<'i, 'a> {
    members
        .iter()
        .find(|member| member.name == Some(wanted))
        .unwrap_or_else(|| panic!("no member {wanted}"))
}

fn function<'m, 'i, 'a>(model: &'m CuModel<'i, 'a>, wanted: &str) -> &'m Function<'i, 'a> {
    model
        .functions
        .iter()
        .find(|function| function.name == wanted && !function.declaration)
        .unwrap_or_else(|| panic!("no function {wanted}"))
}

fn type_node<'m, 'i, 'a>(model: &'m CuModel<'i, 'a>, ty: TypeRef) -> &'m Node<'i, 'a> {
    match ty {
        TypeRef::Node(id) => model.node(id),
        TypeRef::Void => panic!("void where a type was expected"),
    }
}

/// The name of a base type or typedef, through qualifiers.
fn type_name<'i>(model: &CuModel<'i, '_>, ty: TypeRef) -> &'i str {
    match *type_node(model, ty) {
        Node::Base { name, .. } | Node::Typedef { name, .. } => name,
        Node::Qualified { target, .. } => type_name(model, target),
        Node::Composite {
            name: Some(name), ..
        } => name,
        ref other => panic!("unnamed type {other:?}"),
    }
}

const BITFIELDS: &str = r#"
struct bf {
    unsigned int a : 3;
    unsigned int b : 5;
    int c;
    unsigned long d : 40;
    unsigned char e : 1;
    short f;
} bf_var;
struct __attribute__((packed)) packed_bf {
    char c;
    unsigned int x : 31;
    unsigned int y : 9;
    unsigned long long z : 60;
} packed_var;
"#;

/// (name, bit offset, bitfield size) from the x86_64 SysV layout rules.
const BITFIELD_LAYOUT: [(&str, u64, u32); 6] = [
    ("a", 0, 3),
    ("b", 3, 5),
    ("c", 32, 0),
    ("d", 64, 40),
    ("e", 104, 1),
    ("f", 112, 0),
];

#[test]
fn bitfields_agree_across_dwarf_versions_and_compilers() {
    for (compiler, flags) in [
        ("gcc", &["-g", "-gdwarf-4"][..]),
        ("gcc", &["-g", "-gdwarf-5"][..]),
        ("gcc", &["-g", "-gdwarf-2", "-gstrict-dwarf"][..]),
        ("clang", &["-g", "-gdwarf-4"][..]),
        ("clang", &["-g", "-gdwarf-5"][..]),
    ] {
        with_object(compiler, flags, BITFIELDS, |model| {
            let members = composite(model, "bf");
            let got: Vec<_> = members
                .iter()
                .map(|m| (m.name.unwrap_or("?"), m.bit_offset, m.bitfield_size))
                .collect();
            assert_eq!(got, BITFIELD_LAYOUT, "{compiler} {flags:?}");
            // Packed: every field right after the previous one, so gcc's
            // DWARF 4 gives negative DW_AT_bit_offset for x and z.
            let got: Vec<_> = composite(model, "packed_bf")
                .iter()
                .map(|m| (m.name.unwrap_or("?"), m.bit_offset, m.bitfield_size))
                .collect();
            assert_eq!(
                got,
                [("c", 0, 0), ("x", 8, 31), ("y", 39, 9), ("z", 48, 60)],
                "{compiler} {flags:?}"
            );
        });
    }
}

#[test]
fn relocated_strings_in_relocatable_objects() {
    // In a .o every DW_FORM_strp is a relocation against .debug_str; if
    // relocations were not applied every name would be the same string.
    let source = "struct alpha { int first; long second; };\n\
                  struct beta { char third; struct alpha *fourth; };\n\
                  struct beta beta_var;\n\
                  int gamma_function(struct alpha *a) { return a->first; }\n";
    for compiler in ["gcc", "clang"] {
        with_object(compiler, &["-g", "-O1"], source, |model| {
            assert_eq!(model.name, Some("t.c"));
            // gcc 12 writes DW_LANG_C11 for its default (gnu17), clang 14
            // DW_LANG_C99, clang 19 DW_LANG_C11.
            assert!(
                [Language::C11, Language::C99].contains(&model.language),
                "{compiler}: {:?}",
                model.language
            );
            let alpha = composite(model, "alpha");
            assert_eq!(member(alpha, "first").bit_offset, 0);
            assert_eq!(member(alpha, "second").bit_offset, 64);
            let beta = composite(model, "beta");
            assert_eq!(member(beta, "fourth").bit_offset, 64);
            let f = function(model, "gamma_function");
            assert!(f.external);
            assert_eq!(f.params.len(), 1);
            assert_eq!(f.params[0].name, Some("a"));
            assert_eq!(type_name(model, f.ret), "int");
            let var = model
                .variables
                .iter()
                .find(|v| v.name == "beta_var")
                .expect("beta_var");
            assert!(var.external && !var.in_function);
            // Section-relative address of the only .bss object.
            assert_eq!(var.address, Some(0));
        });
    }
}

const LAYOUTS: &str = r#"
struct outer {
    int kind;
    union {
        int i;
        struct { short lo, hi; };
    };
    char tail[];
};
struct arrays {
    int m[2][3][4];
    int z[0];
};
struct outer *outer_ptr;
struct arrays arrays_var;
"#;

#[test]
fn anonymous_members_flexible_and_multidimensional_arrays() {
    for compiler in ["gcc", "clang"] {
        with_object(compiler, &["-g"], LAYOUTS, |model| {
            let outer = composite(model, "outer");
            assert_eq!(outer.len(), 3);
            assert_eq!((outer[0].name, outer[0].bit_offset), (Some("kind"), 0));
            assert_eq!((outer[1].name, outer[1].bit_offset), (None, 32));
            assert_eq!((outer[2].name, outer[2].bit_offset), (Some("tail"), 64));
            let Node::Composite {
                kind: CompositeKind::Union,
                members: union_members,
                ..
            } = *type_node(model, outer[1].ty)
            else {
                panic!("anonymous member is not a union");
            };
            assert_eq!(union_members.len(), 2);
            assert!(union_members.iter().all(|m| m.bit_offset == 0));
            let Node::Composite {
                kind: CompositeKind::Struct,
                name: None,
                members: inner,
                ..
            } = *type_node(model, union_members[1].ty)
            else {
                panic!("anonymous struct expected");
            };
            let inner: Vec<_> = inner.iter().map(|m| (m.name, m.bit_offset)).collect();
            assert_eq!(inner, [(Some("lo"), 0), (Some("hi"), 16)]);
            let Node::Array { dims, .. } = *type_node(model, outer[2].ty) else {
                panic!("tail")
            };
            assert_eq!(dims, [0], "{compiler}: flexible array");

            let arrays = composite(model, "arrays");
            let Node::Array { elem, dims } = *type_node(model, member(arrays, "m").ty) else {
                panic!("m")
            };
            assert_eq!(dims, [2, 3, 4], "{compiler}");
            assert_eq!(type_name(model, elem), "int");
            let Node::Array { dims, .. } = *type_node(model, member(arrays, "z").ty) else {
                panic!("z")
            };
            assert_eq!(dims, [0], "{compiler}: zero-length array");
            assert_eq!(member(arrays, "z").bit_offset, 2 * 3 * 4 * 32);
        });
    }
}

const ENUMS: &str = r#"
enum small { NEG = -1, POS = 1, BIG = 0x7fffffff, B128 = 128, B255 = 255 };
enum uns { U_ONE = 1, U_TOP = 0x80000000u };
enum wide { W_NEG = -5000000000L, W_POS = 5000000000L };
enum small small_var; enum uns uns_var; enum wide wide_var;
"#;

fn enumerators<'m, 'i>(model: &'m CuModel<'i, '_>, wanted: &str) -> (u32, &'m [Enumerator<'i>]) {
    model
        .nodes
        .iter()
        .find_map(|node| match node {
            Node::Enum {
                name: Some(name),
                byte_size,
                enumerators,
                ..
            } if *name == wanted => Some((*byte_size, *enumerators)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no enum {wanted}"))
}

#[test]
fn enum_values_and_signs() {
    for (compiler, flags) in [
        ("gcc", &["-g", "-gdwarf-4"][..]),
        ("gcc", &["-g", "-gdwarf-5"][..]),
        ("clang", &["-g"][..]),
    ] {
        with_object(compiler, flags, ENUMS, |model| {
            let (size, small) = enumerators(model, "small");
            assert_eq!(size, 4);
            let got: Vec<_> = small
                .iter()
                .map(|e| (e.name, e.value as i64, e.negative))
                .collect();
            assert_eq!(
                got,
                [
                    ("NEG", -1, true),
                    ("POS", 1, false),
                    ("BIG", 0x7fff_ffff, false),
                    ("B128", 128, false),
                    ("B255", 255, false)
                ],
                "{compiler} {flags:?}"
            );
            let (_, uns) = enumerators(model, "uns");
            let got: Vec<_> = uns.iter().map(|e| (e.value, e.negative)).collect();
            assert_eq!(
                got,
                [(1, false), (0x8000_0000, false)],
                "{compiler} {flags:?}"
            );
            let (size, wide) = enumerators(model, "wide");
            assert_eq!(size, 8);
            let got: Vec<_> = wide.iter().map(|e| (e.value as i64, e.negative)).collect();
            assert_eq!(
                got,
                [(-5_000_000_000, true), (5_000_000_000, false)],
                "{compiler} {flags:?}"
            );
        });
    }
}

const FUNCTIONS: &str = r#"
typedef void (*logger_t)(int level, const char *fmt, ...);
logger_t logger;
int vf(const char *fmt, ...) { return fmt[0]; }
static int helper(int value) { return value * 3 + 1; }
int use_helper(int x) { return helper(x) + helper(x + 1); }
int (*keep_helper)(int) = helper;
__attribute__((noinline)) long add2(long a, long b) { return a + b; }
int counter(void) { static int calls; return ++calls; }
"#;

#[test]
fn varargs_abstract_origins_and_parameter_registers() {
    with_object("gcc", &["-g", "-O2"], FUNCTIONS, |model| {
        let vf = function(model, "vf");
        assert!(vf.varargs);
        assert_eq!(vf.params.len(), 1);
        assert_eq!(vf.params[0].name, Some("fmt"));

        let logger = model
            .variables
            .iter()
            .find(|v| v.name == "logger")
            .expect("logger");
        let Node::Typedef { target, .. } = *type_node(model, logger.ty) else {
            panic!("typedef")
        };
        let Node::Pointer { target, .. } = *type_node(model, target) else {
            panic!("pointer")
        };
        let Node::Subroutine {
            params,
            varargs,
            ret,
        } = *type_node(model, target)
        else {
            panic!("subroutine")
        };
        assert!(varargs);
        assert_eq!(ret, TypeRef::Void);
        assert_eq!(params.len(), 2);
        assert_eq!(params[0].location, ParamLocation::Unknown);

        // helper is inlined into use_helper and also kept out of line
        // (its address is taken): an abstract instance with DW_AT_inline
        // and a concrete one with DW_AT_abstract_origin.
        let helpers: Vec<_> = model
            .functions
            .iter()
            .filter(|f| f.name == "helper")
            .collect();
        assert!(
            helpers.iter().any(|f| f.inline && f.low_pc.is_none()),
            "{helpers:?}"
        );
        let concrete = helpers
            .iter()
            .find(|f| f.low_pc.is_some())
            .expect("out-of-line helper");
        assert!(!concrete.inline && !concrete.external);
        assert_eq!(concrete.params.len(), 1);
        assert_eq!(concrete.params[0].name, Some("value"));
        assert_eq!(type_name(model, concrete.params[0].ty), "int");
        assert_eq!(type_name(model, concrete.ret), "int");
        // pahole shares a concrete parameter's location facts with its
        // abstract origin, whose signature is the one BTF gets: in the
        // entry; `location` is the DIE's own (none).
        let abstract_helper = helpers.iter().find(|f| f.inline).expect("abstract helper");
        assert_eq!(
            abstract_helper.params[0].location,
            ParamLocation::OptimizedOut
        );
        assert!(abstract_helper.params[0].entry.has_location);
        assert_eq!(concrete.params[0].location, ParamLocation::Register(5));

        // x86_64 passes the first two integer arguments in rdi (5), rsi (4).
        let add2 = function(model, "add2");
        assert_eq!(add2.params[0].location, ParamLocation::Register(5));
        assert_eq!(add2.params[1].location, ParamLocation::Register(4));
        assert!(add2.low_pc.is_some());

        let calls = model
            .variables
            .iter()
            .find(|v| v.name == "calls")
            .expect("static local");
        assert!(calls.in_function && calls.address.is_some());
    });
}

#[test]
fn btf_type_and_decl_tags_from_clang() {
    let source = r#"
#define __tag1 __attribute__((btf_type_tag("tag1")))
#define __dtag __attribute__((btf_decl_tag("dtag")))
struct tagged { int __tag1 *ptr __dtag; } __dtag;
int __dtag tagged_fn(struct tagged *t __dtag) { return *t->ptr; }
"#;
    with_object("clang", &["-g", "-O1"], source, |model| {
        let members = composite(model, "tagged");
        let ptr = member(members, "ptr");
        assert_eq!(ptr.decl_tags, ["dtag"]);
        let Node::Pointer { type_tags, .. } = *type_node(model, ptr.ty) else {
            panic!("ptr")
        };
        assert_eq!(type_tags, ["tag1"]);
        let tagged = model.nodes.iter().find_map(|node| match node {
            Node::Composite {
                name: Some("tagged"),
                decl_tags,
                ..
            } => Some(*decl_tags),
            _ => None,
        });
        assert_eq!(tagged, Some(&["dtag"][..]));
        let f = function(model, "tagged_fn");
        assert_eq!(f.decl_tags, ["dtag"]);
        assert_eq!(f.params[0].decl_tags, ["dtag"]);
    });
}

#[test]
fn compressed_debug_sections_read_like_plain_ones() {
    let plain = |model: &CuModel<'_, '_>| {
        let got: Vec<_> = composite(model, "bf")
            .iter()
            .map(|m| (m.name.unwrap_or("?"), m.bit_offset, m.bitfield_size))
            .collect();
        assert_eq!(got, BITFIELD_LAYOUT);
    };
    with_object("gcc", &["-g", "-gz=zlib"], BITFIELDS, plain);
    // The old GNU form: .zdebug_* sections with a "ZLIB" header.
    with_object("gcc", &["-g", "-gz=zlib-gnu"], BITFIELDS, plain);
    // zstd needs a toolchain that can write it: try objcopy.
    let Some((dir, object)) = compile("gcc", &["-c", "-g"], BITFIELDS, "t.o") else {
        return;
    };
    let zstd = dir.path().join("zstd.o");
    let status = Command::new("objcopy")
        .arg("--compress-debug-sections=zstd")
        .arg(&object)
        .arg(&zstd)
        .status();
    match status {
        Ok(status) if status.success() => with_models(&zstd, |models| plain(&models[0])),
        _ => eprintln!("SKIPPED: objcopy cannot write zstd debug sections"),
    }
}

#[test]
fn linked_executable_units() {
    let Some((_dir, exe)) = compile(
        "gcc",
        &["-g", "-O1"],
        &format!("{LAYOUTS}\nint main(void) {{ return 0; }}\n"),
        "t",
    ) else {
        return;
    };
    with_models(&exe, |models| {
        let ours = models
            .iter()
            .find(|m| m.name == Some("t.c"))
            .expect("our CU");
        assert_eq!(composite(ours, "outer").len(), 3);
        assert!(function(ours, "main").low_pc.is_some_and(|pc| pc != 0));
        assert!(models.iter().all(|m| m.die_count > 0));
    });
}

#[test]
fn symbols_of_an_object() {
    let source = "int gvar = 1; static int svar; int func(void) { return svar + gvar; }\n";
    let Some((_dir, object)) = compile("gcc", &["-c", "-g"], source, "t.o") else {
        return;
    };
    let file = ElfFile::open(&object).expect("open");
    let symbols = file.symbols().expect("symbols");
    let func = symbols
        .functions
        .iter()
        .find(|f| f.name == "func")
        .expect("func");
    assert!(func.global);
    assert_eq!(
        symbols.sections.get(".text").map(|s| s.index),
        Some(func.section_index)
    );
    let gvar = symbols
        .data
        .iter()
        .find(|d| d.name == "gvar")
        .expect("gvar");
    assert!(gvar.global && gvar.size == 4);
    assert_eq!(
        symbols.sections.get(".data").map(|s| s.index),
        Some(gvar.section_index)
    );
    let svar = symbols
        .data
        .iter()
        .find(|d| d.name == "svar")
        .expect("svar");
    assert!(!svar.global);
    assert!(symbols.percpu.is_none());
}

#[test]
fn bad_inputs_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = dir.path().join("not-elf.txt");
    std::fs::write(&text, b"hello, I am not an ELF file at all").expect("write");
    let err = ElfFile::open(&text).expect_err("not an ELF");
    assert_eq!(err.kind(), &ErrorKind::NotElf);
    assert!(err.to_string().contains("not-elf.txt"), "{err}");

    let missing = ElfFile::open(dir.path().join("missing.o")).expect_err("missing file");
    assert!(matches!(missing.kind(), ErrorKind::Io(_)));

    let Some((_dir, plain)) = compile(
        "gcc",
        &["-c", "-g0"],
        "int f(void) { return 1; }\n",
        "nodebug.o",
    ) else {
        return;
    };
    let file = ElfFile::open(&plain).expect("a valid ELF");
    let err = file.dwarf().expect_err("no DWARF");
    assert_eq!(err.kind(), &ErrorKind::NoDwarf);
    assert!(err.to_string().contains("nodebug.o"), "{err}");
}

/// Section header fields of `.debug_info` in an ELF64 little-endian file:
/// (offset of its sh_size field, sh_offset, sh_size).
fn debug_info_header(bytes: &[u8]) -> (usize, usize, usize) {
    use object::{Object, ObjectSection};
    let file = object::File::parse(bytes).expect("parse");
    let section = file.section_by_name(".debug_info").expect(".debug_info");
    let index = section.index().0;
    let (offset, size) = section.file_range().expect("file range");
    let u64_at =
        |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes")) as usize;
    let shoff = u64_at(0x28);
    let shentsize = u16::from_le_bytes([bytes[0x3a], bytes[0x3b]]) as usize;
    (
        shoff + index * shentsize + 0x20,
        offset as usize,
        size as usize,
    )
}

#[test]
fn truncated_debug_info_is_an_error_not_a_panic() {
    let Some((_dir, object)) = compile("gcc", &["-c", "-g", "-gdwarf-5"], LAYOUTS, "t.o") else {
        return;
    };
    let bytes = std::fs::read(&object).expect("read");
    let (size_field, offset, size) = debug_info_header(&bytes);

    // 1. The section claims fewer bytes than its unit's header says.
    let mut short = bytes.clone();
    short[size_field..size_field + 8].copy_from_slice(&((size / 2) as u64).to_le_bytes());
    let outcome = ElfFile::from_bytes("short.o", short).and_then(|file| {
        let dwarf = file.dwarf()?;
        let arena = bumpalo::Bump::new();
        for unit in dwarf.units() {
            dwarf::walk::walk_unit(&dwarf, unit, &arena)?;
        }
        Ok(())
    });
    let err = outcome.expect_err("truncated .debug_info must fail");
    assert!(err.to_string().starts_with("short.o"), "{err}");

    // 2. The DIEs are garbage (an abbreviation code that does not exist).
    let mut garbage = bytes.clone();
    for byte in &mut garbage[offset + 12..offset + size] {
        *byte = 0x7f;
    }
    let file = ElfFile::from_bytes("garbage.o", garbage).expect("headers are intact");
    let dwarf = file.dwarf().expect("unit headers are intact");
    let arena = bumpalo::Bump::new();
    let err = dwarf::walk::walk_unit(&dwarf, &dwarf.units()[0], &arena).expect_err("garbage DIEs");
    assert_eq!(err.section(), Some(".debug_info"));
    assert!(err.to_string().contains("garbage.o"), "{err}");

    // 3. The file ends in the middle of .debug_info.
    let cut = bytes[..offset + size / 2].to_vec();
    let outcome = ElfFile::from_bytes("cut.o", cut).and_then(|file| file.dwarf().map(|_| ()));
    let err = outcome.expect_err("cut file");
    assert!(err.to_string().starts_with("cut.o"), "{err}");
}

#[test]
fn cross_unit_references_need_walking_units_together() {
    // gcc's LTO output refers across units with DW_FORM_ref_addr.
    let Some((dir, _)) = compile("gcc", &["-c"], "int unused;\n", "unused.o") else {
        return;
    };
    let a = dir.path().join("a.c");
    let b = dir.path().join("b.c");
    std::fs::write(&a, "struct s { int a; long b; };\nint f(struct s *p);\nint main(void) { struct s x = {1, 2}; return f(&x); }\n")
        .expect("write a.c");
    std::fs::write(&b, "struct s { int a; long b; };\n__attribute__((noinline)) int f(struct s *p) { return p->a + (int)p->b; }\n")
        .expect("write b.c");
    let exe = dir.path().join("lto");
    let status = Command::new("gcc")
        .args(["-g", "-O2", "-flto"])
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&exe)
        .status();
    if !status.is_ok_and(|status| status.success()) {
        eprintln!("SKIPPED: gcc -flto failed");
        return;
    }
    let file = ElfFile::open(&exe).expect("open");
    let dwarf = file.dwarf().expect("dwarf");
    let arena = bumpalo::Bump::new();
    let errors: Vec<_> = dwarf
        .units()
        .iter()
        .filter_map(|unit| dwarf::walk::walk_unit(&dwarf, unit, &arena).err())
        .collect();
    assert!(!errors.is_empty(), "LTO DWARF uses DW_FORM_ref_addr");
    for err in errors {
        assert!(
            matches!(err.kind(), ErrorKind::CrossUnitReference(_)),
            "{err}"
        );
        assert!(err.to_string().contains("another unit"), "{err}");
    }
    assert!(dwarf.has_cross_unit_references().expect("abbreviations"));
    // Walked together, the units resolve each other's DIEs.
    let model = dwarf::walk::walk_units(&dwarf, dwarf.units(), &arena).expect("walk_units");
    let f = model
        .functions
        .iter()
        .find(|f| f.name == "f" && f.low_pc.is_some())
        .expect("out-of-line f");
    assert_eq!(f.params.len(), 1);
    assert_eq!(f.params[0].name, Some("p"));
    let Node::Pointer { target, .. } = *type_node(&model, f.params[0].ty) else {
        panic!("p is a pointer")
    };
    let Node::Composite {
        name: Some("s"),
        members,
        ..
    } = *type_node(&model, target)
    else {
        panic!("p points to struct s")
    };
    let members: Vec<_> = members.iter().map(|m| (m.name, m.bit_offset)).collect();
    assert_eq!(members, [(Some("a"), 0), (Some("b"), 64)]);
}

#[test]
fn clang_dwarf5_indexed_forms() {
    // clang's DWARF 5 names strings by DW_FORM_strx, addresses by
    // DW_FORM_addrx and location lists by DW_FORM_loclistx, all through
    // relocated .debug_str_offsets/.debug_addr in a .o.
    with_object("clang", &["-g", "-gdwarf-5", "-O2"], FUNCTIONS, |model| {
        let add2 = function(model, "add2");
        assert_eq!(add2.params[0].name, Some("a"));
        assert_eq!(add2.params[0].location, ParamLocation::Register(5));
        assert_eq!(add2.params[1].location, ParamLocation::Register(4));
        assert!(add2.low_pc.is_some());
        let vf = function(model, "vf");
        assert!(vf.varargs && vf.external);
        let calls = model
            .variables
            .iter()
            .find(|v| v.name == "calls")
            .expect("static local");
        assert!(calls.in_function && calls.address.is_some());
        let keep = model
            .variables
            .iter()
            .find(|v| v.name == "keep_helper")
            .expect("keep_helper");
        assert!(keep.external && keep.address.is_some());
    });
}

/// File range of a section, by name.
fn section_range(bytes: &[u8], name: &str) -> Option<(usize, usize)> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(bytes).ok()?;
    let (offset, size) = file.section_by_name(name)?.file_range()?;
    Some((offset as usize, size as usize))
}

#[test]
fn corrupted_debug_sections_never_panic() {
    let source = format!("{LAYOUTS}{FUNCTIONS}{ENUMS}{BITFIELDS}");
    for flags in [&["-c", "-g", "-O2"][..], &["-c", "-g", "-gdwarf-4"][..]] {
        let Some((_dir, object)) = compile("gcc", flags, &source, "t.o") else {
            return;
        };
        let bytes = std::fs::read(&object).expect("read");
        let ranges: Vec<_> = [
            ".debug_info",
            ".debug_abbrev",
            ".debug_loclists",
            ".debug_loc",
            ".rela.debug_info",
            ".debug_rnglists",
            ".symtab",
        ]
        .iter()
        .filter_map(|name| section_range(&bytes, name))
        .filter(|(_, size)| *size > 0)
        .collect();
        // A fixed-seed LCG: reproducible, and no dependency for it.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize
        };
        let (mut failed, mut survived) = (0, 0);
        for _ in 0..300 {
            let mut mutated = bytes.clone();
            let (offset, size) = ranges[next() % ranges.len()];
            for _ in 0..1 + next() % 4 {
                let at = offset + next() % size;
                mutated[at] = next() as u8;
            }
            let outcome = ElfFile::from_bytes("fuzz.o", mutated).and_then(|file| {
                let dwarf = file.dwarf()?;
                let arena = bumpalo::Bump::new();
                for unit in dwarf.units() {
                    dwarf::walk::walk_unit(&dwarf, unit, &arena)?;
                }
                Ok(())
            });
            match outcome {
                Ok(()) => survived += 1,
                Err(err) => {
                    assert!(err.to_string().starts_with("fuzz.o"), "{err}");
                    failed += 1;
                }
            }
        }
        eprintln!("{flags:?}: {failed} mutations rejected, {survived} read");
    }
}

#[test]
fn other_machines_classes_and_byte_orders() {
    // Relocatable objects for other ABIs exercise 32-bit ELF, big-endian
    // data, REL (implicit addend) and RISC-V ADD/SUB relocations. The
    // layout below holds for every one of them: 4-byte int, 2-byte short,
    // pointers aligned to at most 8, and bitfields numbered from the
    // first-declared end in BTF terms; `name` starts at the byte after
    // the 7 bits of `d`.
    let source = "struct t { unsigned int a:3; unsigned int b:5; int c; unsigned short d:7; \
                  char name[5]; struct t *next; } tv;\n\
                  enum e { EA = -2, EB = 7 } ev;\n\
                  int tfunc(struct t *p, int x) { return p->c + x; }\n";
    let layout = [
        ("a", 0, 3),
        ("b", 3, 5),
        ("c", 32, 0),
        ("d", 64, 7),
        ("name", 72, 0),
        ("next", 128, 0),
    ];
    for (target, is_64, big_endian) in [
        ("i386-linux-gnu", false, false),
        ("arm-linux-gnueabihf", false, false),
        ("aarch64-linux-gnu", true, false),
        ("powerpc-linux-gnu", false, true),
        ("powerpc64-linux-gnu", true, true),
        ("s390x-linux-gnu", true, true),
        ("mips-linux-gnu", false, true),
        ("riscv64-linux-gnu", true, false),
    ] {
        for version in ["-gdwarf-4", "-gdwarf-5"] {
            let flags = [
                &format!("--target={target}")[..],
                "-c",
                "-g",
                version,
                "-O1",
            ];
            let Some((_dir, object)) = compile("clang", &flags, source, "t.o") else {
                continue;
            };
            let file = ElfFile::open(&object).expect("open");
            assert_eq!(
                (file.is_64(), file.is_big_endian()),
                (is_64, big_endian),
                "{target}"
            );
            assert_eq!(file.kind(), dwarf::ElfKind::Relocatable);
            assert!(!file
                .dwarf()
                .expect("dwarf")
                .has_cross_unit_references()
                .expect("abbrevs"));
            with_models(&object, |models| {
                let model = &models[0];
                assert_eq!(model.name, Some("t.c"), "{target} {version}");
                let got: Vec<_> = composite(model, "t")
                    .iter()
                    .map(|m| (m.name.unwrap_or("?"), m.bit_offset, m.bitfield_size))
                    .collect();
                assert_eq!(got, layout, "{target} {version}");
                let (_, values) = enumerators(model, "e");
                let values: Vec<_> = values
                    .iter()
                    .map(|e| (e.name, e.value as i64, e.negative))
                    .collect();
                assert_eq!(
                    values,
                    [("EA", -2, true), ("EB", 7, false)],
                    "{target} {version}"
                );
                let f = function(model, "tfunc");
                let names: Vec<_> = f.params.iter().map(|p| p.name).collect();
                assert_eq!(names, [Some("p"), Some("x")], "{target} {version}");
                assert!(f.external && f.low_pc.is_some(), "{target} {version}");
                for name in ["tv", "ev"] {
                    let var = model.variables.iter().find(|v| v.name == name).expect(name);
                    assert!(var.address.is_some(), "{target} {version} {name}");
                }
            });
        }
    }
}

#[test]
fn types_declared_inside_function_bodies() {
    let source = r#"
int local_types(int n) {
    struct local_pair { int first, second; } pair = { n, n + 1 };
    if (n > 3) {
        typedef struct { long deep; } deep_t;
        deep_t d = { n };
        return (int)d.deep + pair.second;
    }
    return pair.first;
}
"#;
    for (compiler, flags) in [
        ("gcc", &["-g", "-O0"][..]),
        ("gcc", &["-g", "-O2"][..]),
        ("clang", &["-g"][..]),
    ] {
        with_object(compiler, flags, source, |model| {
            let pair = composite(model, "local_pair");
            let got: Vec<_> = pair.iter().map(|m| (m.name, m.bit_offset)).collect();
            assert_eq!(
                got,
                [(Some("first"), 0), (Some("second"), 32)],
                "{compiler} {flags:?}"
            );
            let deep = model.nodes.iter().find_map(|node| match node {
                Node::Typedef {
                    name: "deep_t",
                    target,
                    ..
                } => Some(*target),
                _ => None,
            });
            let deep = deep.unwrap_or_else(|| panic!("{compiler} {flags:?}: no deep_t"));
            let Node::Composite { members, .. } = *type_node(model, deep) else {
                panic!("deep_t")
            };
            assert_eq!(members[0].name, Some("deep"));
        });
    }
}

#[test]
fn type_units_are_refused_clearly() {
    let source = "struct tu { int a; long b; };\nstruct tu tu_var;\n";
    for version in ["-gdwarf-4", "-gdwarf-5"] {
        let flags = ["-c", "-g", version, "-fdebug-types-section"];
        let Some((_dir, object)) = compile("gcc", &flags, source, "t.o") else {
            continue;
        };
        let outcome = ElfFile::open(&object).and_then(|file| {
            let dwarf = file.dwarf()?;
            let arena = bumpalo::Bump::new();
            for unit in dwarf.units() {
                dwarf::walk::walk_unit(&dwarf, unit, &arena)?;
            }
            Ok(())
        });
        let err = outcome.expect_err("type units are not supported");
        assert!(
            matches!(err.kind(), ErrorKind::UnsupportedDwarf(_)),
            "{version}: {err}"
        );
    }
}

/// A member's name that points past `.debug_str` is an error naming that
/// member's DIE.
#[test]
fn a_member_name_past_debug_str_is_an_error_naming_its_die() {
    let source = "struct holder { int zz_first_member_name; int zz_second_member_name; } h;\n\
                  int main(void) { return h.zz_first_member_name; }\n";
    let Some((_dir, exe)) = compile("gcc", &["-g", "-gdwarf-5"], source, "t") else {
        return;
    };
    let bytes = std::fs::read(&exe).expect("read");
    let (str_offset, str_size) = section_range(&bytes, ".debug_str").expect(".debug_str");
    let (info_offset, info_size) = section_range(&bytes, ".debug_info").expect(".debug_info");
    let name = b"zz_second_member_name\0";
    let strp = bytes[str_offset..str_offset + str_size]
        .windows(name.len())
        .position(|w| w == name)
        .expect("gcc keeps a long member name in .debug_str") as u32;

    // The member's DIE, read by gimli from the intact file.
    let file = object::File::parse(&*bytes).expect("parse");
    let dwarf = gimli::Dwarf::load(|id| -> Result<_, gimli::Error> {
        use object::{Object, ObjectSection};
        let data = file
            .section_by_name(id.name())
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(gimli::EndianSlice::new(data, gimli::LittleEndian))
    })
    .expect("gimli");
    let mut member_die = None;
    let mut units = dwarf.units();
    while let Some(header) = units.next().expect("unit header") {
        let unit = dwarf.unit(header).expect("unit");
        let mut entries = unit.entries();
        while let Some(entry) = entries.next_dfs().expect("entry") {
            let named = entry.attr_value(gimli::DW_AT_name);
            if entry.tag() == gimli::DW_TAG_member
                && named
                    == Some(gimli::AttributeValue::DebugStrRef(gimli::DebugStrOffset(
                        strp as usize,
                    )))
            {
                let offset = entry.offset().to_debug_info_offset(&unit.header);
                member_die = offset.map(|o| o.0);
            }
        }
    }
    let member_die = member_die.expect("the member's DIE names it by DW_FORM_strp");

    // Its DW_FORM_strp value (4 bytes in 32-bit DWARF) is the only place
    // .debug_info holds those 4 bytes: make it point past the section.
    let info = &bytes[info_offset..info_offset + info_size];
    let hits: Vec<usize> = info
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == strp.to_le_bytes())
        .map(|(at, _)| at)
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "the name's offset appears once in .debug_info"
    );
    let mut mutated = bytes.clone();
    let at = info_offset + hits[0];
    mutated[at..at + 4].copy_from_slice(&(str_size as u32 + 16).to_le_bytes());

    let file = ElfFile::from_bytes("names.o", mutated).expect("headers are intact");
    let dwarf = file.dwarf().expect("unit headers are intact");
    let arena = bumpalo::Bump::new();
    let err = dwarf
        .units()
        .iter()
        .find_map(|unit| dwarf::walk::walk_unit(&dwarf, unit, &arena).err())
        .expect("a name past .debug_str is an error");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("names.o: .debug_info at {member_die:#x}")),
        "{message}"
    );
}
