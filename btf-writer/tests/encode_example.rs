//! The library's `examples/encode.rs` gives the same bytes as the `btfenc`
//! binary: the pipeline the binary runs is the one the library exposes.
//!
//! Needs the binary: `$BTFENC_BIN` (set by `make test`), else
//! `target/debug/btfenc` of this workspace.

use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(dead_code)]
#[path = "../examples/encode.rs"]
mod example;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn btfenc() -> PathBuf {
    let path = std::env::var_os("BTFENC_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/debug/btfenc"));
    assert!(
        path.is_file(),
        "{} not found: build it (`cargo build -p btfenc`) or set BTFENC_BIN",
        path.display()
    );
    path
}

/// `btfenc -J --btf_features=FEATURES [--btf_base BASE]` on `input`.
fn binary_output(input: &Path, features: &str, base: Option<&Path>, dir: &Path) -> Vec<u8> {
    let out = dir.join(format!(
        "{}.btf",
        input.file_name().and_then(|n| n.to_str()).unwrap_or("out")
    ));
    let mut command = Command::new(btfenc());
    command.arg("-J").arg(format!("--btf_features={features}"));
    if let Some(base) = base {
        command.arg("--btf_base").arg(base);
    }
    let status = command
        .arg(format!("--btf_encode_detached={}", out.display()))
        .arg(input)
        .status()
        .expect("run btfenc");
    assert!(status.success(), "btfenc failed on {}", input.display());
    std::fs::read(&out).expect("read btfenc's output")
}

#[test]
fn example_equals_the_binary() {
    let dir = std::env::temp_dir().join(format!("btfenc-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let fixtures = workspace().join("fixtures/obj");
    let kernel_features = "encode_force,var,float,enum64,decl_tag,type_tag,\
                           optimized_func,consistent_func,decl_tag_kfuncs";
    for (fixture, features) in [
        ("multi-cu/clang.o", "default"),
        ("multi-cu/gcc-dwarf5.o", kernel_features),
        ("gcc-dwarf4/kinds.o", "float"),
        ("compressed/zstd-kinds.o", "default,global_var"),
    ] {
        let input = fixtures.join(fixture);
        let library = example::encode_file(&input, features, None).expect("library encode");
        let binary = binary_output(&input, features, None, &dir);
        assert_eq!(library, binary, "{fixture} ({features})");
    }
    // Split: one object on another object's BTF, as a module on vmlinux.
    let base = dir.join("base.btf");
    let base_bytes = binary_output(
        &fixtures.join("gcc-dwarf5/kinds.o"),
        kernel_features,
        None,
        &dir,
    );
    std::fs::write(&base, base_bytes).expect("write base");
    let input = fixtures.join("gcc-dwarf5/structs.o");
    let library =
        example::encode_file(&input, kernel_features, Some(&base)).expect("library split");
    let binary = binary_output(&input, kernel_features, Some(&base), &dir);
    assert_eq!(library, binary, "split");
    let _ = std::fs::remove_dir_all(&dir);
}
