//! End to end, through the public API: C source → compiler → our walk, lowering, assembly and dedup,
//! compared with what pahole 1.24 (`/usr/bin/pahole`, the reference nobody
//! here wrote) encodes from the same object. The comparison is the team's
//! semantic, id-order-independent diff.
//!
//! Tests skip (with a note on stderr) when the compiler or pahole is
//! missing, so that the unit suite still runs anywhere.

use std::path::{Path, PathBuf};
use std::process::Command;

use bumpalo::Bump;
use dwarf::{ElfFile, ElfKind};

use btf::diff::{diff_with_examples, DiffReport};
use btf::encode::{assemble, SplitBase};
use btf::lower::*;

/// A scratch directory under the system temp dir, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("btfenc-lower-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tool_exists(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Compiles `source` with `compiler -g -O2 -c` into `dir`; `None` when the
/// compiler is missing.
fn compile(dir: &Path, compiler: &str, name: &str, source: &str) -> Option<PathBuf> {
    if !tool_exists(compiler) {
        eprintln!("skipping: {compiler} not installed");
        return None;
    }
    let c = dir.join(format!("{name}.c"));
    let o = dir.join(format!("{name}.o"));
    std::fs::write(&c, source).expect("write C source");
    let status = Command::new(compiler)
        .args(["-g", "-O2", "-c"])
        .arg(&c)
        .arg("-o")
        .arg(&o)
        .status()
        .expect("run compiler");
    assert!(status.success(), "{compiler} failed on {name}.c");
    Some(o)
}

/// pahole's BTF for `object` (raw bytes), or `None` when pahole is missing.
fn pahole_btf(dir: &Path, object: &Path, args: &[&str]) -> Option<Vec<u8>> {
    if !tool_exists("pahole") {
        eprintln!("skipping: pahole not installed");
        return None;
    }
    let out = dir.join("pahole.btf");
    let status = Command::new("pahole")
        .arg("-J")
        .args(args)
        .arg("--btf_encode_detached")
        .arg(&out)
        .arg(object)
        .status()
        .expect("run pahole");
    assert!(status.success(), "pahole failed on {}", object.display());
    Some(std::fs::read(&out).expect("read pahole output"))
}

/// Our pipeline on `object` with `features`, deduplicated, diffed against
/// `reference` (raw BTF).
fn encode_and_diff(object: &Path, features: Features, reference: &[u8]) -> DiffReport {
    let elf = ElfFile::open(object).expect("open object");
    let dwarf = elf.dwarf().expect("DWARF sections");
    let symbols = elf.symbols().expect("symbols");
    let mut ctx = Context::new(features, &symbols);
    ctx.relocatable = elf.kind() == ElfKind::Relocatable;
    ctx.pointer_size = if elf.is_64() { 8 } else { 4 };
    ctx.register_params = register_params_for_machine(elf.machine());
    let mut lowered = Vec::new();
    for header in dwarf.units() {
        let arena = Bump::new();
        let cu = dwarf::walk::walk_unit(&dwarf, header, &arena).expect("walk unit");
        lowered.push(lower_cu(&cu, &ctx).expect("lower unit"));
    }
    let btf = assemble(lowered, &ctx, None).expect("assemble");
    let deduped = btf::dedup::dedup(&btf, None).expect("dedup");
    let theirs = btf::read::parse(reference, None).expect("parse pahole BTF");
    diff_with_examples(&deduped.btf, None, &theirs.btf, None, 20)
}

/// Compiles, encodes both ways and asserts no difference.
fn assert_same_as_pahole(
    compiler: &str,
    name: &str,
    source: &str,
    pahole_args: &[&str],
    features: Features,
) {
    let scratch = Scratch::new(name);
    let Some(object) = compile(&scratch.0, compiler, name, source) else {
        return;
    };
    let Some(reference) = pahole_btf(&scratch.0, &object, pahole_args) else {
        return;
    };
    let report = encode_and_diff(&object, features, &reference);
    assert!(
        report.is_empty(),
        "{name} ({compiler}, pahole {pahole_args:?}) differs (a = ours, b = pahole):\n{report}"
    );
}

