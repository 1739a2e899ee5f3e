//! dwz-compressed DWARF (fixtures/obj/dwz, see fixtures/README.md): a file
//! that `dwz` rewrote must encode to the same types as the file before,
//! whether dwz moved the shared DIEs into partial units of the same file
//! (single-file mode) or into a common file (`dwz -m`, named by
//! `.gnu_debugaltlink`, or by `.debug_sup` with `-5`). The file before dwz
//! is the judge: pahole 1.24 reads it (not the dwz'd ones), and btfenc's
//! encoding of it is compared with pahole's too.

use std::path::{Path, PathBuf};
use std::process::Command;

use btfenc_tests::{assert_clean_failure, btfenc_bin, fixture, run_with_env, RunOutput};

use crate::fixtures::{encode_into, scratch};
use btfenc_tests::Encoder;

/// Runs btfenc with `args`, its debug directory set to `debug_dir` (so
/// that no test depends on, or looks into, the machine's /usr/lib/debug).
fn btfenc_in(debug_dir: &Path, args: &[&std::ffi::OsStr]) -> RunOutput {
    run_with_env(
        &btfenc_bin(),
        args,
        &[("BTFENC_DEBUG_DIR", debug_dir.as_os_str())],
    )
}

/// `btfenc -J FLAGS [--dwarf-alt ALT] --btf_encode_detached=OUT INPUT`.
fn encode(
    debug_dir: &Path,
    input: &Path,
    alt: Option<&Path>,
    flags: &[&str],
    out: &Path,
) -> RunOutput {
    let detached = format!("--btf_encode_detached={}", out.display());
    let mut args: Vec<&std::ffi::OsStr> = vec!["-J".as_ref()];
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    if let Some(alt) = alt {
        args.push("--dwarf-alt".as_ref());
        args.push(alt.as_os_str());
    }
    args.push(detached.as_ref());
    args.push(input.as_os_str());
    btfenc_in(debug_dir, &args)
}

