//! The variables a template reads beyond the standard ones, with the default it
//! assumes, from its syntax tree (MiniJinja's parser, as in `render::rewrite`).
//!
//! Which names are inputs comes from `inputs` (names read before the template sets
//! them, globals excluded). The default is found where templates
//! write one: `{% if x is not defined %}{% set x = D %}`, `{% set x = x | default(D) %}`,
//! `x | default(D)` and `x if x is defined else D`. Everything else about a variable
//! (what it changes) is found by rendering, in `switches`.

use std::collections::BTreeMap;

use minijinja::machinery::ast::{CallArg, Expr, Stmt, UnaryOpKind};
use serde_json::Value as Json;

use chatplate_render::syntax_tree::expression_source;
use chatplate_render::syntax_tree::{argument, children};
use chatplate_render::{syntax_config, CompiledTemplate};

/// Variables every chat template gets from `apply_chat_template` itself.
pub const STANDARD_VARIABLES: [&str; 6] = [
    "messages",
    "tools",
    "documents",
    "add_generation_prompt",
    "bos_token",
    "eos_token",
];

/// What a template assumes when a variable is not given.
#[derive(Debug, Clone, PartialEq)]
pub enum VariableDefault {
    /// A constant it sets or falls back to.
    Value(Json),
    /// A computed default, as written in the template.
    Expression(String),
    /// None: the variable is simply undefined (falsy, prints nothing).
    Undefined,
}

/// One input variable.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateVariable {
    /// Its name.
    pub name: String,
    /// The default the template assumes.
    pub default: VariableDefault,
}

/// The non-standard variables `template` reads from its context, sorted by name.
pub fn template_variables(template: &CompiledTemplate) -> Vec<TemplateVariable> {
    let source = template.prepared_source();
    let mut defaults = defaults(source);
    let globals = template.global_names();
    super::inputs::context_reads(source)
        .into_iter()
        .filter(|name| !STANDARD_VARIABLES.contains(&name.as_str()) && !globals.contains(name))
        .map(|name| TemplateVariable {
            default: defaults.remove(&name).unwrap_or(VariableDefault::Undefined),
            name,
        })
        .collect()
}

/// The first default written for each name, in source order.
fn defaults(source: &str) -> BTreeMap<String, VariableDefault> {
    let mut found = Defaults {
        source,
        map: BTreeMap::new(),
    };
    if let Ok(ast) = minijinja::machinery::parse(source, "<template>", syntax_config()) {
        found.stmt(&ast);
    }
    found.map
}

struct Defaults<'s> {
    source: &'s str,
    map: BTreeMap<String, VariableDefault>,
}

impl Defaults<'_> {
    fn record(&mut self, name: &str, expr: &Expr) {
        if self.map.contains_key(name) {
            return;
        }
        let default = match constant(expr) {
            Some(value) => VariableDefault::Value(value),
            None => VariableDefault::Expression(expression_source(expr, self.source).into()),
        };
        self.map.insert(name.to_string(), default);
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Template(t) => self.stmts(&t.children),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::IfCond(i) => {
                if let Some(name) = undefined_test(&i.expr) {
                    if let Some(value) = assignment_in(name, &i.true_body) {
                        self.record(name, value);
                    }
                }
                self.expr(&i.expr);
                self.stmts(&i.true_body);
                self.stmts(&i.false_body);
            }
            Stmt::Set(s) => self.expr(&s.expr),
            Stmt::ForLoop(f) => {
                self.expr(&f.iter);
                self.stmts(&f.body);
                self.stmts(&f.else_body);
            }
            Stmt::WithBlock(w) => {
                w.assignments.iter().for_each(|(_, value)| self.expr(value));
                self.stmts(&w.body);
            }
            Stmt::SetBlock(s) => self.stmts(&s.body),
            Stmt::AutoEscape(a) => self.stmts(&a.body),
            Stmt::FilterBlock(f) => self.stmts(&f.body),
            Stmt::Macro(m) => self.stmts(&m.body),
            Stmt::CallBlock(c) => {
                self.args(&c.call.args);
                self.stmts(&c.macro_decl.body);
            }
            Stmt::Do(d) => self.args(&d.call.args),
            _ => {}
        }
    }

    fn args(&mut self, args: &[CallArg]) {
        for arg in args {
            self.expr(argument(arg));
        }
    }

    /// `x | default(D)` and `x if x is defined else D`, anywhere.
    fn expr(&mut self, expr: &Expr) {
        match expr {
            Expr::Filter(f) if matches!(f.name, "default" | "d") => {
                if let (Some(Expr::Var(var)), Some(CallArg::Pos(value))) = (&f.expr, f.args.first())
                {
                    self.record(var.id, value);
                }
            }
            Expr::IfExpr(i) => {
                if let (Some(name), Expr::Var(var), Some(value)) =
                    (defined_test(&i.test_expr), &i.true_expr, &i.false_expr)
                {
                    if name == var.id {
                        self.record(name, value);
                    }
                }
            }
            _ => {}
        }
        for child in children(expr) {
            self.expr(child);
        }
    }
}