/// Every kind gcc produces from C, without floats.
const ALL_KINDS_C: &str = r#"
#include <stdbool.h>
struct bits { unsigned a:3; int b:5; char c; long long d:40; };
union u { int i; float f; };
struct fwd;
enum fwd_e;
struct holder { struct fwd *p; enum fwd_e *e; int arr[3][4]; char flex[]; };
enum e_neg { NA = -1, NB = 2 };
enum e_u { UA = 1, UB = 0xffffffffu };
enum e_64 { BIG = 0x100000000ULL };
enum s64 { SX = -1, SY = 0x100000000LL };
typedef unsigned long ulong_t;
typedef int (*fn_t)(int, ...);
struct s2 { const volatile int * restrict q; bool b; signed char sc; unsigned char uc; char ch;
  float f; double d; long double ld; __int128 i128; unsigned __int128 u128; };
struct anon { union { int x; long y; }; struct { char z; }; };
static int sfunc(int a, char *b) { return a + *b; }
int gfunc(struct bits *b, union u *u, struct holder *h, enum e_neg n, enum e_u eu, enum e_64 e6,
          enum s64 s6, ulong_t x, fn_t f, struct s2 *s, struct anon *an) { return sfunc(1, (char *)b) + n; }
int vfunc(int a, ...) { return a; }
int gvar = 3;
static int svar;
int *use(void) { return &svar; }
int pc_a __attribute__((section(".data..percpu"))) = 1;
char pc_pad[64] __attribute__((section(".data..percpu")));
static long pc_static __attribute__((section(".data..percpu")));
long *pc_use(void) { static int pc_local __attribute__((section(".data..percpu"))) = 2; return &pc_static + pc_local; }
"#;

#[test]
fn gcc_all_kinds_match_pahole_1_24() {
    assert_same_as_pahole("gcc", "all_kinds", ALL_KINDS_C, &[], Features::default());
}

#[test]
fn gcc_all_kinds_with_floats_and_without_enum64_match_pahole_1_24() {
    let floats = Features::legacy(LegacyFlags {
        btf_gen_floats: true,
        ..LegacyFlags::default()
    });
    assert_same_as_pahole("gcc", "floats", ALL_KINDS_C, &["--btf_gen_floats"], floats);
    let no64 = Features::legacy(LegacyFlags {
        skip_encoding_btf_enum64: true,
        ..LegacyFlags::default()
    });
    assert_same_as_pahole(
        "gcc",
        "no_enum64",
        ALL_KINDS_C,
        &["--skip_encoding_btf_enum64"],
        no64,
    );
    let no_vars = Features::legacy(LegacyFlags {
        skip_encoding_btf_vars: true,
        ..LegacyFlags::default()
    });
    assert_same_as_pahole(
        "gcc",
        "no_vars",
        ALL_KINDS_C,
        &["--skip_encoding_btf_vars"],
        no_vars,
    );
}

/// clang's `btf_type_tag`/`btf_decl_tag` annotations.
const TAGS_C: &str = r#"
#define __tag1 __attribute__((btf_type_tag("tag1")))
#define __tag2 __attribute__((btf_type_tag("tag2")))
#define __dt(x) __attribute__((btf_decl_tag(x)))
struct st { int __tag1 __tag2 *p; int m __dt("mtag"); } __dt("stag");
typedef int myint __dt("tdtag");
int __dt("ftag") tf(struct st *s __dt("ptag"), myint x) { return *s->p + x; }
int gv __dt("vtag") __attribute__((section(".data..percpu"))) = 1;
static int sv __attribute__((section(".data..percpu")));
int *use(void) { return &sv; }
"#;

#[test]
fn clang_tags_match_pahole_1_24() {
    assert_same_as_pahole("clang", "tags", TAGS_C, &[], Features::default());
    let no_tags = Features::legacy(LegacyFlags {
        skip_encoding_btf_decl_tag: true,
        skip_encoding_btf_type_tag: true,
        ..LegacyFlags::default()
    });
    assert_same_as_pahole(
        "clang",
        "no_tags",
        TAGS_C,
        &[
            "--skip_encoding_btf_decl_tag",
            "--skip_encoding_btf_type_tag",
        ],
        no_tags,
    );
}

/// Optimization clones and split-off pieces: pahole 1.24 matches exact
/// symbol names only.
const CLONES_C: &str = r#"
struct big { int a[32]; };
static __attribute__((noinline)) int isra_fn(struct big *b, int unused) { return b->a[3] * 7; }
static __attribute__((noinline)) int cp_fn(int x, int k) { return x * k + (x >> k); }
extern void abort(void);
__attribute__((noinline)) int coldy(int x) { if (__builtin_expect(x == 42, 0)) { abort(); } return x + 1; }
int caller(struct big *b, int y) { return isra_fn(b, 0) + cp_fn(y, 3) + cp_fn(y + 1, 3) + coldy(y); }
int protoless();
int protoless(a) int a; { return a; }
"#;

