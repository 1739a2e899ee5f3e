//! Issue 15's causes, one regression test each, on the reproducers in
//! `fixtures/bad/causes/` (edited gcc assembly, see `make-causes.sh`):
//! btfenc fails with one line naming the file and the DIE or type, and
//! leaves nothing behind; where it writes BTF (the kernel's `encode_force`
//! leaving something out), the kernel loads it. Then a small deterministic
//! DWARF mutation campaign.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use btfenc_tests::{
    assert_clean_failure, btfenc_bin, encode_detached, fixture, kernel_load_btf, report_skip,
    Encoder, LoadResult,
};

use btfenc_tests::rng::Rng;

use crate::fixtures::{files_in, read, scratch};

/// btfenc on `bad/causes/NAME.o` (with `flags`) fails cleanly, leaves no
/// output, and its line holds every one of `expected`.
fn fails_naming(name: &str, flags: &[&str], expected: &[&str]) {
    let input = fixture(&format!("bad/causes/{name}.o"));
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &out, flags);
    assert_clean_failure(&run, &input.to_string_lossy());
    for text in expected {
        assert!(
            run.stderr.contains(text),
            "{name}: no {text:?} in the error\n{}",
            run.describe()
        );
    }
    assert_eq!(
        files_in(dir.path()),
        Vec::<String>::new(),
        "btfenc left files behind"
    );
}

/// btfenc on `bad/causes/NAME.o` with the kernel's features (so with
/// `encode_force`) succeeds, warns with `warning`, and the kernel loads
/// what it wrote.
fn forced_output_loads(name: &str, warning: &str) {
    let input = fixture(&format!("bad/causes/{name}.o"));
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let flags = concat!("--btf_features=", kernel_features!());
    let run = encode_detached(Encoder::Btfenc, &input, &out, &[flags]);
    assert!(run.success(), "{}", run.describe());
    assert!(
        run.stderr.contains(warning) && run.stderr.contains("left out (encode_force)"),
        "{name}: no warning naming {warning:?}\n{}",
        run.describe()
    );
    expect_kernel_loads(&format!("causes::{name}"), &read(&out));
}

fn expect_kernel_loads(test: &str, bytes: &[u8]) {
    match kernel_load_btf(bytes) {
        LoadResult::Loaded => {}
        LoadResult::Rejected { errno, log } => {
            panic!("{test}: the kernel rejects the BTF (errno {errno}):\n{log}")
        }
        LoadResult::Skipped(reason) => report_skip(test, &reason),
    }
}

const FLOATS: &str = "--btf_gen_floats";
const FORCE: &str = concat!("--btf_features=", kernel_features!());

#[test]
fn control_object_encodes_and_loads() {
    // The unedited source of every reproducer: so the failures below are
    // the edits' doing.
    let input = fixture("bad/causes/victim.o");
    let dir = scratch();
    let out = dir.path().join("out.btf");
    let run = encode_detached(Encoder::Btfenc, &input, &out, &[FLOATS]);
    assert!(run.success() && run.stderr.is_empty(), "{}", run.describe());
    expect_kernel_loads("causes::control", &read(&out));
}

// 1. A reference no type DIE answers (it became void).
#[test]
fn dangling_type_reference() {
    for name in ["dangling-type", "mid-die-type"] {
        for flags in [&[FLOATS][..], &[FORCE]] {
            fails_naming(
                name,
                flags,
                &["unit at 0x0", "DIE 0x47 refers to", "no type DIE"],
            );
        }
    }
}

// 2. DIEs after the unit DIE's children ended (they were dropped).
#[test]
fn dies_after_the_unit_end() {
    fails_naming(
        "die-after-unit-end",
        &[FLOATS],
        &[".debug_info at 0x55", "unit DIE (0xc)"],
    );
}

// 3. Names the kernel refuses.
#[test]
fn names_the_kernel_refuses() {
    fails_naming(
        "bad-member-name",
        &[FLOATS],
        &["DIE 0x2e", "struct \"victim\"", "\"sec-ond\""],
    );
    fails_naming(
        "empty-enumerator",
        &[FLOATS],
        &["DIE 0x62", "enum \"vcolor\"", "enumerator"],
    );
    fails_naming(
        "bad-typedef-name",
        &[FORCE],
        &["DIE 0x88", "typedef \"victim t\""],
    );
    // encode_force leaves the name or the enumerator out, and says so.
    forced_output_loads("bad-member-name", "\"sec-ond\"");
    forced_output_loads("empty-enumerator", "enumerator");
}

