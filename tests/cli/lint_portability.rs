//! The portability table `chatplate lint` reads when no engine is named
//! (crates/core/src/lint/portability.json): one small probe template per construct
//! (a filter, a test, a method, a tag, a loop attribute, a syntax), rendered by the real
//! engines through `chatplate compare` (bare MiniJinja, @huggingface/jinja on Node, a
//! llama-server started with the probe as its template) and set beside transformers'
//! render. The test fails when the committed table and the engines disagree;
//! `CHATPLATE_BLESS_PORTABILITY=1` writes the table from them.

use std::collections::BTreeMap;
use std::path::Path;

use chatplate_core::compare::causes::classify;
use chatplate_core::lint::portability::{ConstructOutcomes, PortabilityTable};
use serde_json::{json, Value as Json};

use crate::common::binary::{command, stdout};
use crate::common::repo;
use crate::compare_cli::node_path;
use crate::llama_support;

/// Constructs chat templates use, each with a probe that prints what it makes.
const PROBES: &[(&str, &str)] = &[
    (
        "filter:tojson",
        "{{ {'a': [1, 'é', none, true]} | tojson }}",
    ),
    (
        "keyword:tojson.indent",
        "{{ {'a': [1, 2]} | tojson(indent=2) }}",
    ),
    (
        "keyword:tojson.ensure_ascii",
        "{{ {'a': 'é'} | tojson(ensure_ascii=False) }}",
    ),
    (
        "keyword:tojson.separators",
        "{{ {'a': 1} | tojson(separators=(',', ':')) }}",
    ),
    ("filter:trim", "[{{ '  x \n' | trim }}]"),
    (
        "filter:length",
        "{{ messages | length }}{{ 'abc' | length }}",
    ),
    ("filter:string", "{{ 1 | string }}{{ 'a' | string }}"),
    (
        "filter:default",
        "{{ undefined_name | default('d') }}{{ none | default('x', true) }}",
    ),
    (
        "filter:items",
        "{% for k, v in {'a': 1, 'b': 2} | items %}{{ k }}={{ v }};{% endfor %}",
    ),
    ("filter:join", "{{ ['a', 'b'] | join(', ') }}"),
    ("filter:list", "{{ [1, 2] | list | length }}"),
    (
        "filter:map",
        "{{ messages | map(attribute='role') | join(',') }}",
    ),
    (
        "filter:selectattr",
        "{{ messages | selectattr('role', 'equalto', 'user') | list | length }}",
    ),
    (
        "filter:rejectattr",
        "{{ messages | rejectattr('role', 'equalto', 'user') | list | length }}",
    ),
    (
        "filter:reject",
        "{{ [1, none, 2] | reject('none') | join(',') }}",
    ),
    (
        "filter:dictsort",
        "{% for k, v in {'b': 1, 'a': 2} | dictsort %}{{ k }}{{ v }}{% endfor %}",
    ),
    ("filter:safe", "{{ '<b>' | safe }}"),
    ("filter:lower", "{{ 'AbC' | lower }}"),
    ("filter:upper", "{{ 'AbC' | upper }}"),
    ("filter:replace", "{{ 'a-b-c' | replace('-', '+') }}"),
    ("filter:int", "{{ '42' | int + 1 }}"),
    ("filter:indent", "{{ 'a\nb' | indent(2) }}"),
    ("filter:unique", "{{ [1, 2, 1] | unique | join(',') }}"),
    ("filter:sort", "{{ [3, 1, 2] | sort | join(',') }}"),
    ("filter:first", "{{ [3, 1] | first }}"),
    ("filter:last", "{{ [3, 1] | last }}"),
    ("filter:capitalize", "{{ 'hello world' | capitalize }}"),
    ("filter:title", "{{ 'hello world' | title }}"),
    ("filter:abs", "{{ -3 | abs }}"),
    ("filter:round", "{{ 2.567 | round(1) }}"),
    ("filter:sum", "{{ [1, 2, 3] | sum }}"),
    ("filter:wordcount", "{{ 'a b c' | wordcount }}"),
    ("filter:center", "[{{ 'a' | center(5) }}]"),
    ("filter:truncate", "{{ 'hello world foo' | truncate(9) }}"),
    ("filter:escape", "{{ '<a & b>' | escape }}"),
    ("filter:format", "{{ '%s-%d' | format('a', 3) }}"),
    (
        "filter:batch",
        "{% for b in [1, 2, 3] | batch(2) %}{{ b | join(',') }};{% endfor %}",
    ),
    (
        "filter:groupby",
        "{% for g in messages | groupby('role') %}{{ g.grouper }}{% endfor %}",
    ),
    ("filter:float", "{{ '1.5' | float }}"),
    ("filter:attr", "{{ messages[0] | attr('role') }}"),
    (
        "test:defined",
        "{% if messages is defined %}y{% else %}n{% endif %}",
    ),
    (
        "test:undefined",
        "{% if nope is undefined %}y{% else %}n{% endif %}",
    ),
    ("test:none", "{% if none is none %}y{% else %}n{% endif %}"),
    (
        "test:string",
        "{% if 'a' is string %}y{% else %}n{% endif %}",
    ),
    (
        "test:mapping",
        "{% if {} is mapping %}y{% else %}n{% endif %}",
    ),
    (
        "test:iterable",
        "{% if [] is iterable %}y{% else %}n{% endif %}",
    ),
    (
        "test:sequence",
        "{% if [] is sequence %}y{% else %}n{% endif %}",
    ),
    ("test:number", "{% if 1 is number %}y{% else %}n{% endif %}"),
    (
        "test:boolean",
        "{% if true is boolean %}y{% else %}n{% endif %}",
    ),
    ("test:true", "{% if true is true %}y{% else %}n{% endif %}"),
    (
        "test:false",
        "{% if false is false %}y{% else %}n{% endif %}",
    ),
    (
        "test:integer",
        "{% if 1 is integer %}y{% else %}n{% endif %}",
    ),
    ("test:float", "{% if 1.5 is float %}y{% else %}n{% endif %}"),
    (
        "test:equalto",
        "{% if 1 is equalto 1 %}y{% else %}n{% endif %}",
    ),
    ("test:in", "{% if 'a' is in ['a'] %}y{% else %}n{% endif %}"),
    ("method:strip()", "[{{ '  x  '.strip() }}]"),
    ("method:strip(x)", "[{{ 'xxaxx'.strip('x') }}]"),
    ("method:lstrip()", "[{{ '  x  '.lstrip() }}]"),
    ("method:lstrip(x)", "[{{ 'xxaxx'.lstrip('x') }}]"),
    ("method:rstrip()", "[{{ '  x  '.rstrip() }}]"),
    ("method:rstrip(x)", "[{{ 'xxaxx'.rstrip('x') }}]"),
    ("method:split()", "{{ ' a  b '.split() | join('|') }}"),
    ("method:split(x)", "{{ 'a,b,,c'.split(',') | join('|') }}"),
    (
        "method:startswith(x)",
        "{% if 'abc'.startswith('ab') %}y{% else %}n{% endif %}",
    ),
    (
        "method:endswith(x)",
        "{% if 'abc'.endswith('bc') %}y{% else %}n{% endif %}",
    ),
    ("method:replace(x)", "{{ 'a-b'.replace('-', '+') }}"),
    (
        "method:get(x)",
        "{{ {'a': 1}.get('a') }}{{ {'a': 1}.get('b', 'x') }}",
    ),
    (
        "method:items()",
        "{% for k, v in {'a': 1}.items() %}{{ k }}{{ v }}{% endfor %}",
    ),
    ("method:keys()", "{{ {'a': 1, 'b': 2}.keys() | join(',') }}"),
    (
        "method:values()",
        "{{ {'a': 1, 'b': 2}.values() | join(',') }}",
    ),
    (
        "method:append(x)",
        "{% set l = [] %}{% set _ = l.append(1) %}{{ l | length }}",
    ),
    (
        "method:pop()",
        "{% set l = [1, 2] %}{{ l.pop() }}{{ l | length }}",
    ),
    ("method:upper()", "{{ 'ab'.upper() }}"),
    ("method:lower()", "{{ 'AB'.lower() }}"),
    ("method:title()", "{{ 'ab cd'.title() }}"),
    ("method:format(x)", "{{ '{}-{}'.format('a', 1) }}"),
    ("method:join(x)", "{{ '-'.join(['a', 'b']) }}"),
    ("method:count(x)", "{{ 'banana'.count('a') }}"),
    ("method:find(x)", "{{ 'banana'.find('n') }}"),
    (
        "method:splitlines()",
        "{{ 'a\nb'.splitlines() | join('|') }}",
    ),
    (
        "method:isdigit()",
        "{% if '12'.isdigit() %}y{% else %}n{% endif %}",
    ),
    (
        "loop:first",
        "{% for m in [1, 2] %}{% if loop.first %}f{% endif %}{{ m }}{% endfor %}",
    ),
    (
        "loop:last",
        "{% for m in [1, 2] %}{{ m }}{% if loop.last %}l{% endif %}{% endfor %}",
    ),
    (
        "loop:index",
        "{% for m in [1, 2] %}{{ loop.index }}{% endfor %}",
    ),
    (
        "loop:index0",
        "{% for m in [1, 2] %}{{ loop.index0 }}{% endfor %}",
    ),
    (
        "loop:length",
        "{% for m in [1, 2] %}{{ loop.length }}{% endfor %}",
    ),
    (
        "loop:revindex0",
        "{% for m in [1, 2] %}{{ loop.revindex0 }}{% endfor %}",
    ),
    (
        "loop:previtem",
        "{% for m in [1, 2] %}{{ loop.previtem }}{% endfor %}",
    ),
    (
        "loop:nextitem",
        "{% for m in [1, 2] %}{{ loop.nextitem }}{% endfor %}",
    ),
    (
        "loop:cycle",
        "{% for m in [1, 2, 3] %}{{ loop.cycle('a', 'b') }}{% endfor %}",
    ),
    (
        "tag:generation",
        "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}",
    ),
    (
        "tag:break",
        "{% for m in [1, 2, 3] %}{% if m == 2 %}{% break %}{% endif %}{{ m }}{% endfor %}",
    ),
    (
        "tag:continue",
        "{% for m in [1, 2, 3] %}{% if m == 2 %}{% continue %}{% endif %}{{ m }}{% endfor %}",
    ),
    (
        "tag:macro",
        "{% macro f(x, y='d') %}{{ x }}{{ y }}{% endmacro %}{{ f(1) }}{{ f(1, y=2) }}",
    ),
    (
        "tag:call",
        "{% macro w() %}[{{ caller() }}]{% endmacro %}{% call w() %}in{% endcall %}",
    ),
    ("tag:filter", "{% filter upper %}abc{% endfilter %}"),
    (
        "tag:set",
        "{% set x = 1 %}{% set y %}block{% endset %}{{ x }}{{ y }}",
    ),
    ("tag:with", "{% with x = 1 %}{{ x }}{% endwith %}"),
    (
        "function:namespace",
        "{% set ns = namespace(a=1) %}{% set ns.a = ns.a + 1 %}{{ ns.a }}",
    ),
    (
        "function:range",
        "{{ range(3) | join(',') }};{{ range(1, 6, 2) | join(',') }}",
    ),
    (
        "function:raise_exception",
        "{% if messages | length > 5 %}{{ raise_exception('too many') }}{% endif %}ok",
    ),
    ("function:strftime_now", "{{ strftime_now('%Y') | length }}"),
    ("function:dict", "{{ dict(a=1).a }}"),
    (
        "function:cycler",
        "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}",
    ),
    (
        "function:joiner",
        "{% set j = joiner(',') %}{{ j() }}a{{ j() }}b",
    ),
    (
        "syntax:slice-step",
        "{{ [1, 2, 3][::-1] | join(',') }};{{ 'abc'[::2] }}",
    ),
    ("syntax:percent-format", "{{ '%s is %d' % ('a', 3) }}"),
];