/// Asserts that `btfenc diff A B` finds the same types.
fn assert_same_types(a: &Path, b: &Path, what: &str) {
    let run = btfenc_bin();
    let output = Command::new(&run)
        .arg("diff")
        .arg(a)
        .arg(b)
        .output()
        .unwrap_or_else(|err| panic!("cannot run btfenc diff: {err}"));
    assert!(
        output.status.success() && output.stdout.is_empty(),
        "{what}: btfenc diff {} {} says they differ (status {:?}):\n{}{}",
        a.display(),
        b.display(),
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The dwz'd fixtures, with the program each was made from.
const DWZ_FILES: [(&str, &str); 5] = [
    ("obj/dwz/single/prog-one", "obj/dwz/prog-one"),
    ("obj/dwz/gnu/prog-one", "obj/dwz/prog-one"),
    ("obj/dwz/gnu/prog-two", "obj/dwz/prog-two"),
    ("obj/dwz/sup/prog-one", "obj/dwz/prog-one"),
    ("obj/dwz/sup/prog-two", "obj/dwz/prog-two"),
];

/// The flag sets each dwz'd file is encoded with: the default, pahole
/// 1.24's rules, and the kernel's feature list.
const FLAG_SETS: [&[&str]; 3] = [
    &[],
    &["--compat=1.24"],
    &[concat!("--btf_features=", kernel_features!())],
];

fn read_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// The fixtures are what they claim: dwz linked the -m ones to their
/// common file (the section names are in `.shstrtab`), and left the
/// single-file one without a link.
#[test]
fn fixtures_carry_their_links() {
    for (dwz, _) in DWZ_FILES {
        let bytes = read_bytes(&fixture(dwz));
        let gnu = contains(&bytes, b".gnu_debugaltlink\0");
        let sup = contains(&bytes, b".debug_sup\0");
        match dwz.split('/').nth(2) {
            Some("single") => assert!(!gnu && !sup, "{dwz}"),
            Some("gnu") => assert!(gnu && !sup, "{dwz}: no .gnu_debugaltlink"),
            Some("sup") => assert!(sup && !gnu, "{dwz}: no .debug_sup"),
            other => panic!("{dwz}: unexpected directory {other:?}"),
        }
    }
}

/// Each dwz'd file encodes to the types its program had before dwz, with
/// every flag set; and the encoding before dwz has pahole 1.24's types.
#[test]
fn dwz_output_encodes_as_before() {
    let dir = scratch();
    let empty = scratch();
    for (index, (dwz, plain)) in DWZ_FILES.iter().enumerate() {
        for (set, flags) in FLAG_SETS.iter().enumerate() {
            let before = dir.path().join(format!("before-{index}-{set}.btf"));
            let after = dir.path().join(format!("after-{index}-{set}.btf"));
            encode(empty.path(), &fixture(plain), None, flags, &before).assert_success();
            encode(empty.path(), &fixture(dwz), None, flags, &after).assert_success();
            assert_same_types(&before, &after, &format!("{dwz} {flags:?}"));
        }
    }
    for plain in ["obj/dwz/prog-one", "obj/dwz/prog-two"] {
        let ours = encode_into(
            Encoder::Btfenc,
            plain,
            &["--compat=1.24"],
            dir.path(),
            "ours.btf",
        );
        let pahole = encode_into(Encoder::Pahole, plain, &[], dir.path(), "pahole.btf");
        assert_same_types(&pahole, &ours, &format!("{plain}: pahole 1.24"));
    }
}

/// The types dwz moved are really there: `struct dz_task` (in the common
/// file of both -m variants) with its ten members, and each program's own
/// struct, named by hand from fixtures/src/dwz*.c.
#[test]
fn moved_types_are_encoded() {
    let dir = scratch();
    let empty = scratch();
    for (index, (dwz, plain)) in DWZ_FILES.iter().enumerate() {
        let out = dir.path().join(format!("{index}.btf"));
        encode(empty.path(), &fixture(dwz), None, &[], &out).assert_success();
        let dump = btfenc_tests::bpftool_btf_dump(&out, None);
        dump.assert_success();
        let text = dump.stdout_text();
        assert!(
            text.contains("STRUCT 'dz_task' size=80 vlen=10"),
            "{dwz}: no struct dz_task of 80 bytes and 10 members"
        );
        for name in [
            "TYPEDEF 'dz_task_t'",
            "TYPEDEF 'dz_visit_t'",
            "ENUM 'dz_state'",
            "ENUM 'dz_level'",
            "ENUM64 'dz_big'",
            "STRUCT 'dz_ops' size=32 vlen=4",
            "FWD 'dz_hidden' fwd_kind=struct",
            "FUNC 'dz_walk'",
            "FUNC 'dz_pid'",
        ] {
            assert!(text.contains(name), "{dwz}: no {name}");
        }
        let own = if plain.ends_with("one") {
            "STRUCT 'dz_only_one' size=16 vlen=3"
        } else {
            "STRUCT 'dz_only_two' size=40 vlen=3"
        };
        assert!(text.contains(own), "{dwz}: no {own}");
    }
}

/// A program whose common file is nowhere: one line naming the file, the
/// section's path and every place looked at; not gimli's "invalid
/// attribute form for string".
#[test]
fn missing_common_file_is_one_clear_line() {
    for (dwz, name) in [
        ("obj/dwz/gnu/prog-one", "common.alt"),
        ("obj/dwz/sup/prog-two", "common.sup"),
    ] {
        let dir = scratch();
        let empty = scratch();
        let input = dir.path().join("prog");
        std::fs::copy(fixture(dwz), &input).expect("copy the program alone");
        let run = encode(empty.path(), &input, None, &[], &dir.path().join("out.btf"));
        assert_clean_failure(&run, &input.display().to_string());
        let beside = dir.path().join(name);
        let by_id = empty.path().join(".build-id");
        let line = run.stderr.trim_end();
        for expected in [
            "supplementary DWARF file not found",
            name,
            &beside.display().to_string(),
            &by_id.display().to_string(),
            &empty.path().join(".dwz").display().to_string(),
            "--dwarf-alt",
        ] {
            assert!(
                line.contains(expected),
                "{dwz}: no {expected:?} in {line:?}"
            );
        }
        assert!(!line.contains("invalid attribute form"), "{line}");
        assert!(
            !dir.path().join("out.btf").exists(),
            "{dwz}: output written"
        );
    }
}

/// `--dwarf-alt` gives the common file wherever it is, under any name; a
/// file that is not the one the link names (another build-id) is refused.
#[test]
fn dwarf_alt_option() {
    for (dwz, plain, common) in [
        (
            "obj/dwz/gnu/prog-one",
            "obj/dwz/prog-one",
            "obj/dwz/gnu/common.alt",
        ),
        (
            "obj/dwz/sup/prog-two",
            "obj/dwz/prog-two",
            "obj/dwz/sup/common.sup",
        ),
    ] {
        let dir = scratch();
        let empty = scratch();
        let input = dir.path().join("prog");
        std::fs::copy(fixture(dwz), &input).expect("copy the program alone");
        std::fs::create_dir(dir.path().join("elsewhere")).expect("mkdir");
        let alt = dir.path().join("elsewhere/renamed");
        std::fs::copy(fixture(common), &alt).expect("copy the common file");
        let out = dir.path().join("out.btf");
        encode(empty.path(), &input, Some(&alt), &[], &out).assert_success();
        let before = dir.path().join("before.btf");
        encode(empty.path(), &fixture(plain), None, &[], &before).assert_success();
        assert_same_types(&before, &out, &format!("{dwz} --dwarf-alt"));

        // The other variant's common file is no match.
        let wrong = if common.ends_with(".alt") {
            "obj/dwz/sup/common.sup"
        } else {
            "obj/dwz/gnu/common.alt"
        };
        let run = encode(empty.path(), &input, Some(&fixture(wrong)), &[], &out);
        assert_clean_failure(&run, &input.display().to_string());
        assert!(
            run.stderr.contains(&fixture(wrong).display().to_string()),
            "{}",
            run.describe()
        );
    }
}

/// Hex of the build-id in `.gnu_debugaltlink` / `.debug_sup` of `path`,
/// read here from the section bytes (the last 20 of either section in
/// these fixtures: a SHA-1 build-id).
fn link_build_id(path: &Path) -> String {
    let output = Command::new("readelf")
        .arg("--wide")
        .arg("-x")
        .arg(if path.to_string_lossy().contains("/sup/") {
            ".debug_sup"
        } else {
            ".gnu_debugaltlink"
        })
        .arg(path)
        .output()
        .expect("readelf runs");
    let text = String::from_utf8_lossy(&output.stdout);
    // `  0xADDRESS` then four columns of 8 hex digits (blank when the
    // section ends), then the bytes as text.
    let hex: String = text
        .lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("0x")?;
            let columns = rest.get(9..44.min(rest.len()))?;
            Some(
                columns
                    .chars()
                    .filter(char::is_ascii_hexdigit)
                    .collect::<String>(),
            )
        })
        .collect();
    assert!(
        hex.len() >= 40,
        "{}: no section dump\n{text}",
        path.display()
    );
    hex[hex.len() - 40..].to_string()
}

