//! Why an encoding failed: the crate's one [`crate::Error`], which keeps
//! the failing stage's error whole with what the pipeline was doing
//! around it.

pub(crate) use crate::error::ResultExt;
pub use crate::Error;
