//! The copying of `DW_FORM_string` names, and giving back walked pages.

use std::process::Command;

use dwarf::model::{CuModel, Node};
use dwarf::ElfFile;

/// Names of the model's composites and their members, in order.
fn names<'i>(model: &CuModel<'i, '_>) -> Vec<&'i str> {
    let mut names = Vec::new();
    for node in &model.nodes {
        if let Node::Composite { name, members, .. } = node {
            names.extend(name);
            names.extend(members.iter().filter_map(|member| member.name));
        }
    }
    names
}

fn inside(text: &str, bytes: &[u8]) -> bool {
    let range = bytes.as_ptr_range();
    range.contains(&text.as_ptr())
}

#[test]
fn copied_inline_names_are_the_same_names_outside_debug_info() {
    let dir = tempfile::tempdir().expect("tempdir");
    // gcc writes names used once, and short ones, inline (DW_FORM_string).
    let source = "struct pt { int x, yy; long a_longer_member_name; } v;\n";
    std::fs::write(dir.path().join("t.c"), source).expect("write");
    let object = dir.path().join("t.o");
    let status = Command::new("gcc")
        .current_dir(dir.path())
        .args(["-g", "-gdwarf-5", "-c", "t.c", "-o"])
        .arg(&object)
        .status();
    if !matches!(status, Ok(status) if status.success()) {
        eprintln!("SKIPPED: gcc cannot compile the test source");
        return;
    }
    let file = ElfFile::open(&object).expect("open");
    let dwarf = file.dwarf().expect("dwarf");
    let unit = dwarf.units().first().expect("one unit");
    let unit_bytes = dwarf.unit_bytes(unit);
    let arena = bumpalo::Bump::new();
    let plain = dwarf::walk::walk_unit(&dwarf, unit, &arena).expect("walk");
    let names_arena = bumpalo::Bump::new();
    let copied = dwarf::walk::walk_unit_copying_inline_names(&dwarf, unit, &arena, &names_arena)
        .expect("walk");

    let plain_names = names(&plain);
    assert_eq!(plain_names, ["pt", "x", "yy", "a_longer_member_name"]);
    assert!(
        plain_names.iter().any(|name| inside(name, unit_bytes)),
        "gcc wrote no inline name: the test proves nothing"
    );
    assert_eq!(names(&copied), plain_names);
    for name in names(&copied) {
        assert!(
            !inside(name, unit_bytes),
            "{name} still borrows .debug_info"
        );
    }

    // Giving the pages back changes no byte that is read afterwards.
    let before = unit_bytes.to_vec();
    file.release_resident_pages();
    assert!(unit_bytes == before.as_slice());
    assert_eq!(names(&plain), plain_names);
}
