//! Command-line behaviour that pahole users rely on, beyond encoding.

use std::ffi::OsStr;

use btfenc_tests::{
    assert_clean_failure, btfenc_bin, encode_detached, fixture, run_with_env, Encoder,
};

use crate::fixtures::{encode_into, read, scratch};

const SAMPLE: &str = "obj/multi-cu/clang.o";

/// `--timings` only adds statistics on stderr; the BTF is the same.
#[test]
fn timings_print_stats_and_change_nothing() {
    let dir = scratch();
    let quiet = encode_into(Encoder::Btfenc, SAMPLE, &[], dir.path(), "quiet.btf");
    let timed_out = dir.path().join("timed.btf");
    let timed = encode_detached(
        Encoder::Btfenc,
        &fixture(SAMPLE),
        &timed_out,
        &["--timings"],
    );
    timed.assert_success();
    assert!(
        timed.stderr.contains(" ms"),
        "--timings printed no statistics\n{}",
        timed.describe()
    );
    assert!(
        read(&quiet) == read(&timed_out),
        "--timings changed the BTF"
    );
    // -V is pahole's verbose mode now: skip lines only, no timings.
    let verbose_out = dir.path().join("verbose.btf");
    let verbose = encode_detached(Encoder::Btfenc, &fixture(SAMPLE), &verbose_out, &["-V"]);
    verbose.assert_success();
    assert!(!verbose.stderr.contains(" ms"), "{}", verbose.describe());
    assert!(read(&quiet) == read(&verbose_out), "-V changed the BTF");
}

/// No CU of the C fixtures is Rust, so excluding Rust changes nothing.
#[test]
fn lang_exclude_rust_is_a_no_op_on_c() {
    let dir = scratch();
    let plain = encode_into(Encoder::Btfenc, SAMPLE, &[], dir.path(), "plain.btf");
    let excluded = encode_into(
        Encoder::Btfenc,
        SAMPLE,
        &["--lang_exclude=rust"],
        dir.path(),
        "excl.btf",
    );
    assert!(
        read(&plain) == read(&excluded),
        "--lang_exclude=rust changed C-only BTF"
    );
}

/// Two C dialects in one object (fixtures/Makefile: kinds.c as gcc's
/// default, DW_LANG_C11, and structs.c as gnu89, DW_LANG_C89), whose C89
/// unit has a bad abbreviation code in its first child DIE.
const CORRUPT_C89: &str = "bad/corrupt-c89-unit.o";

/// pahole 1.31 reads no further than the unit DIE of a unit its
/// `--lang_exclude` names (dwarf_loader.c: the early CU filter, "no need to
/// walk the rest of the CU info"). Excluding c89 therefore encodes the
/// file, as if its C89 unit were intact; pahole 1.31 (dwarves 1436daf) was
/// seen to write its 88 types here.
#[test]
fn an_excluded_unit_is_read_no_further_than_its_unit_die() {
    let dir = scratch();
    let corrupt = encode_into(
        Encoder::Btfenc,
        CORRUPT_C89,
        &["--lang_exclude=c89"],
        dir.path(),
        "corrupt.btf",
    );
    let intact = encode_into(
        Encoder::Btfenc,
        "obj/langs/gcc-dwarf5.o",
        &["--lang_exclude=c89"],
        dir.path(),
        "intact.btf",
    );
    assert!(
        read(&corrupt) == read(&intact),
        "excluding the corrupt C89 unit did not give the intact file's BTF"
    );
}

/// Without the exclusion the corrupt unit is walked and fails, naming the
/// DIE. So does `--lang_exclude=c`: pahole's `c` is DW_LANG_C alone,
/// which no unit here has.
#[test]
fn a_unit_not_excluded_is_read_whole() {
    let input = fixture(CORRUPT_C89);
    let dir = scratch();
    let out = dir.path().join("out.btf");
    for flags in [&[][..], &["--lang_exclude=c"], &["--lang_exclude=c11,rust"]] {
        let run = encode_detached(Encoder::Btfenc, &input, &out, flags);
        assert_clean_failure(&run, &input.to_string_lossy());
        assert!(
            run.stderr.contains(".debug_info at 0x7f0")
                && run.stderr.contains("invalid abbreviation code"),
            "{flags:?}: {}",
            run.describe()
        );
    }
}

