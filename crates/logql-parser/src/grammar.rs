//! The pest grammar (`logql.pest`); its `Pairs` never leave the crate.

#![allow(missing_docs, unreachable_pub)]

/// The derived pest parser for LogQL.
#[derive(pest_derive::Parser)]
#[grammar = "logql.pest"]
pub(crate) struct LogqlParser;
