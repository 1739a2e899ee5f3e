//! Which functions get a FUNC by their parameters' locations: pahole
//! 1436daf's (v1.31 + 38 commits) rules in dwarf_loader.c
//! (`parameter__decode_location`, `function__match_clang_parameter_locations`
//! for clang units, `function__analyze_parameter_locations` for gcc's,
//! `param__is_struct` in `cu__resolve_func_ret_types_optimized`). The expected sets below were
//! derived by hand from `llvm-dwarfdump` of the fixture and from pahole's
//! source, not from btfenc's output; with the clang reference present,
//! the whole clang14 tinyconfig kernel must also equal pahole's own BTF.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use btfenc_tests::raw_dump::Dump;
use btfenc_tests::{btfenc, fixture, reference_root, report_skip};

use crate::fixtures::scratch;

const FEATURES: &str = concat!("--btf_features=", kernel_features!());

/// FUNC names of the BTF in `file` (split on `base` when given).
fn func_names(file: &Path, base: Option<&Path>) -> Vec<String> {
    let dump = Dump::of_file(file, base);
    let mut names: Vec<String> = (1..)
        .map_while(|id| dump.get(id))
        .filter(|ty| ty.kind == "FUNC")
        .map(|ty| ty.name.clone())
        .collect();
    names.sort();
    names
}

/// `fixtures/src/clangparams.c`, clang 14 -O2. Dead-argument elimination
/// removed each `dead` parameter from the real calling convention (its
/// DIE has no DW_AT_location) and the next parameter arrives one register
/// early. No DW_CC_nocall anywhere, so pahole matches each parameter's
/// first register against the argument registers it should occupy
/// (rdi=5, rsi=4, rdx=1, rcx=2 in DWARF numbering):
///
/// - cp_big_union(union cp_big u /*64 B*/, int dead, int x): u is passed
///   in memory and takes no register; dead has no register (slot 0
///   consumed); x is `DW_OP_reg5` where slot 1 (rsi) is expected:
///   unexpected register, and a union is no struct: skipped.
/// - cp_small_union(union cp_small u /*8 B*/, dead, x): u in rdi (slot
///   0), dead slot 1, x in rsi where slot 2 (rdx) is expected: skipped.
/// - cp_small_struct(struct cp_small_s s /*8 B*/, dead, x): the same
///   mismatch, but a struct parameter excuses it: kept.
/// - cp_wide_scalar(__int128 v, dead, x): v takes two slots (its first
///   location is `reg5 piece 8 reg4 piece 8`, first register rdi, in the
///   window rdi/rsi); dead slot 2; x in rdx where slot 3 (rcx) is
///   expected; __int128 is no struct: skipped.
/// - cp_plain(long a, long b, int x), cp_entry(long n): every parameter in
///   its own register: kept.
/// - cp_bool_late(void *dev, _Bool flag): flag's first location is
///   `DW_OP_breg4 RSI+0, ..., DW_OP_stack_value`, which pahole reads as
///   rsi, the expected register: kept.
#[test]
fn clang_parameter_rules_pick_paholes_funcs() {
    let dir = scratch();
    let out = dir.path().join("clangparams.btf");
    let input = fixture("obj/clang-params/clangparams.o");
    btfenc(&[
        OsStr::new("-J"),
        OsStr::new(FEATURES),
        OsStr::new("--btf_encode_detached"),
        out.as_os_str(),
        input.as_os_str(),
    ])
    .assert_success();
    assert_eq!(
        func_names(&out, None),
        ["cp_bool_late", "cp_entry", "cp_plain", "cp_small_struct"],
        "FUNCs of {}",
        input.display()
    );
}

