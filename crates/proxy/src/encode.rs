//! Loki JSON encoders that write bytes directly.
//! STUB: the codec helper owns this module.

pub mod streams;
