//! The typed LogQL syntax tree.
//!
//! The tree covers the whole of LogQL as of Loki 3.7, even where the grammar
//! does not accept a construct yet, so that lowering and evaluation can be
//! written against one stable shape. Every node prints back as Loki prints
//! it (see the `Display` impls in `print.rs`), and `parse(print(ast)) == ast`.

use go::duration::Duration;

/// A parsed LogQL query: either a log query or a metric query.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A log query: a stream selector followed by a pipeline.
    Log(LogExpr),
    /// A metric query: aggregations, binary operations and literals.
    Metric(MetricExpr),
}

/// A stream selector plus the pipeline stages applied to each entry, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct LogExpr {
    /// The stream selector, `{app="api", env=~"prod|dev"}`.
    pub selector: Selector,
    /// Stages in the order they are written.
    pub pipeline: Vec<Stage>,
}

/// A stream selector: matchers over stream labels, all of which must hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    /// The matchers in the order they were written.
    pub matchers: Vec<Matcher>,
}

/// A label matcher, used by selectors and string label filters.
#[derive(Debug, Clone, PartialEq)]
pub struct Matcher {
    /// The label name (`[a-zA-Z_][a-zA-Z0-9_]*`).
    pub name: String,
    /// How the value is compared.
    pub op: MatchOp,
    /// The unquoted value; a regex for `=~`/`!~`, matched against the whole label value.
    pub value: String,
}

/// A label matcher operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchOp {
    /// `=`
    Eq,
    /// `!=`
    Neq,
    /// `=~`: the regex must match the whole value.
    Re,
    /// `!~`: the regex must not match the whole value.
    Nre,
}

/// One pipeline stage.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// `|= "a"`, `!~ "b" or "c"`, `|> "<_> x"`, `|= ip("10.0.0.0/8")`.
    LineFilter(LineFilter),
    /// `| json`, `| logfmt`, `| regexp`, `| pattern`, `| unpack`.
    Parser(Parser),
    /// `| status >= 500 and method="GET"`.
    LabelFilter(LabelFilter),
    /// `| line_format "{{.msg}}"`; holds the template text.
    LineFormat(String),
    /// `| label_format a=b, c="{{.d}}"`.
    LabelFormat(Vec<LabelFormatOp>),
    /// `| drop a, b="c"`.
    Drop(Vec<LabelSelector>),
    /// `| keep a, b="c"`.
    Keep(Vec<LabelSelector>),
    /// `| decolorize`.
    Decolorize,
}

/// A line filter, possibly with `or` alternatives that share its operator.
#[derive(Debug, Clone, PartialEq)]
pub struct LineFilter {
    /// The operator.
    pub op: LineFilterOp,
    /// One or more alternatives (`|= "a" or "b"` has two). Never empty.
    pub values: Vec<LineFilterValue>,
}

/// A line filter operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineFilterOp {
    /// `|=`: the line contains the literal.
    Contains,
    /// `!=`: the line does not contain the literal.
    NotContains,
    /// `|~`: the RE2 regex matches somewhere in the line.
    Regex,
    /// `!~`: the RE2 regex matches nowhere in the line.
    NotRegex,
    /// `|>`: the line matches the pattern (`<_>` placeholders).
    Pattern,
    /// `!>`: the line does not match the pattern.
    NotPattern,
}

/// The operand of a line filter.
#[derive(Debug, Clone, PartialEq)]
pub enum LineFilterValue {
    /// A literal, regex or pattern string, unquoted.
    Literal(String),
    /// `ip("…")`: an address, range or CIDR, unquoted.
    Ip(String),
}

/// A parser stage.
#[derive(Debug, Clone, PartialEq)]
pub enum Parser {
    /// `json` with optional field expressions (`json a="b.c", d`).
    Json(Vec<LabelExtraction>),
    /// `logfmt` with flags and optional field expressions.
    Logfmt {
        /// `--strict`
        strict: bool,
        /// `--keep-empty`
        keep_empty: bool,
        /// Field expressions; empty means "extract everything".
        extractions: Vec<LabelExtraction>,
    },
    /// `regexp "(?P<name>…)"`; holds the unquoted regex.
    Regexp(String),
    /// `pattern "<ip> - <_>"`; holds the unquoted pattern.
    Pattern(String),
    /// `unpack`
    Unpack,
}