#[test]
fn gcc_clones_match_pahole_1_24() {
    assert_same_as_pahole("gcc", "clones", CLONES_C, &[], Features::default());
}

/// Any object given in `BTFENC_E2E_OBJECT` (e.g. a kernel module), against
/// `pahole -J` 1.24 with no other flags. Run by hand:
/// `BTFENC_E2E_OBJECT=path cargo test -p btf-writer --lib e2e_object -- --ignored`.
#[test]
#[ignore = "needs BTFENC_E2E_OBJECT"]
fn e2e_object_matches_pahole_1_24() {
    let Some(object) = std::env::var_os("BTFENC_E2E_OBJECT") else {
        return;
    };
    let object = PathBuf::from(object);
    let scratch = Scratch::new("object");
    let Some(reference) = pahole_btf(&scratch.0, &object, &[]) else {
        return;
    };
    let report = encode_and_diff(&object, Features::default(), &reference);
    assert!(
        report.is_empty(),
        "{} differs (a = ours, b = pahole):\n{report}",
        object.display()
    );
}

/// gcc writes small non-negative enumerators of a signed enum as
/// `DW_FORM_data1`/`data2`; pahole reads fixed-size forms unsigned, so 225
/// stays 225 (netfilter's `NF_IP_PRI_SELINUX_LAST` is such a value).
const SIGNED_ENUM_C: &str = r#"
enum prio { P_FIRST = -2147483647 - 1, P_SMALL = -31, P_MID = 225, P_WIDE = 40000, P_LAST = 2147483647 };
int prio_of(enum prio p) { return p; }
"#;

#[test]
fn gcc_signed_enum_fixed_forms_match_pahole_1_24() {
    assert_same_as_pahole(
        "gcc",
        "signed_enum",
        SIGNED_ENUM_C,
        &[],
        Features::default(),
    );
}

/// A whole vmlinux against a pahole reference BTF (e.g. the pahole 1.31
/// one in ../shared/reference), with the features in
/// `BTFENC_E2E_FEATURES` (a `--btf_features` list; legacy 1.24 rules when
/// unset). Heavy: run by hand in release mode with `BTFENC_E2E_VMLINUX`
/// and `BTFENC_E2E_REFERENCE` set. Prints the difference report.
#[test]
#[ignore = "needs BTFENC_E2E_VMLINUX and BTFENC_E2E_REFERENCE"]
fn e2e_vmlinux_against_reference() {
    use rayon::prelude::*;
    let (Some(vmlinux), Some(reference)) = (
        std::env::var_os("BTFENC_E2E_VMLINUX"),
        std::env::var_os("BTFENC_E2E_REFERENCE"),
    ) else {
        return;
    };
    // "legacy-floats" stands for pahole 1.24's `-J --btf_gen_floats`.
    let features = match std::env::var("BTFENC_E2E_FEATURES").as_deref() {
        Ok("legacy-floats") => Features::legacy(LegacyFlags {
            btf_gen_floats: true,
            ..LegacyFlags::default()
        }),
        Ok(list) => Features::parse(list, true).expect("feature list"),
        Err(_) => Features::default(),
    };
    let started = std::time::Instant::now();
    let elf = ElfFile::open(&vmlinux).expect("open vmlinux");
    let dwarf = elf.dwarf().expect("DWARF sections");
    let symbols = elf.symbols().expect("symbols");
    let mut ctx = Context::new(features, &symbols);
    ctx.relocatable = elf.kind() == ElfKind::Relocatable;
    ctx.register_params = register_params_for_machine(elf.machine());
    ctx.lang_exclude = Context::parse_languages("rust").expect("rust");
    let lowered: Vec<LoweredCu<'_>> = dwarf
        .units()
        .par_iter()
        .map(|header| {
            let arena = Bump::new();
            let cu = dwarf::walk::walk_unit(&dwarf, header, &arena).expect("walk unit");
            lower_cu(&cu, &ctx).expect("lower unit")
        })
        .collect();
    let lowered_at = started.elapsed();
    let btf = assemble(lowered, &ctx, None).expect("assemble");
    let pre_dedup = btf.count();
    let deduped = btf::dedup::dedup(&btf, None).expect("dedup");
    let done = started.elapsed();
    let reference = std::fs::read(reference).expect("read reference");
    let theirs = btf::read::parse(&reference, None).expect("parse reference");
    let report = diff_with_examples(&deduped.btf, None, &theirs.btf, None, 100000);
    eprintln!(
        "lowered in {lowered_at:?}, deduped in {done:?}: {pre_dedup} types before dedup, {} after; reference {}",
        deduped.btf.count(),
        theirs.btf.count()
    );
    eprintln!("{report}");
}

