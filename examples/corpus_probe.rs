// Temporary probe: renders the conformance corpus directly through the engine.
use chatplate::render::*;
use serde_json::Value as Json;
fn main() {
    let dir = std::path::Path::new("../shared/conformance/dev");
    let manifest: Json = serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap()).unwrap();
    let filter = std::env::args().nth(1).unwrap_or_default();
    let (mut pass, mut fail) = (0, 0);
    for case in manifest["cases"].as_array().unwrap() {
        let t = case["template"].as_str().unwrap();
        let s = case["scenario"].as_str().unwrap();
        if !format!("{t}/{s}").contains(&filter) { continue; }
        let src = std::fs::read_to_string(dir.join(format!("templates/{t}.jinja"))).unwrap();
        let scen: Json = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("scenarios/{s}.json"))).unwrap()).unwrap();
        let conv = Conversation {
            messages: scen["messages"].as_array().unwrap().clone(),
            tools: scen.get("tools").and_then(|t| t.as_array().cloned()),
            documents: None,
            add_generation_prompt: scen["add_generation_prompt"].as_bool().unwrap_or(false),
            continue_final_message: if scen.get("continue_final_message").and_then(|v| v.as_bool()).unwrap_or(false) { ContinueFinal::content() } else { ContinueFinal::Off },
            variables: case["template_kwargs"].as_object().unwrap().clone(),
            clock: Some("2026-01-15T00:00:00".parse().unwrap()),
        };
        let result = CompiledTemplate::compile(&src, Limits::default()).and_then(|c| c.render(&conv));
        let expected_file = dir.join(case["file"].as_str().unwrap());
        let expected = std::fs::read_to_string(&expected_file).unwrap();
        let ok = match (&result, case["outcome"].as_str().unwrap()) {
            (Ok(out), "ok") => *out == expected,
            (Err(_), "error") => true,
            _ => false,
        };
        if ok { pass += 1; } else {
            fail += 1;
            println!("FAIL {t}/{s}: {}", match &result { Ok(o) => { let i = o.bytes().zip(expected.bytes()).position(|(a,b)| a!=b).unwrap_or(o.len().min(expected.len())); format!("mismatch at byte {i}: got {:?} want {:?}", &o.get(i.saturating_sub(30)..(i+40).min(o.len())).unwrap_or(""), expected.get(i.saturating_sub(30)..(i+40).min(expected.len())).unwrap_or("")) }, Err(e) => format!("ERR {e} / expected {}", expected.lines().take(2).collect::<Vec<_>>().join(" | ")) });
        }
    }
    println!("{pass} passed, {fail} failed");
}