/// The common file found by build-id in the debug directory: as
/// `.build-id/NN/REST.debug`, and anywhere below `.dwz/`.
#[test]
fn common_file_by_build_id() {
    for (dwz, plain, common) in [
        (
            "obj/dwz/gnu/prog-one",
            "obj/dwz/prog-one",
            "obj/dwz/gnu/common.alt",
        ),
        (
            "obj/dwz/sup/prog-one",
            "obj/dwz/prog-one",
            "obj/dwz/sup/common.sup",
        ),
    ] {
        let id = link_build_id(&fixture(dwz));
        let dir = scratch();
        let input = dir.path().join("prog");
        std::fs::copy(fixture(dwz), &input).expect("copy the program alone");
        let before = dir.path().join("before.btf");
        let empty = scratch();
        encode(empty.path(), &fixture(plain), None, &[], &before).assert_success();

        let placements: [PathBuf; 2] = [
            PathBuf::from(format!(".build-id/{}/{}.debug", &id[..2], &id[2..])),
            PathBuf::from(".dwz/x86_64-linux-gnu/some-package.debug"),
        ];
        for placement in placements {
            let debug_dir = scratch();
            let target = debug_dir.path().join(&placement);
            std::fs::create_dir_all(target.parent().expect("has a parent")).expect("mkdir");
            std::fs::copy(fixture(common), &target).expect("copy the common file");
            let out = dir.path().join("out.btf");
            let run = encode(debug_dir.path(), &input, None, &[], &out);
            assert!(
                run.success(),
                "{dwz} with {}:\n{}",
                placement.display(),
                run.describe()
            );
            assert_same_types(&before, &out, &format!("{dwz} by build-id"));
        }
    }
}