/// pahole 1.31 takes its exclusion list from `PAHOLE_LANG_EXCLUDE` when
/// no `--lang_exclude` is given (dwarves.c `languages__init`; seen: 88
/// types with `c89` there, as with the flag, 70 with `--lang_exclude=c11`
/// beside it, and "unknown language" for an empty value). pahole 1.24 has
/// no such variable, so `--compat=1.24` ignores it.
#[test]
fn lang_exclude_comes_from_the_environment_without_the_flag() {
    let input = fixture("obj/langs/gcc-dwarf5.o");
    let dir = scratch();
    let encode = |name: &str, flags: &[&str], env: Option<&str>| {
        let out = dir.path().join(name);
        let detached = format!("--btf_encode_detached={}", out.display());
        let args: Vec<&OsStr> = std::iter::once("-J")
            .chain(flags.iter().copied())
            .chain([detached.as_str()])
            .map(OsStr::new)
            .chain([input.as_os_str()])
            .collect();
        let env: Vec<(&str, &OsStr)> = env
            .map(|value| ("PAHOLE_LANG_EXCLUDE", OsStr::new(value)))
            .into_iter()
            .collect();
        (run_with_env(&btfenc_bin(), &args, &env), out)
    };
    let ok = |name: &str, flags: &[&str], env: Option<&str>| {
        let (run, out) = encode(name, flags, env);
        run.assert_success();
        read(&out)
    };
    let by_flag = ok("flag.btf", &["--lang_exclude=c89"], None);
    let whole = ok("whole.btf", &[], None);
    assert!(by_flag != whole, "excluding c89 changed nothing");
    assert!(ok("env.btf", &[], Some("c89")) == by_flag);
    assert!(
        ok("both.btf", &["--lang_exclude=c11"], Some("c89"))
            == ok("c11.btf", &["--lang_exclude=c11"], None)
    );
    assert!(
        ok("compat-env.btf", &["--compat=1.24"], Some("c89"))
            == ok("compat.btf", &["--compat=1.24"], None)
    );
    let (empty, _) = encode("empty.btf", &[], Some(""));
    assert!(
        !empty.success() && empty.stderr.contains("PAHOLE_LANG_EXCLUDE"),
        "{}",
        empty.describe()
    );
}

/// pahole ignores unknown names in --btf_features (so newer kernels'
/// Makefiles keep working with it) ...
#[test]
fn unknown_feature_is_ignored() {
    let dir = scratch();
    encode_into(
        Encoder::Btfenc,
        SAMPLE,
        &["--btf_features=var,no_such_feature"],
        dir.path(),
        "out.btf",
    );
}

/// ... and --btf_features_strict rejects them, naming the feature.
#[test]
fn unknown_feature_is_an_error_when_strict() {
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let run = encode_detached(
        Encoder::Btfenc,
        &fixture(SAMPLE),
        &out,
        &["--btf_features_strict=var,no_such_feature"],
    );
    assert_clean_failure(&run, "no_such_feature");
    assert!(
        !out.exists(),
        "a rejected command line still wrote {}",
        out.display()
    );
}

/// pahole treats `--btf_encode_detached` as implying `-J` (BTFHub's
/// scripts never pass `-J`): the same command line must work with btfenc,
/// and give the bytes it gives with `-J`.
#[test]
fn detached_implies_encode() {
    let dir = scratch();
    let with_j = encode_into(Encoder::Btfenc, SAMPLE, &[], dir.path(), "with-j.btf");
    let input = fixture(SAMPLE).display().to_string();
    let args = |out: &std::path::Path| {
        [
            format!("--btf_encode_detached={}", out.display()),
            input.clone(),
        ]
    };

    let by_pahole = dir.path().join("pahole-without-j.btf");
    btfenc_tests::pahole(&args(&by_pahole)).assert_success();
    assert!(
        by_pahole.is_file(),
        "the reference itself wrote nothing without -J"
    );

    let by_btfenc = dir.path().join("btfenc-without-j.btf");
    btfenc_tests::btfenc(&args(&by_btfenc)).assert_success();
    assert!(
        read(&with_j) == read(&by_btfenc),
        "btfenc without -J wrote other BTF than with -J"
    );
}

/// The kernel reads `$(PAHOLE) --version` through a pipe into
/// `sed -E 's/v([0-9]+)\.([0-9]+)/\1\2/'` (scripts/pahole-version.sh) and
/// compares the result as a number, dozens of times per build. btfenc's
/// stdout must have pahole's exact shape (one line, `vMAJOR.MINOR`) and
/// name the pahole it implements (1.31), and nothing may go to stderr,
/// which would land in every kernel build log.
#[test]
fn version_for_scripts_is_paholes_shape_and_quiet() {
    let reference = btfenc_tests::pahole(&["--version"]);
    reference.assert_success();
    let ours = btfenc_tests::btfenc(&["--version"]);
    ours.assert_success();
    let shape = |text: &str| -> Option<(u32, u32)> {
        let line = text.strip_suffix('\n')?;
        let (major, minor) = line.strip_prefix('v')?.split_once('.')?;
        Some((major.parse().ok()?, minor.parse().ok()?))
    };
    assert!(
        shape(&reference.stdout_text()).is_some(),
        "the reference pahole's --version is not vMAJOR.MINOR:\n{}",
        reference.describe()
    );
    assert_eq!(
        shape(&ours.stdout_text()),
        Some((1, 31)),
        "{}",
        ours.describe()
    );
    assert!(
        ours.stderr.is_empty(),
        "--version wrote to stderr through a pipe:\n{}",
        ours.describe()
    );
}