/// `x is defined` → `x`.
fn defined_test<'a>(expr: &Expr<'a>) -> Option<&'a str> {
    match expr {
        Expr::Test(t) if t.name == "defined" => match &t.expr {
            Expr::Var(var) => Some(var.id),
            _ => None,
        },
        _ => None,
    }
}

/// `x is not defined`, `not x is defined`, `x is undefined` → `x`.
fn undefined_test<'a>(expr: &Expr<'a>) -> Option<&'a str> {
    match expr {
        Expr::UnaryOp(u) if matches!(u.op, UnaryOpKind::Not) => defined_test(&u.expr),
        Expr::Test(t) if t.name == "undefined" => match &t.expr {
            Expr::Var(var) => Some(var.id),
            _ => None,
        },
        _ => None,
    }
}

/// The value of the first `{% set name = value %}` in `body`, looking into nested
/// `if` blocks (Llama 3.2: `strftime_now(...)` if defined, else a fixed date).
fn assignment_in<'e, 'a>(name: &str, body: &'e [Stmt<'a>]) -> Option<&'e Expr<'a>> {
    body.iter().find_map(|stmt| match stmt {
        Stmt::Set(s) => match &s.target {
            Expr::Var(var) if var.id == name => Some(&s.expr),
            _ => None,
        },
        Stmt::IfCond(i) => {
            assignment_in(name, &i.true_body).or_else(|| assignment_in(name, &i.false_body))
        }
        _ => None,
    })
}

/// A constant expression as JSON: literals, and lists or maps of literals.
fn constant(expr: &Expr) -> Option<Json> {
    let value = match expr {
        Expr::Const(c) => c.value.clone(),
        Expr::List(l) => l.as_const()?,
        Expr::Map(m) => m.as_const()?,
        _ => return None,
    };
    serde_json::to_value(&value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_render::Limits;
    use serde_json::json;

    fn variables(source: &str) -> Vec<(String, VariableDefault)> {
        let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
        template_variables(&template)
            .into_iter()
            .map(|v| (v.name, v.default))
            .collect()
    }

    #[test]
    fn finds_inputs_and_their_written_defaults() {
        let source = "{{ bos_token }}{% if not date_string is defined %}{% set date_string = '26 Jul 2024' %}{% endif %}\
            {% set tools_in_user_message = tools_in_user_message | default(true) %}\
            {% set e = effort if effort is defined else ['low'] %}\
            {% if enable_thinking is defined and enable_thinking %}x{% endif %}\
            {% set local = 1 %}{{ local }}{{ raise_exception('no') if custom else '' }}\
            {% for m in messages %}{{ m.content }}{% endfor %}{{ strftime_now('%d') }}";
        assert_eq!(
            variables(source),
            vec![
                ("custom".into(), VariableDefault::Undefined),
                (
                    "date_string".into(),
                    VariableDefault::Value(json!("26 Jul 2024"))
                ),
                ("effort".into(), VariableDefault::Value(json!(["low"]))),
                ("enable_thinking".into(), VariableDefault::Undefined),
                (
                    "tools_in_user_message".into(),
                    VariableDefault::Value(json!(true))
                ),
            ]
        );
    }

    #[test]
    fn computed_defaults_keep_their_source_text() {
        let source = "{% if today is not defined %}{% set today = strftime_now('%d %b') %}{% endif %}{{ today }}";
        assert_eq!(
            variables(source),
            vec![(
                "today".into(),
                VariableDefault::Expression("strftime_now('%d %b')".into())
            )]
        );
    }
}
