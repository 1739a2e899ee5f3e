//! btfenc: DWARF to BTF, a drop-in replacement for `pahole -J`.
fn main() {}