/// A field expression of `json` or `logfmt`: `name` or `name="path"`.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelExtraction {
    /// The label to create.
    pub name: String,
    /// The unquoted path or key; `None` for the bare form `json name`.
    pub expr: Option<String>,
}

/// A label filter expression, a tree of `and`/`or` over typed comparisons.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelFilter {
    /// `a and b`, also written `a, b` or `a | b`-less juxtaposition in Loki's grammar.
    And(Box<LabelFilter>, Box<LabelFilter>),
    /// `a or b`.
    Or(Box<LabelFilter>, Box<LabelFilter>),
    /// A parenthesised filter, kept so that printing matches Loki.
    Paren(Box<LabelFilter>),
    /// A string comparison: `name="v"`, `name!~"re"`.
    Matcher(Matcher),
    /// A numeric comparison: `status >= 500`.
    Number {
        /// The label name.
        name: String,
        /// The comparison.
        op: CmpOp,
        /// The right-hand side.
        value: f64,
    },
    /// A duration comparison: `latency > 250ms`.
    Duration {
        /// The label name.
        name: String,
        /// The comparison.
        op: CmpOp,
        /// The right-hand side.
        value: Duration,
    },
    /// A bytes comparison: `size > 10KB`; the value is in bytes.
    Bytes {
        /// The label name.
        name: String,
        /// The comparison.
        op: CmpOp,
        /// The right-hand side in bytes.
        value: u64,
    },
    /// `addr = ip("10.0.0.0/8")` or `addr != ip(…)`.
    Ip {
        /// The label name.
        name: String,
        /// Only `Eq` and `Neq` are valid.
        op: MatchOp,
        /// The unquoted address, range or CIDR.
        value: String,
    },
}

/// A comparison operator of numeric, duration and bytes label filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `=` or `==`
    Eq,
    /// `!=`
    Neq,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
}

/// One operation of `label_format`.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelFormatOp {
    /// `dst=src`: rename `src` to `dst`.
    Rename {
        /// The new name.
        dst: String,
        /// The label renamed.
        src: String,
    },
    /// `dst="{{.x}}"`: set `dst` from a template.
    Template {
        /// The label set.
        dst: String,
        /// The unquoted template text.
        template: String,
    },
}

/// An item of `drop`/`keep`: a bare name or a matcher.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelSelector {
    /// `name`
    Name(String),
    /// `name="value"` and the other matcher forms.
    Matcher(Matcher),
}

/// A metric query.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricExpr {
    /// `rate({…}[5m])`, `quantile_over_time(0.99, {…} | unwrap x [5m]) by (a)`.
    RangeAggregation(RangeAggregation),
    /// `sum by (a) (…)`, `topk(5, …)`.
    VectorAggregation(VectorAggregation),
    /// `a + b`, `a > bool 1`, `a / on(x) group_left(y) b`.
    Binary(BinaryExpr),
    /// A number literal, `1`, `-2.5`.
    Literal(f64),
    /// `vector(1)`.
    Vector(f64),
    /// `label_replace(expr, "dst", "replacement", "src", "regex")`.
    LabelReplace(LabelReplace),
}

/// A range aggregation over a log range.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeAggregation {
    /// The function.
    pub op: RangeOp,
    /// The parameter of `quantile_over_time`.
    pub param: Option<f64>,
    /// What is aggregated.
    pub range: LogRange,
    /// `by`/`without`, only valid on some unwrapped functions.
    pub grouping: Option<Grouping>,
}

/// A log expression with a range, an optional offset and an optional unwrap.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRange {
    /// The log query.
    pub log: LogExpr,
    /// The window `[5m]`.
    pub interval: Duration,
    /// `offset 1h`.
    pub offset: Option<Duration>,
    /// `| unwrap latency | __error__=""`.
    pub unwrap: Option<Unwrap>,
}

