//! `--btf_features=...,true_signature` against pahole 1.31 (dwarves
//! 1436daf) on the `fixtures/obj/truesig/` objects.
//!
//! The expected BTF in `fixtures/expected/truesig/` was written by pahole
//! 1.31 at 1436daf itself (see fixtures/README.md for the command), not by
//! btfenc: each object must encode to the same types, compared by meaning
//! with `btfenc diff` (0 differences in every kind).
//!
//! Besides, a few signatures were checked by hand against the
//! disassembly (`objdump -d`) of the fixtures:
//! - `tc_dead` (clang 19, `DW_CC_nocall`; source `(int a, int b, int c)`,
//!   `b` unused): the code reads `a` from edi and `c` from esi, and the
//!   FUNC is `tc_dead(a, c)`.
//! - `tc_pieces` (clang 19; source `(struct tc_pair a, struct tc_pair b,
//!   int i)`, only `a.f1` used): the caller loads `tc_p1.f1` into rdi,
//!   `tc_p2` into rsi:rdx and `i` into ecx, and the FUNC is
//!   `tc_pieces(long a__f1, struct tc_pair b, int i)`.
//! - `ts_both.constprop.0` (gcc 12; source `(struct ts_obj *obj, int k,
//!   int dead)`, `k` always 1): the clone reads only rdi (`obj`), and the
//!   FUNC is `ts_both.constprop.0(obj)`.
//! - `ts_byval.isra.0` (gcc 12; source `(struct ts_pair p, long x)`): the
//!   clone gets `p.hi` in rdi and `x` in rsi, but gcc's DWARF gives the
//!   clone's `p` no location, so pahole drops it and the FUNC is
//!   `ts_byval.isra.0(x)`: pahole's (and btfenc's) "true" signature is
//!   not the code's here. btfenc reproduces pahole.

use std::ffi::OsStr;
use std::path::Path;

use btfenc_tests::raw_dump::Dump;
use btfenc_tests::{btfenc, fixture};

use crate::fixtures::scratch;

const FEATURES: &str = concat!("--btf_features=", kernel_features!(), ",true_signature");

/// Encodes `object` with true_signature; the BTF file.
fn encode(object: &str, out: &Path) {
    let input = fixture(&format!("obj/truesig/{object}"));
    btfenc(&[
        OsStr::new("-J"),
        OsStr::new(FEATURES),
        OsStr::new("--btf_encode_detached"),
        out.as_os_str(),
        input.as_os_str(),
    ])
    .assert_success();
}

/// FUNC name -> its parameters' names, in order.
fn signatures(file: &Path) -> Vec<(String, Vec<String>)> {
    let dump = Dump::of_file(file, None);
    let mut found: Vec<(String, Vec<String>)> = dump
        .types
        .iter()
        .filter(|ty| ty.kind == "FUNC")
        .map(|func| {
            let proto = dump
                .target(func)
                .unwrap_or_else(|| panic!("FUNC {} has no FUNC_PROTO", func.name));
            let params = proto
                .members
                .iter()
                .map(|line| line.split('\'').nth(1).unwrap_or("").to_string())
                .collect();
            (func.name.clone(), params)
        })
        .collect();
    found.sort();
    found
}

/// Every object equals pahole 1.31's BTF of it, by meaning.
#[test]
fn equals_pahole_131() {
    let dir = scratch();
    for object in ["gcc-prog", "gcc.o", "clang19-prog", "clang19.o"] {
        let out = dir.path().join(format!("{object}.btf"));
        encode(object, &out);
        let expected = fixture(&format!("expected/truesig/{object}.btf"));
        let diff = btfenc(&[OsStr::new("diff"), out.as_os_str(), expected.as_os_str()]);
        assert!(
            diff.success() && diff.stdout.is_empty(),
            "{object}: btfenc's BTF differs from pahole 1.31's\n{}",
            String::from_utf8_lossy(&diff.stdout)
        );
    }
}

/// The hand-checked signatures (see the module comment), and the names:
/// gcc's clones under their suffixed symbols in the executable, under the
/// plain name or not at all in the relocatable object.
#[test]
fn hand_checked_signatures() {
    let dir = scratch();
    let sig = |name: &str, params: &[&str]| {
        (
            name.to_string(),
            params.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
        )
    };

    let clang = dir.path().join("clang19-prog.btf");
    encode("clang19-prog", &clang);
    let found = signatures(&clang);
    for expected in [
        sig("tc_dead", &["a", "c"]),
        sig("tc_pieces", &["a__f1", "b", "i"]),
        // Every argument used, or global: the source's signature.
        sig("tc_live", &["a", "b"]),
        sig("tc_global", &["a", "unused"]),
    ] {
        assert!(found.contains(&expected), "{expected:?} not in {found:?}");
    }

    let gcc = dir.path().join("gcc-prog.btf");
    encode("gcc-prog", &gcc);
    let found = signatures(&gcc);
    for expected in [
        sig("ts_both.constprop.0", &["obj"]),
        sig("ts_byval.isra.0", &["x"]),
        sig("ts_plain", &["a", "b"]),
    ] {
        assert!(found.contains(&expected), "{expected:?} not in {found:?}");
    }
    // ts_isra's clone has `scale` in rdx where rdi is expected: no FUNC
    // under either name.
    assert!(
        !found.iter().any(|(name, _)| name.starts_with("ts_isra")),
        "{found:?}"
    );

    // In a relocatable object pahole matches no suffixed symbol.
    let object = dir.path().join("gcc.o.btf");
    encode("gcc.o", &object);
    let found = signatures(&object);
    assert!(
        !found.iter().any(|(name, _)| name.contains('.')),
        "{found:?}"
    );
}