// 4. Layout and sizes.
#[test]
fn layout_and_sizes() {
    fails_naming(
        "member-past-end",
        &[FLOATS],
        &["DIE 0x2e", "\"second\"", "past the 16 bytes"],
    );
    fails_naming(
        "enum-size-3",
        &[FORCE],
        &["DIE 0x62", "\"vcolor\" of 3 bytes"],
    );
    fails_naming(
        "float-size-6",
        &[FORCE],
        &["DIE 0xe8", "'double' of 6 bytes"],
    );
    forced_output_loads("member-past-end", "\"second\"");
}

// 5. Loops and depth.
#[test]
fn loops_and_resolve_depth() {
    fails_naming("typedef-loop", &[FORCE], &["DIE 0x88", "Loop detected"]);
    fails_naming("struct-holds-itself", &[FORCE], &["Loop detected"]);
    // Legal C: pahole writes a 40-level chain the kernel refuses ("Exceeded
    // max resolving depth:32"); the 1,001-level one made btfenc's dedup
    // report a loop.
    for name in ["ptr40", "ptr1001"] {
        fails_naming(name, &[FORCE], &["MAX_RESOLVE_DEPTH"]);
    }
}

// 6. What BTF cannot count (it was truncated).
#[test]
fn offsets_and_counts_past_32_bits() {
    fails_naming(
        "legal-extremes",
        &[FLOATS],
        &["struct \"bigs\"", "\"after\"", "bit offset 4294967296"],
    );
    // encode_force leaves the member out, but an array cannot be: it is
    // still an error, naming it.
    fails_naming(
        "legal-extremes",
        &[FORCE],
        &["[65536, 65536, 16]", "2^32 - 1 elements"],
    );
}

/// The `(offset, size)` in the file of the ELF64 little-endian section
/// `name`, and the offset of its header.
fn section(bytes: &[u8], name: &str) -> Option<(usize, usize)> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
    let shoff = u64_at(0x28)? as usize;
    let (entsize, count, strndx) = (
        u16_at(0x3a)? as usize,
        u16_at(0x3c)? as usize,
        u16_at(0x3e)? as usize,
    );
    let header = |index: usize| shoff + index * entsize;
    let strtab = u64_at(header(strndx) + 0x18)? as usize;
    (0..count).find_map(|index| {
        let name_at = strtab + u32_at(header(index))? as usize;
        let end = name_at + bytes.get(name_at..)?.iter().position(|&b| b == 0)?;
        (bytes.get(name_at..end)? == name.as_bytes()).then_some(())?;
        Some((
            u64_at(header(index) + 0x18)? as usize,
            u64_at(header(index) + 0x20)? as usize,
        ))
    })
}

/// Runs btfenc with `args`, killed after `limit`: (exit status or None
/// for a hang, stderr, wall time).
fn run_with_timeout(args: &[&std::ffi::OsStr], limit: Duration) -> (Option<i32>, String, Duration) {
    let start = Instant::now();
    let mut child = Command::new(btfenc_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot run btfenc: {err}"));
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return (None, String::new(), start.elapsed());
            }
        }
    }
    let output = child
        .wait_with_output()
        .unwrap_or_else(|err| panic!("btfenc: {err}"));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (
        Some(output.status.code().unwrap_or(-1)),
        stderr,
        start.elapsed(),
    )
}