/// An `unwrap` stage and the label filters that follow it.
#[derive(Debug, Clone, PartialEq)]
pub struct Unwrap {
    /// How the label value becomes a number.
    pub conversion: UnwrapConversion,
    /// The label unwrapped.
    pub label: String,
    /// Label filters written after the unwrap, in order.
    pub post_filters: Vec<LabelFilter>,
}

impl Unwrap {
    /// The label read and how it converts: what a sample extractor needs
    /// of the `unwrap`.
    pub fn target(&self) -> (&str, UnwrapConversion) {
        (self.label.as_str(), self.conversion)
    }
}

/// The conversion applied by `unwrap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnwrapConversion {
    /// `unwrap x`: a float.
    Plain,
    /// `unwrap bytes(x)`: a humanized byte size.
    Bytes,
    /// `unwrap duration(x)`: a Go duration, in seconds.
    Duration,
    /// `unwrap duration_seconds(x)`: same as `Duration`.
    DurationSeconds,
}

/// A range aggregation function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum RangeOp {
    CountOverTime,
    Rate,
    RateCounter,
    BytesOverTime,
    BytesRate,
    AvgOverTime,
    SumOverTime,
    MinOverTime,
    MaxOverTime,
    StddevOverTime,
    StdvarOverTime,
    QuantileOverTime,
    FirstOverTime,
    LastOverTime,
    AbsentOverTime,
}

/// `by (…)` or `without (…)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Grouping {
    /// `true` for `without`.
    pub without: bool,
    /// The labels, possibly empty (`by ()`).
    pub labels: Vec<String>,
}

/// A vector aggregation.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorAggregation {
    /// The operator.
    pub op: VectorOp,
    /// The `k` of `topk`/`bottomk`/`approx_topk`.
    pub param: Option<i64>,
    /// The aggregated expression.
    pub inner: Box<MetricExpr>,
    /// `by`/`without`, written before or after.
    pub grouping: Option<Grouping>,
}

/// A vector aggregation operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum VectorOp {
    Sum,
    Avg,
    Min,
    Max,
    Count,
    Stddev,
    Stdvar,
    Topk,
    Bottomk,
    Sort,
    SortDesc,
    ApproxTopk,
}

/// A binary operation between two metric expressions.
#[derive(Debug, Clone, PartialEq)]
pub struct BinaryExpr {
    /// The operator.
    pub op: BinaryOp,
    /// Left operand.
    pub lhs: Box<MetricExpr>,
    /// Right operand.
    pub rhs: Box<MetricExpr>,
    /// `bool`, `on`/`ignoring`, `group_left`/`group_right`.
    pub modifier: BinaryModifier,
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum BinaryOp {
    Or,
    And,
    Unless,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    Eq,
    Neq,
    Gt,
    Ge,
    Lt,
    Le,
}

/// The modifiers of a binary operation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BinaryModifier {
    /// `bool` on a comparison.
    pub return_bool: bool,
    /// `on (…)`/`ignoring (…)` and grouping.
    pub matching: Option<VectorMatching>,
}

/// Vector matching: `on (a) group_left (b)`.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorMatching {
    /// `true` for `on`, `false` for `ignoring`.
    pub on: bool,
    /// The matching labels.
    pub labels: Vec<String>,
    /// `group_left`/`group_right` and its include labels.
    pub group: Option<GroupModifier>,
}

/// `group_left (…)` or `group_right (…)`.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupModifier {
    /// `true` for `group_left`.
    pub left: bool,
    /// Extra labels copied from the "one" side.
    pub include: Vec<String>,
}

/// `label_replace(inner, dst, replacement, src, regex)`.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelReplace {
    /// The expression whose labels are rewritten.
    pub inner: Box<MetricExpr>,
    /// Destination label.
    pub dst: String,
    /// Replacement with `$1` references.
    pub replacement: String,
    /// Source label.
    pub src: String,
    /// Regex, anchored on both ends as in Prometheus.
    pub regex: String,
}
