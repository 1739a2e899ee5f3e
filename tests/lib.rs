//! Helpers shared by the integration tests: running btfenc, pahole and
//! bpftool, and loading BTF into the kernel.