/// `fixtures/src/gccparams.c`, gcc 12 -O2, global functions (no clones).
/// gcc's rules (`function__analyze_parameter_locations`): each parameter
/// takes the next argument register, one for a parameter passed in memory;
/// a located parameter without a register is optimized (which alone does
/// not skip a function that is not an .isra/.constprop clone); a first
/// register other than the expected one is unexpected:
///
/// - gp_union_then_reg(union gp_big u /*64 B*/, long x): u is
///   `DW_OP_fbreg +0` (optimized, takes slot 0); x is `DW_OP_reg5` (rdi)
///   where slot 1 (rsi) is expected; a union excuses nothing: skipped.
/// - gp_struct_then_reg(struct gp_big_s s, long x): the same, but the
///   struct excuses it: kept.
/// - gp_wide_then_reg(__int128 v, long x): v is `DW_OP_reg4 RSI,
///   DW_OP_piece 8, DW_OP_reg5 RDI, DW_OP_piece 8`; read as a two-register
///   aggregate its first register is rsi where slot 0 (rdi) is expected:
///   skipped.
/// - gp_plain(long a, long b): rdi, rsi: kept.
#[test]
fn gcc_parameter_rules_pick_paholes_funcs() {
    let dir = scratch();
    let out = dir.path().join("gccparams.btf");
    let input = fixture("obj/gcc-params/gccparams.o");
    btfenc(&[
        OsStr::new("-J"),
        OsStr::new(FEATURES),
        OsStr::new("--btf_encode_detached"),
        out.as_os_str(),
        input.as_os_str(),
    ])
    .assert_success();
    assert_eq!(
        func_names(&out, None),
        ["gp_plain", "gp_struct_then_reg"],
        "FUNCs of {}",
        input.display()
    );
}

/// `xz -dc SOURCE > TARGET`; `Err` says why it could not run.
fn unxz(source: &Path, target: &Path) -> Result<(), String> {
    let output = Command::new("xz")
        .arg("-dc")
        .arg(source)
        .output()
        .map_err(|err| format!("cannot run xz: {err}"))?;
    if !output.status.success() {
        return Err(format!(
            "xz -dc {} failed: {}",
            source.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    std::fs::write(target, output.stdout)
        .map_err(|err| format!("cannot write {}: {err}", target.display()))
}

/// The clang 14 / lld tinyconfig kernel of the reference (Linux 6.1):
/// vmlinux and configfs.ko (split on pahole's vmlinux BTF), with the
/// kernel's flags, hold exactly pahole 1.31's types, FUNCs included.
#[test]
fn clang14_tinyconfig_equals_pahole() {
    const TEST: &str = "param_locations::clang14_tinyconfig_equals_pahole";
    let reference = reference_root().join("clang14-tinyconfig-6.1");
    let wanted = [
        "tmp_vmlinux.btf.xz",
        "configfs.ko.xz",
        "vmlinux.btf",
        "configfs.btf",
    ];
    if let Some(missing) = wanted.iter().find(|name| !reference.join(name).is_file()) {
        report_skip(
            TEST,
            &format!(
                "no {} (set BTFENC_REFERENCE to the pahole 1.31 reference directory)",
                reference.join(missing).display()
            ),
        );
        return;
    }
    let dir = scratch();
    let vmlinux = dir.path().join("tmp_vmlinux.btf");
    let module = dir.path().join("configfs.ko");
    for (source, target) in [
        ("tmp_vmlinux.btf.xz", &vmlinux),
        ("configfs.ko.xz", &module),
    ] {
        if let Err(reason) = unxz(&reference.join(source), target) {
            report_skip(TEST, &reason);
            return;
        }
    }
    let pahole_vmlinux = reference.join("vmlinux.btf");
    let ours_vmlinux = dir.path().join("vmlinux.btf");
    let ours_module = dir.path().join("configfs.btf");
    btfenc(&[
        OsStr::new("-J"),
        OsStr::new("-j"),
        OsStr::new(FEATURES),
        OsStr::new("--lang_exclude=rust"),
        OsStr::new("--btf_encode_detached"),
        ours_vmlinux.as_os_str(),
        vmlinux.as_os_str(),
    ])
    .assert_success();
    btfenc(&[
        OsStr::new("-J"),
        OsStr::new("-j"),
        OsStr::new(FEATURES),
        OsStr::new("--lang_exclude=rust"),
        OsStr::new("--btf_base"),
        pahole_vmlinux.as_os_str(),
        OsStr::new("--btf_encode_detached"),
        ours_module.as_os_str(),
        module.as_os_str(),
    ])
    .assert_success();
    let diff = btfenc(&[
        OsStr::new("diff"),
        ours_vmlinux.as_os_str(),
        pahole_vmlinux.as_os_str(),
    ]);
    assert!(
        diff.success(),
        "vmlinux differs from pahole 1.31's:\n{}",
        diff.describe()
    );
    let diff = btfenc(&[
        OsStr::new("diff"),
        ours_module.as_os_str(),
        reference.join("configfs.btf").as_os_str(),
        OsStr::new("--base-a"),
        pahole_vmlinux.as_os_str(),
        OsStr::new("--base-b"),
        pahole_vmlinux.as_os_str(),
    ]);
    assert!(
        diff.success(),
        "configfs.ko differs from pahole 1.31's:\n{}",
        diff.describe()
    );
}
