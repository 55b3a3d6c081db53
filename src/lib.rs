//! oscost: measures what the operating system and the hardware under it cost, and explains why.

pub mod error;
pub mod machine;
