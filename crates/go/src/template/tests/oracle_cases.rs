//! Ground truth recorded from Loki v3.7 (see `CASES`).

use super::Want;

/// Labels of the shared test context (a realistic mix of strings, numbers, JSON).
pub(super) const LABELS: &[(&str, &str)] = &[
    (r#"a"#, r#"A"#),
    (r#"msg"#, r#"Hello World"#),
    (r#"n"#, r#"42"#),
    (r#"f"#, r#"3.14159"#),
    (r#"neg"#, r#"-7"#),
    (r#"oct"#, r#"010"#),
    (r#"hex"#, r#"0x1F"#),
    (r#"empty"#, r#""#),
    (r#"url"#, r#"a b&c=d/é"#),
    (r#"b64"#, r#"aGVsbG8gd29ybGQ="#),
    (r#"path"#, r#"/api/v1/users/123"#),
    (r#"level"#, r#"error"#),
    (r#"dur"#, r#"1h30m"#),
    (r#"size"#, r#"10KB"#),
    (r#"ts"#, r#"1673798889"#),
    (r#"tsms"#, r#"1673798889902"#),
    (r#"json"#, r#"{"x":[1,"a",true],"y":2.5,"z":{"k":"v"}}"#),
    (r#"spaces"#, r#"  pad  "#),
    (
        r#"multi"#, r#"l1
l2"#,
    ),
    (r#"uni"#, r#"héllo wörld"#),
    (r#"date"#, r#"2023-05-06 10:11:12"#),
];
/// `__line__` of the shared context.
pub(super) const LINE: &str = r#"the original line"#;
/// `__timestamp__` of the shared context, Unix ns.
pub(super) const TS: i64 = 1673798889902345678;

/// (template, what Loki v3.7 answers). Every expected value was produced by
/// running Loki's own `log.NewFormatter(t).Process` (Go text/template with
/// Loki's function map) on the context above.
pub(super) const CASES: &[(&str, Want)] = &[
    (r#"plain text"#, Want::Out(r#"plain text"#)),
    (r#"{{.a}}"#, Want::Out(r#"A"#)),
    (r#"{{ .a }} x {{.missing}}|"#, Want::Out(r#"A x |"#)),
    (r#"{{.a}}{{.msg}}"#, Want::Out(r#"AHello World"#)),
    (r#"  {{- .a -}}  "#, Want::Out(r#"A"#)),
    (r#"a  {{- .a}}"#, Want::Out(r#"aA"#)),
    (r#"{{.a -}}  b"#, Want::Out(r#"Ab"#)),
    (r#"{{/* comment */}}x"#, Want::Out(r#"x"#)),
    (r#"a {{- /* c */ -}} b"#, Want::Out(r#"ab"#)),
    (
        r#"{{ . }}"#,
        Want::Out(
            r#"map[a:A b64:aGVsbG8gd29ybGQ= date:2023-05-06 10:11:12 dur:1h30m empty: f:3.14159 hex:0x1F json:{"x":[1,"a",true],"y":2.5,"z":{"k":"v"}} level:error msg:Hello World multi:l1
l2 n:42 neg:-7 oct:010 path:/api/v1/users/123 size:10KB spaces:  pad   ts:1673798889 tsms:1673798889902 uni:héllo wörld url:a b&c=d/é]"#,
        ),
    ),
    (
        r#"{{ .a.b }}"#,
        Want::Exec(
            r#"template: line:1:5: executing "line" at <.a.b>: can't evaluate field b in type string"#,
        ),
    ),
    (r#"{{ $x := .a }}{{ $x }}"#, Want::Out(r#"A"#)),
    (
        r#"{{ $ }}"#,
        Want::Out(
            r#"map[a:A b64:aGVsbG8gd29ybGQ= date:2023-05-06 10:11:12 dur:1h30m empty: f:3.14159 hex:0x1F json:{"x":[1,"a",true],"y":2.5,"z":{"k":"v"}} level:error msg:Hello World multi:l1
l2 n:42 neg:-7 oct:010 path:/api/v1/users/123 size:10KB spaces:  pad   ts:1673798889 tsms:1673798889902 uni:héllo wörld url:a b&c=d/é]"#,
        ),
    ),
    (r#"{{ $.a }}"#, Want::Out(r#"A"#)),
    (r#"{{ $x := 1 }}{{ $x = 2 }}{{ $x }}"#, Want::Out(r#"2"#)),
    (r#"{{ 3 }}"#, Want::Out(r#"3"#)),
    (r#"{{ -3 }}"#, Want::Out(r#"-3"#)),
    (r#"{{ 1.5 }}"#, Want::Out(r#"1.5"#)),
    (r#"{{ 1e3 }}"#, Want::Out(r#"1000"#)),
    (r#"{{ 0x1F }}"#, Want::Out(r#"31"#)),
    (r#"{{ 'a' }}"#, Want::Out(r#"97"#)),
    (r#"{{ true }}"#, Want::Out(r#"true"#)),
    (r#"{{ "q\tx" }}"#, Want::Out(r#"q	x"#)),
    (r#"{{ `raw\n` }}"#, Want::Out(r#"raw\n"#)),
    (r#"{{ 100000000.0 }}"#, Want::Out(r#"1e+08"#)),
    (r#"{{ 1234567.0 }}"#, Want::Out(r#"1.234567e+06"#)),
    (r#"{{ 0.00001 }}"#, Want::Out(r#"1e-05"#)),
    (r#"{{ 123456.0 }}"#, Want::Out(r#"123456"#)),
    (r#"{{ if .a }}yes{{ end }}"#, Want::Out(r#"yes"#)),
    (
        r#"{{ if .missing }}yes{{ else }}no{{ end }}"#,
        Want::Out(r#"no"#),
    ),
    (
        r#"{{ if eq .level "warn" }}W{{ else if eq .level "error" }}E{{ else }}O{{ end }}"#,
        Want::Out(r#"E"#),
    ),
    (r#"{{ with .a }}[{{ . }}]{{ end }}"#, Want::Out(r#"[A]"#)),
    (
        r#"{{ with .missing }}x{{ else }}none{{ end }}"#,
        Want::Out(r#"none"#),
    ),
    (
        r#"{{ range $i, $v := (fromJson .json).x }}{{$i}}={{$v}};{{ end }}"#,
        Want::Out(r#"0=1;1=a;2=true;"#),
    ),
    (
        r#"{{ range $k, $v := (fromJson .json) }}{{$k}};{{ end }}"#,
        Want::Out(r#"x;y;z;"#),
    ),
    (r#"{{ range 3 }}{{.}}{{ end }}"#, Want::Out(r#"012"#)),
    (
        r#"{{ range (fromJson .json).x }}{{ if eq (printf "%v" .) "a" }}{{ break }}{{ end }}{{ . }}{{ end }}"#,
        Want::Out(r#"1"#),
    ),
    (r#"{{ if and .a .msg }}both{{ end }}"#, Want::Out(r#"both"#)),
    (r#"{{ or .missing .a }}"#, Want::Out(r#"A"#)),
    (r#"{{ and .a .missing }}|"#, Want::Out(r#"|"#)),
    (r#"{{ not .a }}"#, Want::Out(r#"false"#)),
    (r#"{{ if not .missing }}ok{{ end }}"#, Want::Out(r#"ok"#)),
    (r#"{{ eq .a "A" }}"#, Want::Out(r#"true"#)),
    (r#"{{ eq .a "B" "A" }}"#, Want::Out(r#"true"#)),
    (r#"{{ ne .a "A" }}"#, Want::Out(r#"false"#)),
    (r#"{{ lt 1 2 }}"#, Want::Out(r#"true"#)),
    (r#"{{ gt .n "5" }}"#, Want::Out(r#"false"#)),
    (r#"{{ le 2 2 }}"#, Want::Out(r#"true"#)),
    (r#"{{ ge 1.5 2.5 }}"#, Want::Out(r#"false"#)),
    (
        r#"{{ eq .n 42 }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <eq .n 42>: error calling eq: incompatible types for comparison: string and int"#,
        ),
    ),
    (
        r#"{{ lt true false }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <lt true false>: error calling lt: invalid type for comparison"#,
        ),
    ),
    (r#"{{ len .msg }}"#, Want::Out(r#"11"#)),
    (r#"{{ len .uni }}"#, Want::Out(r#"13"#)),
    (r#"{{ index .msg 1 }}"#, Want::Out(r#"101"#)),
    (r#"{{ index (fromJson .json).x 1 }}"#, Want::Out(r#"a"#)),
    (r#"{{ index (fromJson .json) "y" }}"#, Want::Out(r#"2.5"#)),
    (r#"{{ index . "a" }}"#, Want::Out(r#"A"#)),
    (
        r#"{{ print .a 1 2 .msg }}"#,
        Want::Out(r#"A1 2Hello World"#),
    ),
    (
        r#"{{ println .a 1 }}"#,
        Want::Out(
            r#"A 1
"#,
        ),
    ),
    (
        r#"{{ html "<a href='x'>&\"" }}"#,
        Want::Out(r#"&lt;a href=&#39;x&#39;&gt;&amp;&#34;"#),
    ),
    (
        r#"{{ js "a'b\"c<>&=\n" }}"#,
        Want::Out(r#"a\'b\"c\u003C\u003E\u0026\u003D\u000A"#),
    ),
    (
        r#"{{ urlquery .url }}"#,
        Want::Out(r#"a+b%26c%3Dd%2F%C3%A9"#),
    ),
    (r#"{{ .a | printf "%s-%s" "x" }}"#, Want::Out(r#"x-A"#)),
    (r#"{{ len (fromJson .json) }}"#, Want::Out(r#"3"#)),
    (
        r#"{{ printf "%d %s %5.2f %q" 3 .a 3.14159 .a }}"#,
        Want::Out(r#"3 A  3.14 "A""#),
    ),
    (r#"{{ printf "%d" .a }}"#, Want::Out(r#"%!d(string=A)"#)),
    (r#"{{ printf "%s" 5 }}"#, Want::Out(r#"%!s(int=5)"#)),
    (
        r#"{{ printf "%v %v %v" 1 1.5 true }}"#,
        Want::Out(r#"1 1.5 true"#),
    ),
    (
        r#"{{ printf "%x %X %o %b" 255 255 8 5 }}"#,
        Want::Out(r#"ff FF 10 101"#),
    ),
    (r#"{{ printf "%x" .a }}"#, Want::Out(r#"41"#)),
    (
        r#"{{ printf "%5s|%-5s|%05d|%+d" "ab" "ab" 42 5 }}"#,
        Want::Out(r#"   ab|ab   |00042|+5"#),
    ),
    (
        r#"{{ printf "%e %E %g" 1234.5678 0.000012 1e21 }}"#,
        Want::Out(r#"1.234568e+03 1.200000E-05 1e+21"#),
    ),
    (
        r#"{{ printf "%.3g %g %g" 1234.5678 100000.0 1000000.0 }}"#,
        Want::Out(r#"1.23e+03 100000 1e+06"#),
    ),
    (
        r#"{{ printf "%t %t" true 1 }}"#,
        Want::Out(r#"true %!t(int=1)"#),
    ),
    (r#"{{ printf "100%%" }}"#, Want::Out(r#"100%"#)),
    (r#"{{ printf "%d %d" 1 }}"#, Want::Out(r#"1 %!d(MISSING)"#)),
    (r#"{{ printf "%d" 1 2 }}"#, Want::Out(r#"1%!(EXTRA int=2)"#)),
    (r#"{{ printf "%q" 65 }}"#, Want::Out(r#"'A'"#)),
    (r#"{{ printf "%c" 65 }}"#, Want::Out(r#"A"#)),
    (
        r#"{{ printf "%8.3f|%-8.2f|" 3.14159 2.5 }}"#,
        Want::Out(r#"   3.142|2.50    |"#),
    ),
    (r#"{{ printf "%05s" "ab" }}"#, Want::Out(r#"000ab"#)),
    (r#"{{ printf "%.2s" "abcdef" }}"#, Want::Out(r#"ab"#)),
    (
        r#"{{ printf "%s" __timestamp__ }}"#,
        Want::Out(r#"2023-01-15 16:08:09.902345678 +0000 UTC"#),
    ),
    (r#"{{ printf "%T %T" 1 .a }}"#, Want::Out(r#"int string"#)),
    (
        r#"{{ printf "%v" (fromJson .json) }}"#,
        Want::Out(r#"map[x:[1 a true] y:2.5 z:map[k:v]]"#),
    ),
    (r#"{{ printf "%6.2f%%" 12.345 }}"#, Want::Out(r#" 12.35%"#)),
    (r#"{{ printf "%x" -255 }}"#, Want::Out(r#"-ff"#)),
    (r#"{{ printf "%z" 1 }}"#, Want::Out(r#"%!z(int=1)"#)),
    (
        r#"{{ printf "%.0f %.1f" 2.5 0.05 }}"#,
        Want::Out(r#"2 0.1"#),
    ),
    (r#"{{ printf "%s" nil }}"#, Want::Out(r#"%!s(<nil>)"#)),
    (r#"{{ ToLower .msg }}"#, Want::Out(r#"hello world"#)),
    (r#"{{ ToUpper .msg }}"#, Want::Out(r#"HELLO WORLD"#)),
    (
        r#"{{ Replace .msg "l" "L" 2 }}"#,
        Want::Out(r#"HeLLo World"#),
    ),
    (
        r#"{{ Replace .msg "l" "L" -1 }}"#,
        Want::Out(r#"HeLLo WorLd"#),
    ),
    (r#"{{ Trim .spaces " " }}"#, Want::Out(r#"pad"#)),
    (r#"{{ TrimLeft .spaces " p" }}"#, Want::Out(r#"ad  "#)),
    (r#"{{ TrimRight .spaces " d" }}"#, Want::Out(r#"  pa"#)),
    (
        r#"{{ TrimPrefix .path "/api" }}"#,
        Want::Out(r#"/v1/users/123"#),
    ),
    (
        r#"{{ TrimSuffix .path "123" }}"#,
        Want::Out(r#"/api/v1/users/"#),
    ),
    (r#"{{ TrimSpace .spaces }}|"#, Want::Out(r#"pad|"#)),
    (
        r#"{{ regexReplaceAll "(\\d+)" .path "<$1>" }}"#,
        Want::Out(r#"/api/v<1>/users/<123>"#),
    ),
    (
        r#"{{ regexReplaceAll "(?P<id>\\d+)" .path "${id}x" }}"#,
        Want::Out(r#"/api/v1x/users/123x"#),
    ),
    (
        r#"{{ regexReplaceAll "(\\d+)" .path "$1x" }}"#,
        Want::Out(r#"/api/v/users/"#),
    ),
    (
        r#"{{ regexReplaceAllLiteral "\\d+" .path "$1" }}"#,
        Want::Out(r#"/api/v$1/users/$1"#),
    ),
    (
        r#"{{ regexReplaceAll "(" .a "x" }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <regexReplaceAll "(" .a "x">: error calling regexReplaceAll: error parsing regexp: missing closing ): `(`"#,
        ),
    ),
    (r#"{{ count "l" .msg }}"#, Want::Out(r#"3"#)),
    (
        r#"{{ count "[" .msg }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <count "[" .msg>: error calling count: error parsing regexp: missing closing ]: `[`"#,
        ),
    ),
    (
        r#"{{ urlencode .url }}"#,
        Want::Out(r#"a+b%26c%3Dd%2F%C3%A9"#),
    ),
    (r#"{{ urldecode "a+b%20c%2F" }}"#, Want::Out(r#"a b c/"#)),
    (
        r#"{{ urldecode "%zz" }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <urldecode "%zz">: error calling urldecode: invalid URL escape "%zz""#,
        ),
    ),
    (r#"{{ bytes .size }}"#, Want::Out(r#"10000"#)),
    (r#"{{ bytes "1.5MiB" }}"#, Want::Out(r#"1.572864e+06"#)),
    (r#"{{ duration .dur }}"#, Want::Out(r#"5400"#)),
    (r#"{{ duration_seconds "250ms" }}"#, Want::Out(r#"0.25"#)),
    (
        r#"{{ duration "bogus" }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <duration "bogus">: error calling duration: time: invalid duration "bogus""#,
        ),
    ),
    (r#"{{ alignLeft 5 .a }}|"#, Want::Out(r#"A    |"#)),
    (r#"{{ alignRight 5 .a }}|"#, Want::Out(r#"    A|"#)),
    (r#"{{ alignLeft 3 .msg }}"#, Want::Out(r#"Hel"#)),
    (r#"{{ alignRight 3 .msg }}"#, Want::Out(r#"rld"#)),
    (r#"{{ __line__ }}"#, Want::Out(r#"the original line"#)),
    (
        r#"{{ __line__ | ToUpper }}"#,
        Want::Out(r#"THE ORIGINAL LINE"#),
    ),
    (
        r#"{{ __timestamp__ }}"#,
        Want::Out(r#"2023-01-15 16:08:09.902345678 +0000 UTC"#),
    ),
    (
        r#"{{ __timestamp__ | unixEpoch }}"#,
        Want::Out(r#"1673798889"#),
    ),
    (
        r#"{{ __timestamp__ | unixEpochMillis }}"#,
        Want::Out(r#"1673798889902"#),
    ),
    (
        r#"{{ __timestamp__ | unixEpochNanos }}"#,
        Want::Out(r#"1673798889902345678"#),
    ),
    (
        r#"{{ unixToTime .ts }}"#,
        Want::Out(r#"2023-01-15 16:08:09 +0000 UTC"#),
    ),
    (
        r#"{{ unixToTime .tsms }}"#,
        Want::Out(r#"2023-01-15 16:08:09.902 +0000 UTC"#),
    ),
    (
        r#"{{ unixToTime "19373" }}"#,
        Want::Out(r#"2023-01-16 00:00:00 +0000 UTC"#),
    ),
    (
        r#"{{ unixToTime "123" }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <unixToTime "123">: error calling unixToTime: unable to parse time '123': %!w(<nil>)"#,
        ),
    ),
    (
        r#"{{ unixToTime "abc" }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <unixToTime "abc">: error calling unixToTime: unable to parse time 'abc': strconv.ParseInt: parsing "abc": invalid syntax"#,
        ),
    ),
    (
        r#"{{ __timestamp__ | date "2006-01-02T15:04:05.000Z07:00" }}"#,
        Want::Out(r#"2023-01-15T16:08:09.902Z"#),
    ),
    (
        r#"{{ date "Mon Jan _2 15:04:05 MST 2006" __timestamp__ }}"#,
        Want::Out(r#"Sun Jan 15 16:08:09 UTC 2023"#),
    ),
    (
        r#"{{ date "02/01/06 03:04:05PM .999999" __timestamp__ }}"#,
        Want::Out(r#"15/01/23 04:08:09PM .902345"#),
    ),
    (
        r#"{{ date "Monday January 2 2006 pm 002 __2" __timestamp__ }}"#,
        Want::Out(r#"Sunday January 15 2023 pm 015  15"#),
    ),
    (r#"{{ date "2006" 86400 }}"#, Want::Out(r#"1970"#)),
    (
        r#"{{ toDate "2006-01-02 15:04:05" .date }}"#,
        Want::Out(r#"2023-05-06 10:11:12 +0000 UTC"#),
    ),
    (
        r#"{{ toDate "2006-01-02" "bogus" }}"#,
        Want::Out(r#"0001-01-01 00:00:00 +0000 UTC"#),
    ),
    (
        r#"{{ toDate "2006-01-02T15:04:05Z07:00" "2023-05-06T10:11:12+02:00" }}"#,
        Want::Out(r#"2023-05-06 10:11:12 +0200 +0200"#),
    ),
    (
        r#"{{ (toDate "2006-01-02T15:04:05.999Z07:00" "2023-05-06T10:11:12.5Z") | unixEpochMillis }}"#,
        Want::Out(r#"1683367872500"#),
    ),
    (
        r#"{{ toDateInZone "2006-01-02" "UTC" "2023-05-06" }}"#,
        Want::Out(r#"2023-05-06 00:00:00 +0000 UTC"#),
    ),
    (
        r#"{{ toDate "Jan 2 2006 3:04pm" "Feb 3 2021 4:05pm" }}"#,
        Want::Out(r#"2021-02-03 16:05:00 +0000 UTC"#),
    ),
    (r#"{{ (unixToTime .ts).Unix }}"#, Want::Out(r#"1673798889"#)),
    (r#"{{ b64enc .msg }}"#, Want::Out(r#"SGVsbG8gV29ybGQ="#)),
    (r#"{{ b64dec .b64 }}"#, Want::Out(r#"hello world"#)),
    (
        r#"{{ b64dec "!!" }}"#,
        Want::Out(r#"illegal base64 data at input byte 0"#),
    ),
    (r#"{{ lower .msg }}"#, Want::Out(r#"hello world"#)),
    (r#"{{ upper .msg }}"#, Want::Out(r#"HELLO WORLD"#)),
    (
        r#"{{ title "hello wide_world foo-bar" }}"#,
        Want::Out(r#"Hello Wide_world Foo-Bar"#),
    ),
    (r#"{{ trunc 5 .msg }}"#, Want::Out(r#"Hello"#)),
    (r#"{{ trunc -5 .msg }}"#, Want::Out(r#"World"#)),
    (r#"{{ trunc 50 .msg }}"#, Want::Out(r#"Hello World"#)),
    (r#"{{ substr 0 5 .msg }}"#, Want::Out(r#"Hello"#)),
    (r#"{{ substr 6 -1 .msg }}"#, Want::Out(r#"World"#)),
    (r#"{{ substr 6 100 .msg }}"#, Want::Out(r#"World"#)),
    (
        r#"{{ substr 3 1 .msg }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <substr 3 1 .msg>: error calling substr: runtime error: slice bounds out of range [3:1]"#,
        ),
    ),
    (r#"{{ contains "World" .msg }}"#, Want::Out(r#"true"#)),
    (r#"{{ hasPrefix "Hell" .msg }}"#, Want::Out(r#"true"#)),
    (r#"{{ hasSuffix "x" .msg }}"#, Want::Out(r#"false"#)),
    (
        r#"{{ indent 2 .multi }}"#,
        Want::Out(
            r#"  l1
  l2"#,
        ),
    ),
    (
        r#"{{ nindent 2 .multi }}"#,
        Want::Out(
            r#"
  l1
  l2"#,
        ),
    ),
    (r#"{{ replace "l" "L" .msg }}"#, Want::Out(r#"HeLLo WorLd"#)),
    (
        r#"{{ .msg | replace "o" "0" }}"#,
        Want::Out(r#"Hell0 W0rld"#),
    ),
    (r#"{{ repeat 3 .a }}"#, Want::Out(r#"AAA"#)),
    (r#"{{ trim .spaces }}|"#, Want::Out(r#"pad|"#)),
    (r#"{{ trimAll "ld" .msg }}"#, Want::Out(r#"Hello Wor"#)),
    (r#"{{ trimSuffix "ld" .msg }}"#, Want::Out(r#"Hello Wor"#)),
    (r#"{{ trimPrefix "He" .msg }}"#, Want::Out(r#"llo World"#)),
    (r#"{{ int .n }}"#, Want::Out(r#"42"#)),
    (r#"{{ int .f }}"#, Want::Out(r#"3"#)),
    (r#"{{ int .oct }}"#, Want::Out(r#"8"#)),
    (r#"{{ int .hex }}"#, Want::Out(r#"31"#)),
    (r#"{{ int "abc" }}"#, Want::Out(r#"0"#)),
    (r#"{{ float64 .f }}"#, Want::Out(r#"3.14159"#)),
    (r#"{{ float64 .n }}"#, Want::Out(r#"42"#)),
    (r#"{{ add 1 .n }}"#, Want::Out(r#"43"#)),
    (r#"{{ add .n .neg 3 }}"#, Want::Out(r#"38"#)),
    (r#"{{ sub .n 2 }}"#, Want::Out(r#"40"#)),
    (r#"{{ mul 2 .n 3 }}"#, Want::Out(r#"252"#)),
    (r#"{{ div .n 5 }}"#, Want::Out(r#"8"#)),
    (r#"{{ mod .n 5 }}"#, Want::Out(r#"2"#)),
    (
        r#"{{ div 1 0 }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <div 1 0>: error calling div: runtime error: integer divide by zero"#,
        ),
    ),
    (r#"{{ addf 1.1 2.2 }}"#, Want::Out(r#"3.3"#)),
    (r#"{{ subf .f 0.14159 }}"#, Want::Out(r#"3"#)),
    (r#"{{ mulf 1.1 3 }}"#, Want::Out(r#"3.3"#)),
    (r#"{{ divf 1 3 }}"#, Want::Out(r#"0.3333333333333333"#)),
    (r#"{{ divf 10 4 }}"#, Want::Out(r#"2.5"#)),
    (r#"{{ max 1 .n 7 }}"#, Want::Out(r#"42"#)),
    (r#"{{ min 1 .neg }}"#, Want::Out(r#"-7"#)),
    (r#"{{ maxf 1.5 .f }}"#, Want::Out(r#"3.14159"#)),
    (r#"{{ minf .f 2 }}"#, Want::Out(r#"2"#)),
    (r#"{{ ceil .f }}"#, Want::Out(r#"4"#)),
    (r#"{{ floor .f }}"#, Want::Out(r#"3"#)),
    (r#"{{ round .f 2 }}"#, Want::Out(r#"3.14"#)),
    (r#"{{ round 2.5 0 }}"#, Want::Out(r#"3"#)),
    (r#"{{ round 1.2345 3 0.4 }}"#, Want::Out(r#"1.235"#)),
    (r#"{{ add 1 2 | printf "%05d" }}"#, Want::Out(r#"00003"#)),
    (r#"{{ .n | int | add 1 }}"#, Want::Out(r#"43"#)),
    (r#"{{ addf 0.1 0.2 }}"#, Want::Out(r#"0.3"#)),
    (r#"{{ mulf 1e20 10 }}"#, Want::Out(r#"1e+21"#)),
    (r#"{{ divf .f 2 }}"#, Want::Out(r#"1.570795"#)),
    (r#"{{ ceil 1e21 }}"#, Want::Out(r#"1e+21"#)),
    (r#"{{ .missing | default "dflt" }}"#, Want::Out(r#"dflt"#)),
    (r#"{{ .a | default "dflt" }}"#, Want::Out(r#"A"#)),
    (r#"{{ default "x" .empty }}"#, Want::Out(r#"x"#)),
    (r#"{{ default "x" 0 }}"#, Want::Out(r#"x"#)),
    (r#"{{ default "x" }}"#, Want::Out(r#"x"#)),
    (
        r#"{{ fromJson .json }}"#,
        Want::Out(r#"map[x:[1 a true] y:2.5 z:map[k:v]]"#),
    ),
    (r#"{{ (fromJson .json).y }}"#, Want::Out(r#"2.5"#)),
    (r#"{{ (fromJson .json).z.k }}"#, Want::Out(r#"v"#)),
    (r#"{{ (fromJson .json).nope }}"#, Want::Out(r#"<no value>"#)),
    (r#"{{ fromJson "bad" }}"#, Want::Out(r#"<no value>"#)),
    (
        r#"{{ trunc (add 1 2) .a }}"#,
        Want::Exec(
            r#"template: line:1:16: executing "line" at <2>: wrong type for value; expected int; got int64"#,
        ),
    ),
    (
        r#"{{ trunc .n .a }}"#,
        Want::Exec(
            r#"template: line:1:9: executing "line" at <.n>: wrong type for value; expected int; got string"#,
        ),
    ),
    (
        r#"{{ ToLower 1 }}"#,
        Want::Exec(r#"template: line:1:11: executing "line" at <1>: expected string; found 1"#),
    ),
    (
        r#"{{ .a | .msg }}"#,
        Want::Exec(
            r#"template: line:1:8: executing "line" at <.msg>: msg is not a method but has arguments"#,
        ),
    ),
    (
        r#"{{ index .msg 100 }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <index .msg 100>: error calling index: index out of range: 100"#,
        ),
    ),
    (
        r#"{{ len 3 }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <len 3>: error calling len: len of type int"#,
        ),
    ),
    (
        r#"{{ eq .a 1 }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <eq .a 1>: error calling eq: incompatible types for comparison: string and int"#,
        ),
    ),
    (
        r#"{{ printf }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <printf>: wrong number of args for printf: want at least 1 got 0"#,
        ),
    ),
    (
        r#"{{ upper }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <upper>: wrong number of args for upper: want 1 got 0"#,
        ),
    ),
    (
        r#"{{ .missing.x }}"#,
        Want::Exec(
            r#"template: line:1:11: executing "line" at <.missing.x>: can't evaluate field x in type string"#,
        ),
    ),
    (r#"{{ (fromJson "null").x }}"#, Want::Out(r#"<no value>"#)),
    (
        r#"{{ .a "#,
        Want::Parse(r#"template: line:1: unclosed action"#),
    ),
    (
        r#"{{ foo .a }}"#,
        Want::Parse(r#"template: line:1: function "foo" not defined"#),
    ),
    (
        r#"{{ if .a }}x{{ end }"#,
        Want::Parse(r#"template: line:1: unexpected "}" in end"#),
    ),
    (
        r#"{{ if .a }}x"#,
        Want::Parse(r#"template: line:1: unexpected EOF"#),
    ),
    (
        r#"{{ end }}"#,
        Want::Parse(r#"template: line:1: unexpected {{end}}"#),
    ),
    (
        r#"{{ else }}"#,
        Want::Parse(r#"template: line:1: unexpected {{else}}"#),
    ),
    (
        r#"{{ .a | 3 }}"#,
        Want::Parse(r#"template: line:1: non executable command in pipeline stage 2"#),
    ),
    (
        r#"{{ $x }}"#,
        Want::Parse(r#"template: line:1: undefined variable "$x""#),
    ),
    (
        r#"{{ ( .a }}"#,
        Want::Parse(r#"template: line:1: unclosed left paren"#),
    ),
    (
        r#"{{ .a) }}"#,
        Want::Parse(r#"template: line:1: unexpected right paren"#),
    ),
    (
        r#"{{ "abc }}"#,
        Want::Parse(r#"template: line:1: unterminated quoted string"#),
    ),
    (
        r#"{{ 3x }}"#,
        Want::Parse(r#"template: line:1: bad number syntax: "3x""#),
    ),
    (
        r#"{{ }}"#,
        Want::Parse(r#"template: line:1: missing value for command"#),
    ),
    (
        r#"{{ /* c */ }}"#,
        Want::Parse(r#"template: line:1: unexpected "/" in command"#),
    ),
    (
        r#"{{/* unclosed"#,
        Want::Parse(r#"template: line:1: unclosed comment"#),
    ),
    (r#"{{ .a | }}"#, Want::Out(r#"A"#)),
    (
        r#"{{ if }}x{{end}}"#,
        Want::Parse(r#"template: line:1: missing value for if"#),
    ),
    (
        r#"{{ range $a, $b, $c := .x }}{{end}}"#,
        Want::Parse(r#"template: line:1: too many declarations in range"#),
    ),
    (
        r#"{{ break }}"#,
        Want::Parse(r#"template: line:1: {{break}} outside {{range}}"#),
    ),
    (
        r#"{{ .a.b.c }}"#,
        Want::Exec(
            r#"template: line:1:5: executing "line" at <.a.b.c>: can't evaluate field b in type string"#,
        ),
    ),
    (
        r#"{{ 1 .a }}"#,
        Want::Exec(
            r#"template: line:1:3: executing "line" at <1>: can't give argument to non-function 1"#,
        ),
    ),
    (
        r#"a
b{{ .a
"#,
        Want::Parse(r#"template: line:3: unclosed action started at line:2"#),
    ),
    (
        r#"{{ x := 1 }}"#,
        Want::Parse(r#"template: line:1: function "x" not defined"#),
    ),
    (
        r#"{{ .a b }}"#,
        Want::Parse(r#"template: line:1: function "b" not defined"#),
    ),
    (
        r#"{{ 'ab' }}"#,
        Want::Parse(r#"template: line:1: malformed character constant: 'ab'"#),
    ),
    (
        r#"{{ :x }}"#,
        Want::Parse(r#"template: line:1: expected :="#),
    ),
    (
        r#"{{ "a".b }}"#,
        Want::Parse(r#"template: line:1: unexpected . after term "\"a\"""#),
    ),
    (r#"{{ printf "%s" .a | }}"#, Want::Out(r#"A"#)),
];
