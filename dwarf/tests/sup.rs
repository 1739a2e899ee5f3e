//! Reading `dwz -m` output with its common file, through the public API,
//! on the committed fixtures (fixtures/obj/dwz).

use std::path::{Path, PathBuf};

use dwarf::{find_supplementary, ElfFile, SupSection};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/obj/dwz")
        .join(name)
}

/// The fixtures' links, as `readelf -x` shows them (see
/// fixtures/README.md), and the units of the common file walked with
/// the program's: `struct dz_task`, which dwz moved there, is in the
/// model; without the common file, a one-line error, not gimli's.
#[test]
fn fixtures_walk_with_their_common_file() {
    for (dir, common, section) in [
        ("gnu", "common.alt", SupSection::GnuDebugAltLink),
        ("sup", "common.sup", SupSection::DebugSup),
    ] {
        let main = ElfFile::open(fixture(&format!("{dir}/prog-one"))).expect("opens");
        let link = main
            .supplementary_link()
            .expect("reads")
            .expect("has a link");
        assert_eq!(link.section, section);
        assert_eq!(link.path, Path::new(common));
        assert_eq!(link.build_id.len(), 20);
        let sup = find_supplementary(&main, &link, None, Path::new("/nonexistent"))
            .expect("found beside the program");
        assert_eq!(sup.path(), fixture(&format!("{dir}/{common}")));
        let common_file = ElfFile::open(fixture(&format!("{dir}/{common}"))).expect("opens");
        assert_eq!(common_file.supplementary_link().expect("reads"), None);

        let dwarf = main.dwarf_with_sup(Some(&sup)).expect("DWARF");
        let arena = bumpalo::Bump::new();
        let model = dwarf::walk::walk_units(&dwarf, dwarf.units(), &arena).expect("walks");
        let task = model.nodes.iter().any(|node| {
            matches!(
                node,
                dwarf::model::Node::Composite {
                    name: Some("dz_task"),
                    byte_size: 80,
                    ..
                }
            )
        });
        assert!(task, "{dir}: no struct dz_task in the model");

        let alone = main.dwarf().expect("DWARF");
        let err = dwarf::walk::walk_units(&alone, alone.units(), &arena)
            .expect_err("the common file is needed");
        let text = err.to_string();
        assert!(text.contains("supplementary file"), "{text}");
        assert!(!text.contains("invalid attribute form"), "{text}");
    }
}