/// Encodes `path` with `flags` (one string, split at spaces) and returns
/// the BTF bytes.
fn encoded(path: &str, flags: &str, dir: &std::path::Path, name: &str) -> Vec<u8> {
    let flags: Vec<&str> = flags.split(' ').filter(|f| !f.is_empty()).collect();
    read(&encode_into(Encoder::Btfenc, path, &flags, dir, name))
}

/// Every spelling of the same request gives the same BTF, with pahole
/// 1.31's meaning of each (pahole.c at dwarves 1436daf: legacy flags set
/// one switch each from a zeroed start, `--btf_features` lists switch
/// everything off once and then on by name, `+X` is the defaults plus X,
/// `--btf_gen_all` runs the list "all", which names nothing).
#[test]
fn legacy_and_btf_features_spellings_agree() {
    let dir = scratch();
    let defaults = "encode_force,var,float,decl_tag,type_tag,enum64,optimized_func,consistent_func,decl_tag_kfuncs";
    // (fixture, whether it holds VARs or tags, so that switching every
    // feature off must change its BTF)
    for (path, has_features) in [
        ("obj/multi-cu/clang.o", true),
        ("obj/gcc-dwarf5/tags.o", true),
        ("obj/gcc-dwarf5/kinds.o", true),
        ("obj/kfuncs/gcc-dwarf5.o", false),
    ] {
        let same = |a: &str, b: &str| {
            let left = encoded(path, a, dir.path(), "a.btf");
            let right = encoded(path, b, dir.path(), "b.btf");
            assert!(left == right, "{path}: `{a}` and `{b}` gave different BTF");
            left
        };
        // Linux 6.1's flags for pahole >= 1.25 = the features they switch on.
        same(
            "--btf_gen_floats -j --lang_exclude=rust --skip_encoding_btf_inconsistent_proto --btf_gen_optimized",
            "-j --btf_features=var,decl_tag,type_tag,enum64,float,optimized_func,consistent_func --lang_exclude=rust",
        );
        // No flag at all: VAR, tags and ENUM64 on, floats off.
        let nothing = same("", "--btf_features=var,decl_tag,type_tag,enum64");
        same(
            "--btf_features=+type_tag",
            &format!("--btf_features={defaults}"),
        );
        same("--btf_features=default", "--btf_features=+");
        same(
            "--btf_features=var --btf_features=float,bogus",
            "--btf_features_strict=float,var",
        );
        // A list wipes the legacy flags before it, not after it.
        same("--btf_gen_floats --btf_features=var", "--btf_features=var");
        same(
            "--btf_features=var --btf_gen_floats",
            "--btf_features=var,float",
        );
        // --btf_gen_all: everything off, as an empty list.
        let none = same("--btf_gen_all", "--btf_features=");
        assert!(
            none != nothing || !has_features,
            "{path}: switching every feature off changed nothing; the fixture cannot tell the spellings apart"
        );
        // Repeated scalar options take the last value.
        same(
            "-j1 -j3 --lang_exclude=c --lang_exclude=rust",
            "--lang_exclude=rust",
        );
    }
}

/// `--btf_features_strict` fails on a name pahole does not have (pahole
/// exits), and 1.24 emulation refuses `--btf_features`, which pahole 1.24
/// did not know.
#[test]
fn strict_lists_and_compat_refusals() {
    let dir = scratch();
    let out = dir.path().join("x.btf");
    for flags in [
        &["--btf_features_strict=var,all"][..],
        &["--btf_features=var", "--btf_features_strict=bogus"][..],
        &["--compat=1.24", "--btf_features=default"][..],
        &["--compat=1.30"][..],
    ] {
        let run = encode_detached(Encoder::Btfenc, &fixture(SAMPLE), &out, flags);
        assert!(!run.success(), "{flags:?} succeeded\n{}", run.describe());
        assert!(!run.stderr.contains("panicked"), "{}", run.describe());
        assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.describe());
    }
}

