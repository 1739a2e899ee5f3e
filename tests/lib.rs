//! Helpers shared by the integration tests: where the fixtures and the
//! built `btfenc` are, running btfenc, pahole and bpftool, reading
//! bpftool's raw dump, and loading BTF into the kernel.
//!
//! ## API Structure
//! - [`paths`]: the workspace, the fixtures and the `btfenc` binary.
//! - [`tools`]: running programs and checking how they failed.
//! - [`kernel`]: [`kernel_load_btf`], the `BPF_BTF_LOAD` syscall.
//! - [`rng`]: a fixed random sequence for mutation campaigns.
//! - [`raw_dump`]: a reader for bpftool's raw text, so tests can state
//!   facts about types without depending on type ids.
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

pub mod kernel;
pub mod paths;
pub mod raw_dump;
pub mod rng;
pub mod tools;

pub use self::kernel::{kernel_accepts_btf, kernel_load_btf, LoadResult};
pub use self::paths::*;
pub use self::tools::*;
