//! Writer tests; round trips with the reader live in `read`.
