//! Parsed form of a template: Go's parse tree reduced to what execution needs.

use std::sync::{Arc, OnceLock};

use super::funcs::Func;

/// A literal pattern's compiled form, made at first use and shared by the
/// lines of a query.
pub(crate) type RegexSlot = Arc<OnceLock<Result<regex::Regex, String>>>;

/// A sequence of nodes.
pub(crate) type List = Vec<Node>;

/// One node of the parse tree.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// Literal text.
    Text(Box<str>),
    /// `{{pipeline}}`: printed unless it declares variables.
    Action(Pipe),
    /// `{{if}}`, `{{with}}` and `{{range}}`.
    Branch(Box<Branch>),
    /// `{{break}}`.
    Break,
    /// `{{continue}}`.
    Continue,
}

/// Which control structure a [`Branch`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BranchKind {
    If,
    With,
    Range,
}

/// A control structure: its arms and the list run when none is taken.
///
/// `{{if a}}…{{else if b}}…{{else}}…{{end}}` is one branch with two arms,
/// where Go nests a second `if` in the first one's else list: chains of any
/// length stay one level deep for every walk over the tree. `range` has
/// exactly one arm.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    pub kind: BranchKind,
    pub arms: Vec<Arm>,
    pub else_list: Option<List>,
}

/// One condition (or range pipeline) and the list it guards.
#[derive(Debug, Clone)]
pub(crate) struct Arm {
    pub pipe: Pipe,
    pub list: List,
}

/// Where a node is in the template text, for Go-style error messages: Go's
/// node position and the byte range of the node's source. Offsets rather
/// than copies, so nested parentheses do not copy the inner text per level.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub pos: usize,
    pub start: usize,
    pub end: usize,
}

/// A pipeline, possibly declaring (`:=`) or assigning (`=`) variables.
#[derive(Debug, Clone)]
pub(crate) struct Pipe {
    pub decl: Vec<Box<str>>,
    pub is_assign: bool,
    pub cmds: Vec<Cmd>,
}

/// One command of a pipeline: an operand or a function call.
#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    pub args: Vec<Arg>,
    /// Per argument: Go's node position and text, for error context.
    pub spans: Vec<Span>,
    /// The whole command, for Go-style error locations and context.
    pub span: Span,
    /// When this is `regexReplaceAll`/`count`/… with a literal pattern, the
    /// slot its compiled form is kept in once first used (Go compiles per
    /// call); commands with the same pattern share one. Only the first
    /// [`super::limits::MAX_CACHED_REGEXES`] patterns of a template get one.
    pub re: Option<RegexSlot>,
}

/// An operand.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    /// `.`
    Dot,
    /// `nil`
    Nil,
    /// `true`/`false`
    Bool(bool),
    /// A number literal.
    Number(Number),
    /// A string literal, unquoted.
    Str(Box<str>),
    /// `.a.b`
    Field(Vec<Box<str>>),
    /// `$x.a.b` (the name includes `$`).
    Var(Box<str>, Vec<Box<str>>),
    /// A function name.
    Func(Func, Box<str>),
    /// `(pipeline)` optionally followed by `.a.b`.
    Paren(Box<Pipe>, Vec<Box<str>>),
}

/// A number constant, with Go's classification of what it can be.
#[derive(Debug, Clone)]
pub(crate) struct Number {
    pub text: Box<str>,
    pub int: Option<i64>,
    pub float: Option<f64>,
    /// The text is a float literal (has `.`, `e` or `p` and is not hex/char).
    pub is_float_text: bool,
}