/// The kernel's own command lines, as its scripts assemble them for a
/// pahole reporting v1.31 (Linux 6.1 scripts/pahole-flags.sh; 6.12
/// scripts/Makefile.btf with and without KBUILD_BUILD_TIMESTAMP, plus an
/// out-of-tree module's MODULE_PAHOLE_FLAGS; 7.3 scripts/Makefile.btf run
/// by scripts/gen-btf.sh with `-j$(JOBS)`), are accepted, and mean what
/// pahole 1.31 makes of them: the same BTF as the plain list they amount
/// to.
#[test]
fn kernel_command_lines_mean_what_pahole_makes_of_them() {
    let dir = scratch();
    let path = "obj/kfuncs/gcc-dwarf5.o";
    let kernel = "encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func";
    let cases = [
        (
            "6.1",
            "--btf_gen_floats -j --lang_exclude=rust --skip_encoding_btf_inconsistent_proto --btf_gen_optimized".to_owned(),
            "--btf_features=var,decl_tag,type_tag,enum64,float,optimized_func,consistent_func".to_owned(),
        ),
        (
            "6.12",
            format!("-j --btf_features={kernel},decl_tag_kfuncs -j --lang_exclude=rust"),
            format!("--btf_features={kernel},decl_tag_kfuncs"),
        ),
        (
            "6.12 reproducible, out-of-tree module flags",
            format!("-j --btf_features={kernel},decl_tag_kfuncs -j --btf_features=+reproducible_build --lang_exclude=rust --btf_features=distilled_base"),
            format!("--btf_features={kernel},decl_tag_kfuncs,reproducible_build,distilled_base"),
        ),
        (
            "7.3 (make -j2)",
            format!("-j2 --btf_features={kernel} --btf_features=layout -j2 --lang_exclude=rust"),
            format!("--btf_features={kernel},layout"),
        ),
        (
            // `+` brings back the defaults, decl_tag_kfuncs included.
            "7.3 reproducible (make -j)",
            format!("-j --btf_features={kernel} --btf_features=layout -j --btf_features=+reproducible_build --lang_exclude=rust"),
            format!("--btf_features={kernel},decl_tag_kfuncs,layout"),
        ),
    ];
    for (what, line, meaning) in &cases {
        let kernel_btf = encoded(path, line, dir.path(), "kernel.btf");
        let plain = encoded(path, meaning, dir.path(), "plain.btf");
        assert!(kernel_btf == plain, "{what}: `{line}` is not `{meaning}`");
    }
    // The fixture tells decl_tag_kfuncs apart, so the last case means
    // something.
    let without = encoded(
        path,
        &format!("--btf_features={kernel}"),
        dir.path(),
        "a.btf",
    );
    let with = encoded(
        path,
        &format!("--btf_features={kernel},decl_tag_kfuncs"),
        dir.path(),
        "b.btf",
    );
    assert!(without != with, "{path}: decl_tag_kfuncs changed nothing");
}

/// `--supported_btf_features` prints one comma-separated line, as pahole
/// does, naming at least the kernel's list, and every name it prints is
/// taken by `--btf_features_strict`.
#[test]
fn supported_btf_features_are_accepted_when_strict() {
    let run = btfenc_tests::btfenc(&["--supported_btf_features"]);
    run.assert_success();
    let text = run.stdout_text();
    let line = text.trim_end();
    assert_eq!(text.lines().count(), 1, "{}", run.describe());
    let names: Vec<&str> = line.split(',').collect();
    for wanted in kernel_features!().split(',') {
        assert!(names.contains(&wanted), "{wanted} missing from {line}");
    }
    let dir = scratch();
    let out = dir.path().join("x.btf");
    let strict = format!("--btf_features_strict={line}");
    encode_detached(Encoder::Btfenc, &fixture(SAMPLE), &out, &[&strict]).assert_success();
}

/// A stderr that cannot be written (a build log on a full disk; here
/// `/dev/full`) changes nothing but the lost lines: a run with warnings
/// still writes its BTF and exits 0, a failing one exits 2, and neither
/// panics (Rust's `eprintln!` would, exit status 101).
#[test]
fn unwritable_stderr_is_no_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        btfenc_tests::report_skip("cli::unwritable_stderr_is_no_panic", "no /dev/full");
        return;
    };
    let dir = scratch();
    let run = |input: &str, out: &std::path::Path, flags: &[&str]| {
        let mut command = std::process::Command::new(btfenc_tests::btfenc_bin());
        command
            .arg("-J")
            .args(flags)
            .arg(format!("--btf_encode_detached={}", out.display()))
            .arg(fixture(input))
            .stdout(std::process::Stdio::null())
            .stderr(full.try_clone().expect("cloning /dev/full"));
        command.status().expect("running btfenc")
    };
    // encode_force warnings (a variable left out), then the BTF.
    let warned = dir.path().join("warned.btf");
    let status = run(
        "bad/fuzz/overlapping-percpu-variables.o",
        &warned,
        &["--btf_features=encode_force,var"],
    );
    assert_eq!(status.code(), Some(0));
    assert!(!read(&warned).is_empty());
    // An error.
    let failed = dir.path().join("failed.btf");
    let status = run("bad/not-elf.bin", &failed, &[]);
    assert_eq!(status.code(), Some(2));
    assert!(!failed.exists());
}
