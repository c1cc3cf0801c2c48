//! Lowering a LogQL log query into a [`LogPlan`].
//!
//! Line filters only read the line, which no supported stage rewrites, so they
//! all go into the top-level filter. Label filters before any parser read
//! stored fields and join the top-level filter too; after a parser they become
//! `| filter` pipes at their position, since a later parser may overwrite the
//! fields they read.

mod label;
mod line;
mod parser;
mod selector;

use logql_parser::{LogExpr, Selector, Stage};

use crate::error::LowerError;
use crate::filter::Filter;
use crate::pipe::Pipe;
use crate::plan::{LogPlan, PARSED_PREFIX};
use crate::query::Query;

/// Lowers a LogQL log query into a plan.
///
/// # Errors
/// [`LowerError::Unsupported`] naming the first stage or construct with no
/// exact LogsQL equivalent yet.
pub fn lower_log(expr: &LogExpr) -> Result<LogPlan, LowerError> {
    let mut top = vec![selector::lower(&expr.selector)];
    let mut pipes = Vec::new();
    let mut parsed = false;
    for stage in &expr.pipeline {
        match stage {
            Stage::LineFilter(lf) => top.push(line::lower(lf)?),
            Stage::LabelFilter(lf) => {
                let f = label::lower(lf, parsed)?;
                if !parsed {
                    top.push(f);
                } else if f != Filter::All {
                    pipes.push(Pipe::Filter(f));
                }
            }
            Stage::Parser(p) => {
                pipes.extend(parser::lower(p)?);
                parsed = true;
            }
            Stage::LineFormat(_) => return Err(unsupported("line_format")),
            Stage::LabelFormat(_) => return Err(unsupported("label_format")),
            Stage::Drop(_) => return Err(unsupported("drop")),
            Stage::Keep(_) => return Err(unsupported("keep")),
            Stage::Decolorize => return Err(unsupported("decolorize")),
        }
    }
    Ok(LogPlan {
        query: Query {
            filter: Filter::and(top),
            pipes,
        },
        parsed_prefix: parsed.then_some(PARSED_PREFIX),
    })
}

/// Lowers a stream selector alone (for `/labels?query=`, `/series?match[]=`).
pub fn lower_selector(selector: &Selector) -> Query {
    Query::new(selector::lower(selector))
}

fn unsupported(stage: &str) -> LowerError {
    LowerError::Unsupported(format!("{stage} stage"))
}