/// Around each probe: a ChatML loop, so that llama-server, which applies its template to
/// a probe conversation at startup, takes the probe for a chat template.
const CHAT: &str =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
                    {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/// llama.cpp's outcome when llama-server will not start with the probe as its template.
const REFUSED: &str = "raises: llama-server refuses the template at startup";

/// The session `chatplate compare` renders each probe in: one user message.
fn session(dir: &Path) {
    let session = json!({"version": 1, "template": {"path": "probe.jinja"},
        "messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true});
    std::fs::write(dir.join("session.json"), session.to_string()).unwrap();
}

/// What `engine` did with the probe, next to transformers' render.
fn outcome(reference: &Json, render: &Json) -> String {
    let result = |r: &Json| match r.get("prompt").and_then(Json::as_str) {
        Some(prompt) => Ok(prompt.to_string()),
        None => Err(r["error"].as_str().unwrap_or_default().to_string()),
    };
    match classify(&result(reference), &result(render)) {
        None => "ok".into(),
        Some(cause) if result(render).is_ok() => format!("differs: {}", cause.label()),
        Some(cause) => cause.label().to_string(),
    }
}

/// Every probe through `chatplate compare` with the given engines (a llama-server
/// started for each probe, whose template it must be), as table rows.
fn measure(node: &str, llama: &(std::path::PathBuf, std::path::PathBuf)) -> PortabilityTable {
    let dir = tempfile::tempdir().unwrap();
    session(dir.path());
    let mut table = PortabilityTable::default();
    for (construct, probe) in PROBES {
        let template = dir.path().join("probe.jinja");
        std::fs::write(&template, format!("{probe}\n{CHAT}")).unwrap();
        let log = dir.path().join("llama.log");
        let server = llama_support::try_start(llama, Some(&template), &log);
        let mut args = vec![
            "compare",
            "session.json",
            "--json",
            "--engine",
            "minijinja",
            "--engine",
            "hf-jinja",
        ];
        if let Ok(server) = &server {
            args.extend(["--engine", server.url.as_str()]);
        }
        let output = command(&args, dir.path())
            .env("NODE_PATH", node)
            .output()
            .unwrap();
        let report: Json = serde_json::from_str(&stdout(&output))
            .unwrap_or_else(|e| panic!("{construct}: {e}: {}", stdout(&output)));
        let renders = report["renders"].as_array().unwrap();
        let mut outcomes = BTreeMap::new();
        for render in &renders[1..] {
            let engine = render["engine"].as_str().unwrap().to_string();
            table.engines.insert(
                engine.clone(),
                render["version"].as_str().unwrap_or("unknown").to_string(),
            );
            outcomes.insert(engine, outcome(&renders[0], render));
        }
        if server.is_err() {
            // llama-server refused the template at startup. Its message is left out: the
            // server logs on a thread of its own and may exit before writing it.
            outcomes.insert("llama.cpp".into(), REFUSED.into());
        }
        table.constructs.insert(
            (*construct).to_string(),
            ConstructOutcomes {
                probe: (*probe).to_string(),
                outcomes,
            },
        );
    }
    table
}

#[test]
fn the_portability_table_is_what_the_engines_do() {
    let test = "the_portability_table_is_what_the_engines_do";
    let (Some(node), Some(llama)) = (node_path(test), llama_support::server_files(test)) else {
        return;
    };
    let measured = measure(&node, &llama);
    let path = repo().join("crates/core/src/lint/portability.json");
    if std::env::var("CHATPLATE_BLESS_PORTABILITY").is_ok_and(|v| v == "1") {
        let text = serde_json::to_string_pretty(&measured).unwrap() + "\n";
        std::fs::write(&path, text).unwrap();
        return;
    }
    let committed = PortabilityTable::committed();
    assert_eq!(
        committed, &measured,
        "crates/core/src/lint/portability.json is not what the engines do now: \
         CHATPLATE_BLESS_PORTABILITY=1 cargo test --test cli portability_table"
    );
}
