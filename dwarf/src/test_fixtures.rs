//! The committed fixture objects, for the crate's tests.

/// Every committed fixture object, compiled by gcc and clang, DWARF 4
/// and 5, both byte orders.
pub(crate) fn fixture_objects() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/obj");
    let mut pending = vec![root];
    let mut files = Vec::new();
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixtures directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