/// Prints what the walker reports for the functions named in
/// `BTFENC_DEBUG_FUNCS` (comma list) in `BTFENC_E2E_VMLINUX`: a debugging
/// aid for selection rules, run by hand.
#[test]
#[ignore = "debugging aid"]
fn debug_function_facts() {
    let (Some(vmlinux), Ok(names)) = (
        std::env::var_os("BTFENC_E2E_VMLINUX"),
        std::env::var("BTFENC_DEBUG_FUNCS"),
    ) else {
        return;
    };
    let names: Vec<&str> = names.split(',').collect();
    let elf = ElfFile::open(&vmlinux).expect("open");
    let dwarf = elf.dwarf().expect("dwarf");
    for header in dwarf.units() {
        let arena = Bump::new();
        let cu = dwarf::walk::walk_unit(&dwarf, header, &arena).expect("walk");
        for function in cu.functions.iter().filter(|f| names.contains(&f.name)) {
            eprintln!(
                "{} cu={:?} decl={} inline={} ext={} low_pc={:x?} nocall={} varargs={} ret_void={} params={:?}",
                function.name,
                cu.name,
                function.declaration,
                function.inline,
                function.external,
                function.low_pc,
                function.nocall,
                function.varargs,
                function.ret == dwarf::model::TypeRef::Void,
                function
                    .params
                    .iter()
                    .map(|p| (p.name, p.location))
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// A kernel module as split BTF on `BTFENC_E2E_BASE` (raw vmlinux BTF),
/// against a reference split (`BTFENC_E2E_REFERENCE`, e.g. pahole 1.31's
/// `modules/NAME.btf`), with the features in `BTFENC_E2E_FEATURES`. Run by
/// hand with `BTFENC_E2E_MODULE` set; prints the difference report.
#[test]
#[ignore = "needs BTFENC_E2E_MODULE, BTFENC_E2E_BASE and BTFENC_E2E_REFERENCE"]
fn e2e_module_split_against_reference() {
    let (Some(module), Some(base), Some(reference)) = (
        std::env::var_os("BTFENC_E2E_MODULE"),
        std::env::var_os("BTFENC_E2E_BASE"),
        std::env::var_os("BTFENC_E2E_REFERENCE"),
    ) else {
        return;
    };
    let features = match std::env::var("BTFENC_E2E_FEATURES") {
        Ok(list) => Features::parse(&list, true).expect("feature list"),
        Err(_) => Features::default(),
    };
    let base_bytes = std::fs::read(base).expect("read base");
    let base = btf::read::parse(&base_bytes, None).expect("parse base");
    let elf = ElfFile::open(&module).expect("open module");
    let dwarf = elf.dwarf().expect("DWARF sections");
    let symbols = elf.symbols().expect("symbols");
    let mut ctx = Context::new(features, &symbols);
    ctx.relocatable = elf.kind() == ElfKind::Relocatable;
    ctx.register_params = register_params_for_machine(elf.machine());
    let mut lowered = Vec::new();
    for header in dwarf.units() {
        let arena = Bump::new();
        let cu = dwarf::walk::walk_unit(&dwarf, header, &arena).expect("walk unit");
        lowered.push(lower_cu(&cu, &ctx).expect("lower unit"));
    }
    let split_base = SplitBase {
        type_count: base.total_type_count(),
        str_len: base.str_end(),
    };
    let btf = assemble(lowered, &ctx, Some(split_base)).expect("assemble");
    let deduped = btf::dedup::dedup(&btf, Some(&base.btf)).expect("dedup");
    let reference = std::fs::read(reference).expect("read reference");
    let theirs = btf::read::parse(&reference, Some(&base)).expect("parse reference");
    let report = diff_with_examples(
        &deduped.btf,
        Some(&base.btf),
        &theirs.btf,
        Some(&base.btf),
        100,
    );
    eprintln!(
        "ours {} types, reference {}",
        deduped.btf.count(),
        theirs.btf.count()
    );
    eprintln!("{report}");
}
