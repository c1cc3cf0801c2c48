//! Ground truth recorded from Loki v3.7 (see `CASES`).

use super::Want;

/// Labels of the shared test context (a realistic mix of strings, numbers, JSON).
pub(super) const LABELS: &[(&str, &str)] = &[
    (r#"a"#, r#"A"#),
    (r#"msg"#, r#"Hello World"#),
    (r#"n"#, r#"42"#),
    (r#"f"#, r#"3.14159"#),
    (r#"level"#, r#"warn"#),
    (r#"uni"#, r#"héllo wörld"#),
    (r#"status"#, r#"503"#),
    (r#"path"#, r#"/api/v1/users/123"#),
    (r#"lat"#, r#"12.5ms"#),
    (r#"ip"#, r#"10.0.0.1"#),
    (r#"method"#, r#"GET"#),
    (r#"empty"#, r#""#),
    (r#"zero"#, r#"0"#),
    (r#"json"#, r#"{"a":{"b":[1,2]},"s":"x"}"#),
];
/// `__line__` of the shared context.
pub(super) const LINE: &str = r#"GET /api 200 12ms"#;
/// `__timestamp__` of the shared context, Unix ns.
pub(super) const TS: i64 = 1700000000123456789;

/// (template, what Loki v3.7 answers). Every expected value was produced by
/// running Loki's own `log.NewFormatter(t).Process` (Go text/template with
/// Loki's function map) on the context above.
pub(super) const CASES: &[(&str, Want)] = &[
    (
        r#"{{ .method }} {{ .path }}
{{- /* c */ -}}
  {{ .status }}"#,
        Want::Out(r#"GET /api/v1/users/123503"#),
    ),
    (
        r#"line1
  {{- .a }}
{{ .a -}}
	end"#,
        Want::Out(
            r#"line1A
Aend"#,
        ),
    ),
    (
        r#"{{ $l := .level }}{{ range $i, $c := (fromJson .json).a.b }}{{ $l }}{{ $i }}{{ $c }}{{ $.a }}{{ end }}"#,
        Want::Out(r#"warn01Awarn12A"#),
    ),
    (
        r#"{{ with $x := .a }}{{ $x }}{{ . }}{{ end }}"#,
        Want::Out(r#"AA"#),
    ),
    (
        r#"{{ if eq .level "warn" "error" }}bad{{ end }}"#,
        Want::Out(r#"bad"#),
    ),
    (
        r#"{{ if and (eq .method "GET") (ge (int .status) 500) }}get5xx{{ end }}"#,
        Want::Out(r#"get5xx"#),
    ),
    (
        r#"{{ if or (eq .zero "0") .missing }}z{{ end }}"#,
        Want::Out(r#"z"#),
    ),
    (
        r#"{{ .empty | default "none" | upper }}"#,
        Want::Out(r#"NONE"#),
    ),
    (
        r#"{{ .uni | upper }} {{ len .uni }} {{ trunc 3 .uni }} {{ title .uni }}"#,
        Want::Out(r#"HÉLLO WÖRLD 13 hé Héllo Wörld"#),
    ),
    (
        r#"{{ printf "%-8s|%8s|" .uni .uni }}"#,
        Want::Out(r#"héllo wörld|héllo wörld|"#),
    ),
    (
        r#"{{ printf "%.2f %.2f %.3f" 2.675 1.005 0.0005 }}"#,
        Want::Out(r#"2.67 1.00 0.001"#),
    ),
    (
        r#"{{ printf "%s %v" 1.5 (addf 0.1 0.2) }}"#,
        Want::Out(r#"%!s(float64=1.5) 0.3"#),
    ),
    (
        r#"{{ printf "%d" (add 1 2) }} {{ printf "%v" (div 7 2) }} {{ printf "%.1f" (divf 7 2) }}"#,
        Want::Out(r#"3 3 3.5"#),
    ),
    (
        r#"{{ printf "%5.1f%%" (mulf (divf 1 3) 100) }}"#,
        Want::Out(r#" 33.3%"#),
    ),
    (
        r#"{{ printf "%03d|%-4d|%x|%#x|% d" 7 7 3054 255 5 }}"#,
        Want::Out(r#"007|7   |bee|0xff| 5"#),
    ),
    (r#"{{ printf "%q" .uni }}"#, Want::Out(r#""héllo wörld""#)),
    (
        r#"{{ printf "%v" .missing }}|{{ printf "%q" .missing }}"#,
        Want::Out(r#"|"""#),
    ),
    (
        r#"{{ date "2006-01-02 15:04:05.000000 MST" __timestamp__ }}"#,
        Want::Out(r#"2023-11-14 22:13:20.123456 UTC"#),
    ),
    (
        r#"{{ __timestamp__ | date "Jan _2 3:04:05 PM" }}"#,
        Want::Out(r#"Nov 14 10:13:20 PM"#),
    ),
    (
        r#"{{ date "2006-01-02" (toDate "2006-01-02" "2021-03-04") }}"#,
        Want::Out(r#"2021-03-04"#),
    ),
    (
        r#"{{ toDateInZone "2006-01-02 15:04" "Nowhere/Zone" "2021-03-04 05:06" }}"#,
        Want::Out(r#"2021-03-04 05:06:00 +0000 UTC"#),
    ),
    (
        r#"{{ toDate "02 Jan 06 15:04 MST" "04 Mar 21 05:06 UTC" }}"#,
        Want::Out(r#"2021-03-04 05:06:00 +0000 UTC"#),
    ),
    (
        r#"{{ toDate "2006-01-02T15:04:05.000000000Z" "2021-03-04T05:06:07.123456789Z" | unixEpochNanos }}"#,
        Want::Out(r#"1614834367123456789"#),
    ),
    (
        r#"{{ toDate "2006-01-02T15:04:05Z07:00" "2021-03-04T05:06:07-05:30" | date "2006-01-02T15:04:05Z07:00" }}"#,
        Want::Out(r#"2021-03-04T10:36:07Z"#),
    ),
    (
        r#"{{ unixEpoch (toDate "2006-01-02" "1969-12-31") }}"#,
        Want::Out(r#"-86400"#),
    ),
    (r#"{{ now | date "2006" | len }}"#, Want::Out(r#"4"#)),
    (
        r#"{{ duration .lat }} {{ duration "1h" }} {{ duration "-1.5s" }} {{ duration "1us" }}"#,
        Want::Out(r#"0.0125 3600 -1.5 1e-06"#),
    ),
    (
        r#"{{ bytes "1KiB" }} {{ bytes "1.5 GB" }} {{ bytes "10" }} {{ bytes "bogus" }}"#,
        Want::Exec(
            r#"template: line:1:60: executing "line" at <bytes "bogus">: error calling bytes: strconv.ParseFloat: parsing "": invalid syntax"#,
        ),
    ),
    (
        r#"{{ regexReplaceAll "^(\\w+) (\\S+).*$" __line__ "$2 via $1" }}"#,
        Want::Out(r#"/api via GET"#),
    ),
    (
        r#"{{ regexReplaceAll "(?i)get" .method "${0}!" }}"#,
        Want::Out(r#"GET!"#),
    ),
    (
        r#"{{ regexReplaceAll "a*" "baaac" "-" }}"#,
        Want::Out(r#"-b-c-"#),
    ),
    (
        r#"{{ regexReplaceAll "\\." .ip "_" }}"#,
        Want::Out(r#"10_0_0_1"#),
    ),
    (r#"{{ count "\\d" .ip }}"#, Want::Out(r#"5"#)),
    (
        r#"{{ replace "." "" .ip }} {{ Replace .ip "." "" 1 }}"#,
        Want::Out(r#"10001 100.0.1"#),
    ),
    (r#"{{ substr 2 4 .uni }}"#, Want::Out(r#"�l"#)),
    (
        r#"{{ indent 4 "a" }}|{{ nindent 0 "a" }}"#,
        Want::Out(
            r#"    a|
a"#,
        ),
    ),
    (
        r#"{{ urlencode "a+b c~d_e.f-g*h'" }}"#,
        Want::Out(r#"a%2Bb+c~d_e.f-g%2Ah%27"#),
    ),
    (
        r#"{{ b64enc "" }}|{{ b64enc "a" }}|{{ b64enc "ab" }}|{{ b64dec "YQ" }}|{{ b64dec "YWI=" }}"#,
        Want::Out(r#"|YQ==|YWI=|illegal base64 data at input byte 0|ab"#),
    ),
    (
        r#"{{ alignLeft 8 .uni }}|{{ alignRight 8 .uni }}|{{ alignLeft 3 .uni }}"#,
        Want::Out(r#"héllo wö|lo wörld|hél"#),
    ),
    (
        r#"{{ round 3.14159 2 }} {{ round -2.5 0 }} {{ ceil -1.5 }} {{ floor -1.5 }}"#,
        Want::Out(r#"3.14 -3 -1 -2"#),
    ),
    (
        r#"{{ max 3 "10" }} {{ min "a" 2 }} {{ maxf "2.5" 1 }} {{ minf 1 "x" }}"#,
        Want::Out(r#"10 0 2.5 0"#),
    ),
    (r#"{{ add }} {{ mul 3 }} {{ addf }}"#, Want::Out(r#"0 3 0"#)),
    (
        r#"{{ mod -7 3 }} {{ div -7 2 }} {{ sub 1 "x" }}"#,
        Want::Out(r#"-1 -3 1"#),
    ),
    (
        r#"{{ float64 "1e3" }} {{ float64 "abc" }} {{ int "1e3" }} {{ int "-3.9" }} {{ int "0b101" }} {{ int true }}"#,
        Want::Out(r#"1000 0 0 -3 5 1"#),
    ),
    (
        r#"{{ eq 1 1.0 }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <eq 1 1.0>: error calling eq: incompatible types for comparison: int and float64"#,
        ),
    ),
    (r#"{{ eq (int .n) 42 }}"#, Want::Out(r#"true"#)),
    (r#"{{ eq (add 1 1) 2 }}"#, Want::Out(r#"true"#)),
    (
        r#"{{ lt .a .msg }} {{ gt 2.5 1.5 }}"#,
        Want::Out(r#"true true"#),
    ),
    (
        r#"{{ len .missing }} {{ len (fromJson .json) }}"#,
        Want::Out(r#"0 2"#),
    ),
    (
        r#"{{ index (fromJson .json) "a" "b" 1 }}"#,
        Want::Out(r#"2"#),
    ),
    (r#"{{ (fromJson .json).a.b }}"#, Want::Out(r#"[1 2]"#)),
    (
        r#"{{ fromJson "[1, 2.5, \"x\", null, {}]" }}"#,
        Want::Out(r#"[1 2.5 x <nil> map[]]"#),
    ),
    (
        r#"{{ fromJson "12345678" }}"#,
        Want::Out(r#"1.2345678e+07"#),
    ),
    (
        r#"{{ default 5 .missing }} {{ default "d" "v" }}"#,
        Want::Out(r#"5 v"#),
    ),
    (
        r#"{{ html .missing }}{{ js 1 2 }}{{ urlquery "a" "b" }}"#,
        Want::Out(r#"1 2ab"#),
    ),
    (
        r#"{{ print 1 2 "a" 3 4.5 true nil }}"#,
        Want::Out(r#"1 2a3 4.5 true <nil>"#),
    ),
    (
        r#"{{ println }}|"#,
        Want::Out(
            r#"
|"#,
        ),
    ),
    (
        r#"{{ not 0 }} {{ not "" }} {{ not (fromJson "[]") }}"#,
        Want::Out(r#"true true true"#),
    ),
    (
        r#"{{ and 1 0 2 }} {{ or 0 "" 3 }} {{ and }}"#,
        Want::Exec(
            r#"template: line:1:35: executing "line" at <and>: wrong number of args for and: want at least 1 got 0"#,
        ),
    ),
    (
        r#"{{ range $i, $e := 3 }}{{ $i }}{{ end }}"#,
        Want::Exec(
            r#"template: line:1:19: executing "line" at <3>: can't use 3 to iterate over more than one variable"#,
        ),
    ),
    (
        r#"{{ range .a }}{{ end }}"#,
        Want::Exec(r#"template: line:1:9: executing "line" at <.a>: range can't iterate over A"#),
    ),
    (
        r#"{{ range $k, $v := . }}{{ $k }},{{ end }}"#,
        Want::Out(r#"a,empty,f,ip,json,lat,level,method,msg,n,path,status,uni,zero,"#),
    ),
    (
        r#"{{ range (fromJson "[]") }}x{{ else }}empty{{ end }}"#,
        Want::Out(r#"empty"#),
    ),
    (
        r#"{{ range (fromJson "[1,2,3]") }}{{ if eq . 2.0 }}{{ continue }}{{ end }}{{ . }}{{ end }}"#,
        Want::Out(r#"13"#),
    ),
    (
        r#"{{ $x := 0 }}{{ range (fromJson "[1,2,3]") }}{{ $x = . }}{{ end }}{{ $x }}"#,
        Want::Out(r#"3"#),
    ),
    (
        r#"{{ with .missing }}a{{ else with .a }}b{{ . }}{{ end }}"#,
        Want::Out(r#"bA"#),
    ),
    (
        r#"{{ if .missing }}1{{ else if .empty }}2{{ else if .zero }}3{{ end }}"#,
        Want::Out(r#"3"#),
    ),
    (
        r#"{{ .a | printf "%s" | printf "%s!" }}"#,
        Want::Out(r#"A!"#),
    ),
    (r#"{{ .a | len }}"#, Want::Out(r#"1"#)),
    (r#"{{ "abc" | upper }}"#, Want::Out(r#"ABC"#)),
    (
        r#"{{ __line__ | regexReplaceAll "\\d+" "N" }}"#,
        Want::Out(r#"N"#),
    ),
    (r#"{{ .msg | regexReplaceAll "o" "0" }}"#, Want::Out(r#"0"#)),
    (r#"{{- .a -}}"#, Want::Out(r#"A"#)),
    (
        r#"{{ 1.5e300 }} {{ -0.0 }} {{ 0x10 }} {{ 0o17 }} {{ 1_000 }}"#,
        Want::Out(r#"1.5e+300 -0 16 15 1000"#),
    ),
    (
        r#"{{ printf "%v" 1e6 }} {{ printf "%g" 1e-7 }} {{ printf "%G" 1e21 }}"#,
        Want::Out(r#"1e+06 1e-07 1E+21"#),
    ),
    (r#"{{ printf "%6.3v" 3.14159 }}"#, Want::Out(r#"  3.14"#)),
    (
        r#"{{ printf "%*d|%-*d" 5 1 4 2 }}"#,
        Want::Out(r#"    1|2   "#),
    ),
    (r#"{{ printf "%[1]s" "a" }}"#, Want::Out(r#"a"#)),
    (
        r#"{{ printf "%s" (fromJson .json).a }}"#,
        Want::Out(r#"map[b:[%!s(float64=1) %!s(float64=2)]]"#),
    ),
    (
        r#"{{ printf "%d" (fromJson "[1,2]") }}"#,
        Want::Out(r#"[%!d(float64=1) %!d(float64=2)]"#),
    ),
    (
        r#"{{ .a.b.c.d }}"#,
        Want::Exec(
            r#"template: line:1:5: executing "line" at <.a.b.c.d>: can't evaluate field b in type string"#,
        ),
    ),
    (
        r#"{{ $x := .a }}{{ $x.y }}"#,
        Want::Exec(
            r#"template: line:1:19: executing "line" at <$x.y>: can't evaluate field y in type string"#,
        ),
    ),
    (
        r#"{{ (.a).b }}"#,
        Want::Exec(
            r#"template: line:1:4: executing "line" at <.a>: can't evaluate field b in type string"#,
        ),
    ),
    (r#"{{ index .a 0 }}"#, Want::Out(r#"65"#)),
    (r#"{{ slice .msg 1 3 }}"#, Want::Out(r#"el"#)),
    (
        r#"{{ call .a }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <call .a>: error calling call: non-function .a of type string"#,
        ),
    ),
    (r#"{{ 1 | printf "%d" }}"#, Want::Out(r#"1"#)),
    (
        r#"{{ .a | 1 }}"#,
        Want::Parse(r#"template: line:1: non executable command in pipeline stage 2"#),
    ),
    (
        r#"{{ .a | nil }}"#,
        Want::Parse(r#"template: line:1: non executable command in pipeline stage 2"#),
    ),
    (
        r#"{{ nil }}"#,
        Want::Exec(r#"template: line:1:3: executing "line" at <nil>: nil is not a command"#),
    ),
    (
        r#"{{ if nil }}x{{ end }}"#,
        Want::Exec(r#"template: line:1:6: executing "line" at <nil>: nil is not a command"#),
    ),
    (r#"{{ $ := 1 }}"#, Want::Out(r#""#)),
    (
        r#"{{ range $i, $v := }}{{ end }}"#,
        Want::Parse(r#"template: line:1: missing value for range"#),
    ),
    (
        r#"{{ if .a }}{{ else }}{{ else }}{{ end }}"#,
        Want::Parse(r#"template: line:1: expected end; found {{else}}"#),
    ),
    (
        r#"{{ range .a }}{{ else if .b }}{{ end }}"#,
        Want::Parse(r#"template: line:1: unexpected <if> in input"#),
    ),
    (
        r#"{{ with .a }}{{ else if .b }}{{ end }}"#,
        Want::Parse(r#"template: line:1: unexpected <if> in input"#),
    ),
    (
        r#"{{ .a }}{{ end }}"#,
        Want::Parse(r#"template: line:1: unexpected {{end}}"#),
    ),
    (
        r#"{{ range }}{{ end }}"#,
        Want::Parse(r#"template: line:1: missing value for range"#),
    ),
    (
        r#"{{ "unterminated
" }}"#,
        Want::Parse(r#"template: line:1: unterminated quoted string"#),
    ),
    (
        r#"{{ 'x }}"#,
        Want::Parse(r#"template: line:1: unterminated character constant"#),
    ),
    (
        r#"{{ `unterminated }}"#,
        Want::Parse(r#"template: line:1: unterminated raw quoted string"#),
    ),
    (
        r#"{{ 1.2.3 }}"#,
        Want::Parse(r#"template: line:1: unexpected ".3" in operand"#),
    ),
    (r#"{{ .a |}}"#, Want::Out(r#"A"#)),
    (
        r#"{{ |.a }}"#,
        Want::Parse(r#"template: line:1: unexpected "|" in command"#),
    ),
    (
        r#"{{ .a = 1 }}"#,
        Want::Parse(r#"template: line:1: unexpected "=" in operand"#),
    ),
    (
        r#"{{ $x = 1 }}"#,
        Want::Exec(r#"template: line:1:8: executing "line" at <1>: undefined variable: $x"#),
    ),
    (r#"{{ $x := 1 }}{{ $x := 2 }}{{ $x }}"#, Want::Out(r#"2"#)),
    (
        r#"{{ if $y := .a }}{{ $y }}{{ end }}{{ $y }}"#,
        Want::Parse(r#"template: line:1: undefined variable "$y""#),
    ),
    (r#"{{ . | printf "%v" | len }}"#, Want::Out(r#"181"#)),
    (
        r#"{{ printf "%s" . }}"#,
        Want::Out(
            r#"map[a:A empty: f:3.14159 ip:10.0.0.1 json:{"a":{"b":[1,2]},"s":"x"} lat:12.5ms level:warn method:GET msg:Hello World n:42 path:/api/v1/users/123 status:503 uni:héllo wörld zero:0]"#,
        ),
    ),
    (r#"{{-3}}"#, Want::Out(r#"-3"#)),
    (r#"{{- 3 -}}"#, Want::Out(r#"3"#)),
    (r#"{{3 -}}x"#, Want::Out(r#"3x"#)),
    (
        r#"{{ 3-}}"#,
        Want::Parse(r#"template: line:1: bad number syntax: "3-""#),
    ),
    (r#"x{{ .a}}}}y"#, Want::Out(r#"xA}}y"#)),
    (
        r#"{{{{ .a }}"#,
        Want::Parse(r#"template: line:1: unexpected "{" in command"#),
    ),
    (r#"{{ .a }} {{ .é }}"#, Want::Out(r#"A "#)),
    (
        r#"{{ ."a" }}"#,
        Want::Parse(r#"template: line:1: bad character U+0022 '"'"#),
    ),
    (r#"{{ ._x }}{{ .a1 }}"#, Want::Out(r#""#)),
    (
        r#"a

{{ foo }}"#,
        Want::Parse(r#"template: line:3: function "foo" not defined"#),
    ),
    (
        r#"a
{{ if .a }}
b
"#,
        Want::Parse(r#"template: line:4: unexpected EOF"#),
    ),
    (
        r#"a
{{ .a
}}"#,
        Want::Out(
            r#"a
A"#,
        ),
    ),
    (
        r#"{{ .a.b }}
{{ .a }}"#,
        Want::Exec(
            r#"template: line:1:5: executing "line" at <.a.b>: can't evaluate field b in type string"#,
        ),
    ),
    (
        r#"x
 {{ .a.b }}"#,
        Want::Exec(
            r#"template: line:2:6: executing "line" at <.a.b>: can't evaluate field b in type string"#,
        ),
    ),
];