// 7. A compression header that claims 8 GiB.
#[test]
fn compressed_size_claims_are_not_trusted() {
    let original = read(&fixture("obj/compressed/zlib-kinds.o"));
    let (offset, _) = section(&original, ".debug_info").expect("no .debug_info");
    let dir = scratch();
    let input = dir.path().join("claims-8g.o");
    let mut bytes = original.clone();
    // Elf64_Chdr: ch_type (ELFCOMPRESS_ZLIB), ch_reserved, ch_size.
    assert_eq!(
        &bytes[offset..offset + 4],
        &1u32.to_le_bytes(),
        "not a zlib section"
    );
    bytes[offset + 8..offset + 16].copy_from_slice(&(8u64 << 30).to_le_bytes());
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.path().join("out.btf");
    let detached = format!("--btf_encode_detached={}", out.display());
    let (status, stderr, elapsed) = run_with_timeout(
        &["-J".as_ref(), detached.as_ref(), input.as_os_str()],
        Duration::from_secs(20),
    );
    assert!(
        status.is_some_and(|code| code != 0),
        "status {status:?}: {stderr}"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.len() == 1 && lines[0].contains("claims-8g.o") && lines[0].contains(".debug_info"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// How many mutants the campaign tries (BTFENC_MUTANTS overrides).
const MUTANTS: usize = 300;

/// Mutated `.debug_info`/`.debug_abbrev` bytes of a two-CU gcc object:
/// no panic, no hang, every failure one line naming the file, and every
/// BTF written loads in the kernel. Counts go to stderr.
#[test]
fn dwarf_mutation_campaign() {
    let original = read(&fixture("bad/causes/two-cu.o"));
    let sections: Vec<(usize, usize)> = [".debug_info", ".debug_abbrev"]
        .iter()
        .map(|name| section(&original, name).unwrap_or_else(|| panic!("no {name}")))
        .collect();
    let count = std::env::var("BTFENC_MUTANTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(MUTANTS);
    let keep = std::env::var_os("BTFENC_KEEP_MUTANTS");
    let dir = scratch();
    let mut rng = Rng(0x15_15_15_15);
    let (mut encoded, mut refused, mut loaded) = (0, 0, 0);
    let mut problems = Vec::new();
    let mut skipped = None;
    for index in 0..count {
        let mut bytes = original.clone();
        for _ in 0..1 + rng.below(4) {
            let (start, len) = sections[rng.below(sections.len())];
            let at = start + rng.below(len);
            bytes[at] = match rng.below(4) {
                0 => 0,
                1 => 0xff,
                2 => bytes[at] ^ (1 << rng.below(8)),
                _ => rng.next_u64() as u8,
            };
        }
        let input = dir.path().join(format!("mutant-{index:04}.o"));
        std::fs::write(&input, &bytes).unwrap();
        if let Some(keep) = &keep {
            let _ = std::fs::copy(&input, Path::new(keep).join(format!("mutant-{index:04}.o")));
        }
        let out = dir.path().join("out.btf");
        let _ = std::fs::remove_file(&out);
        let detached = format!("--btf_encode_detached={}", out.display());
        let (status, stderr, _) = run_with_timeout(
            &[
                "-J".as_ref(),
                FORCE.as_ref(),
                detached.as_ref(),
                input.as_os_str(),
            ],
            Duration::from_secs(30),
        );
        let name = input.to_string_lossy();
        match status {
            None => problems.push(format!("mutant {index}: hang")),
            Some(_) if stderr.contains("panicked") => {
                problems.push(format!("mutant {index}: panic: {stderr}"))
            }
            Some(0) => {
                encoded += 1;
                match kernel_load_btf(&read(&out)) {
                    LoadResult::Loaded => loaded += 1,
                    LoadResult::Rejected { errno, log } => problems.push(format!(
                        "mutant {index}: the kernel rejects (errno {errno}): {log}"
                    )),
                    LoadResult::Skipped(reason) => skipped = Some(reason),
                }
            }
            Some(_) => {
                refused += 1;
                let lines: Vec<&str> = stderr.lines().collect();
                if lines.len() != 1 || !lines[0].contains(name.as_ref()) {
                    problems.push(format!(
                        "mutant {index}: not one line naming the file: {stderr:?}"
                    ));
                }
                if out.exists() {
                    problems.push(format!("mutant {index}: failed but left {}", out.display()));
                }
            }
        }
    }
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "DWARF mutation campaign: {count} mutants, {encoded} encoded ({loaded} loaded by the \
             kernel), {refused} refused, {} problems\n",
            problems.len()
        )
        .as_bytes(),
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        encoded > 0 && refused > 0,
        "a campaign that cannot tell anything apart"
    );
    if let Some(reason) = skipped {
        report_skip("causes::dwarf_mutation_campaign (kernel loads)", &reason);
    }
}
