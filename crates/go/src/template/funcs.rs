//! The function map: Go's template builtins plus the functions Loki
//! registers (its own `functionMap` and the sprig subset it imports).
//!
//! This file names the functions ([`Func`]) and routes a call to the
//! family that implements it; the families and the Go behaviours they share
//! (argument checks, conversions, encodings, parsing) live in submodules.

mod args;
mod builtins;
mod cast;
mod compare;
mod decimal;
mod encode;
mod loki;
mod math;
mod parsing;
mod sprig;
mod text;
mod time;

use super::Context;
use super::value::Value;
use args::R;

pub(crate) use args::split_arg_err;

macro_rules! funcs {
    ($($v:ident = $n:literal),* $(,)?) => {
        /// A function a template can call.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[allow(non_camel_case_types)]
        pub(crate) enum Func { $($v),* }
        impl Func {
            /// Resolves a name as Go's parser does against the function map.
            pub(crate) fn lookup(name: &str) -> Option<Func> {
                match name { $($n => Some(Func::$v),)* _ => None }
            }
        }
    };
}

funcs! {
    And = "and", Or = "or", Not = "not", Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt",
    Ge = "ge", Len = "len", Index = "index", Print = "print", Printf = "printf",
    Println = "println", Html = "html", Js = "js", Urlquery = "urlquery", Slice = "slice",
    Call = "call",
    ToLower = "ToLower", ToUpper = "ToUpper", Replace = "Replace", Trim = "Trim",
    TrimLeft = "TrimLeft", TrimRight = "TrimRight", TrimPrefix = "TrimPrefix",
    TrimSuffix = "TrimSuffix", TrimSpace = "TrimSpace", RegexReplaceAll = "regexReplaceAll",
    RegexReplaceAllLiteral = "regexReplaceAllLiteral", Count = "count", Urldecode = "urldecode",
    Urlencode = "urlencode", Bytes = "bytes", Duration = "duration",
    DurationSeconds = "duration_seconds", UnixEpochMillis = "unixEpochMillis",
    UnixEpochNanos = "unixEpochNanos", ToDateInZone = "toDateInZone", UnixToTime = "unixToTime",
    AlignLeft = "alignLeft", AlignRight = "alignRight", Line = "__line__",
    Timestamp = "__timestamp__",
    B64enc = "b64enc", B64dec = "b64dec", Lower = "lower", Upper = "upper", Title = "title",
    Trunc = "trunc", Substr = "substr", Contains = "contains", HasPrefix = "hasPrefix",
    HasSuffix = "hasSuffix", Indent = "indent", Nindent = "nindent", SReplace = "replace",
    Repeat = "repeat", STrim = "trim", TrimAll = "trimAll", STrimSuffix = "trimSuffix",
    STrimPrefix = "trimPrefix", Int = "int", Float64 = "float64", Add = "add", Sub = "sub",
    Mul = "mul", Div = "div", Mod = "mod", Addf = "addf", Subf = "subf", Mulf = "mulf",
    Divf = "divf", Max = "max", Min = "min", Maxf = "maxf", Minf = "minf", Ceil = "ceil",
    Floor = "floor", Round = "round", FromJson = "fromJson", Date = "date", ToDate = "toDate",
    Now = "now", UnixEpoch = "unixEpoch", Default = "default",
}

impl Func {
    /// Calls the function on evaluated arguments (`and`/`or` are handled by
    /// the executor because they short-circuit). `re` is the first
    /// argument's regexp slot when it was a literal.
    pub(crate) fn call<'a>(
        self,
        name: &str,
        args: Vec<Value<'a>>,
        ctx: &'a dyn Context,
        re: Option<&std::sync::OnceLock<Result<regex::Regex, String>>>,
    ) -> R<'a> {
        use Func::*;
        let a = args.as_slice();
        match self {
            // Go's builtins.
            And | Or => Ok(builtins::and_or(a)),
            Not => builtins::not(a, name, ctx),
            Eq | Ne => builtins::eq(self, a, name),
            Lt | Le | Gt | Ge => builtins::order(self, a, name),
            Len => builtins::len(a, name, ctx),
            Index => builtins::index(a, name, ctx),
            Slice => builtins::slice(a, name),
            Call => Err("error calling call: non-function of type string".into()),
            Print => Ok(builtins::print(a, ctx)),
            Println => Ok(builtins::println(a, ctx)),
            Printf => builtins::printf(a, name, ctx),
            Html | Js | Urlquery => Ok(builtins::escape(self, a, ctx)),

            // Loki's own functionMap (Go's strings package).
            ToLower | Lower => loki::to_lower(a, name),
            ToUpper | Upper => loki::to_upper(a, name),
            Replace => loki::replace(a, name),
            Trim | TrimLeft | TrimRight => loki::trim(self, a, name),
            TrimPrefix | TrimSuffix => loki::trim_affix(self, a, name),
            TrimSpace | STrim => loki::trim_space(a, name),
            RegexReplaceAll | RegexReplaceAllLiteral => loki::regex_replace(self, a, name, re),
            Count => loki::count(a, name, re),
            Urldecode => loki::urldecode(a, name),
            Urlencode => loki::urlencode(a, name),
            Bytes => loki::bytes(a, name),
            Duration | DurationSeconds => loki::duration(a, name),
            AlignLeft | AlignRight => loki::align_to(self, a, name),
            Line => loki::line(a, name, ctx),

            // Time, Loki's and sprig's.
            UnixEpochMillis | UnixEpochNanos | UnixEpoch => time::unix_epoch(self, a, name),
            ToDateInZone => time::to_date_in_zone(a, name),
            ToDate => time::to_date(a, name),
            UnixToTime => time::unix_to_time_fn(a, name),
            Timestamp => time::timestamp(a, name, ctx),
            Now => time::now(a, name),
            Date => time::date(a, name),

            // sprig.
            B64enc => sprig::b64enc_fn(a, name),
            B64dec => sprig::b64dec_fn(a, name),
            Title => sprig::title_fn(a, name),
            Trunc => sprig::trunc(a, name),
            Substr => sprig::substr(a, name),
            Contains | HasPrefix | HasSuffix => sprig::contains(self, a, name),
            Indent | Nindent => sprig::indent(self, a, name),
            SReplace => sprig::replace(a, name),
            Repeat => sprig::repeat(a, name),
            TrimAll => sprig::trim_all(a, name),
            STrimSuffix | STrimPrefix => sprig::trim_affix(self, a, name),
            FromJson => sprig::from_json(a, name),
            Default => sprig::default(a, name, ctx),

            // sprig's math.
            Int => math::int(a, name),
            Float64 => math::float64(a, name),
            Add => Ok(math::add(a)),
            Sub | Div | Mod => math::sub_div_mod(self, a, name),
            Mul => math::mul(a, name),
            Addf => Ok(math::addf(a)),
            Subf | Mulf | Divf => math::float_op(self, a, name),
            Max | Min => math::max_min(self, a, name),
            Maxf | Minf => math::max_min_f(self, a, name),
            Ceil => math::ceil(a, name),
            Floor => math::floor(a, name),
            Round => math::round(a, name),
        }
    }
}
