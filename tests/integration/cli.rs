//! Command-line behaviour that pahole users rely on, beyond encoding.

use btfenc_tests::{assert_clean_failure, encode_detached, fixture, Encoder};

use crate::fixtures::{encode_into, read, scratch};

const SAMPLE: &str = "obj/multi-cu/clang.o";

/// `-V` only adds statistics on stderr; the BTF is the same.
#[test]
fn verbose_prints_stats_and_changes_nothing() {
    let dir = scratch();
    let quiet = encode_into(Encoder::Btfenc, SAMPLE, &[], dir.path(), "quiet.btf");
    let verbose_out = dir.path().join("verbose.btf");
    let verbose = encode_detached(Encoder::Btfenc, &fixture(SAMPLE), &verbose_out, &["-V"]);
    verbose.assert_success();
    assert!(
        !verbose.stderr.trim().is_empty(),
        "-V printed no statistics\n{}",
        verbose.describe()
    );
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
