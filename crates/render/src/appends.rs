//! `{% set ns.out = ns.out ~ piece ~ ... %}` in amortised time: a namespace string
//! built by appends grows in place instead of being copied whole by every append.
//!
//! A MiniJinja string is an immutable shared buffer, so each append copies the whole
//! string: a template that builds its prompt so (Reka Edge) is quadratic in the
//! conversation. Where a template's namespace variable is used only through its
//! attributes (`ns.attr`, never `ns` alone: passed on, printed, filtered), the appends
//! to `ns.attr` are rewritten ([`super::rewrite`]) into
//! `append(mark(ns.attr), piece, ...)` and every other read of `ns.<any>` into
//! `read(ns.<any>)`:
//!
//! * [`mark`] reads the attribute's current value first, as the original `ns.out ~`
//!   did (before the pieces are evaluated), without copying it: a [`Builder`] is
//!   marked with its current length;
//! * [`append`] writes the pieces (printed as `~` prints them) at the end of the
//!   marked builder when nothing was appended since the mark (the usual case), or
//!   into a new builder holding the marked text otherwise; a string long enough
//!   ([`BUILD_FROM`]) becomes a builder. Growth is reserved against the byte budget
//!   before it is allocated;
//! * [`read`] gives a builder's text as a string (kept until the next append), and
//!   anything else as it is, so every use of the attribute sees the string the
//!   original made.
//!
//! The builder lives only in the namespace: no read hands it out, and the namespace
//! itself never leaves the template's sight (the condition above), so no one else can
//! see it. See docs/speed.md for the rule.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};

use minijinja::machinery::ast::{BinOpKind, CallArg, Expr, Stmt};
use minijinja::value::{Object, ObjectRepr, Rest, Value};
use minijinja::{Environment, Error, State};

use super::helpers::Helpers;

/// Registers the helpers under this template's names.
pub(crate) fn register(env: &mut Environment<'static>, helpers: &Helpers) {
    env.add_filter(helpers.append_mark(), mark);
    env.add_filter(helpers.append(), append);
    env.add_filter(helpers.append_read(), read);
}

/// Below this many bytes an append's result stays an ordinary string (a short
/// namespace string costs little to copy, and most stay short).
const BUILD_FROM: usize = 4096;

/// A string under construction, held by a namespace attribute.
#[derive(Default)]
pub(crate) struct Builder {
    /// The text, with room to grow; the materialised string for [`read`], until the
    /// next append.
    state: Mutex<(String, Option<Value>)>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Builder")
    }
}

impl Object for Builder {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result
    where
        Self: Sized + 'static,
    {
        let state = self.state.lock().map_err(|_| fmt::Error)?;
        f.write_str(&state.0)
    }
}

/// A builder and its length when an append statement began.
#[derive(Debug)]
struct Mark {
    builder: Arc<Builder>,
    len: usize,
}

impl Object for Mark {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }
}

/// The attribute's value at the start of an append: a builder marked with its length,
/// anything else as it is.
fn mark(value: Value) -> Value {
    match value.downcast_object::<Builder>() {
        Some(builder) => {
            let len = builder.state.lock().map_or(0, |state| state.0.len());
            Value::from_object(Mark { builder, len })
        }
        None => value,
    }
}

/// The pieces as `~` prints them.
fn texts(pieces: &[Value]) -> Vec<Cow<'_, str>> {
    pieces
        .iter()
        .map(|piece| match piece.as_str() {
            Some(text) => Cow::Borrowed(text),
            None => Cow::Owned(piece.to_string()),
        })
        .collect()
}

/// `marked ~ pieces...`, growing the marked builder in place when it can.
fn append(state: &State, marked: Value, pieces: Rest<Value>) -> Result<Value, Error> {
    let texts = texts(&pieces);
    let added = texts
        .iter()
        .fold(0usize, |sum, text| sum.saturating_add(text.len()));
    if let Some(mark) = marked.downcast_object_ref::<Mark>() {
        let mut guard = mark.builder.state.lock().map_err(|_| {
            super::scope::tick(Some(state))
                .err()
                .unwrap_or_else(poisoned)
        })?;
        if guard.0.len() == mark.len {
            guard.1 = None;
            super::scope::make_room(Some(state), &mut guard.0, added)?;
            for text in &texts {
                guard.0.push_str(text);
            }
            return Ok(Value::from_dyn_object(Arc::clone(&mark.builder)));
        }
        // Appended to since the mark (a piece's macro did): start from the marked text.
        let base = guard.0.get(..mark.len).unwrap_or_default().to_string();
        drop(guard);
        return build(state, &base, &texts, added);
    }
    let base = match marked.as_str() {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(marked.to_string()),
    };
    let total = base.len().saturating_add(added);
    let all_safe = marked.is_safe() && pieces.iter().all(Value::is_safe);
    if total < BUILD_FROM || all_safe {
        super::scope::reserve(Some(state), total)?;
        let mut text = String::with_capacity(total);
        text.push_str(&base);
        for piece in &texts {
            text.push_str(piece);
        }
        return Ok(if all_safe {
            Value::from_safe_string(text)
        } else {
            Value::from(text)
        });
    }
    build(state, &base, &texts, added)
}

fn poisoned() -> Error {
    Error::new(
        minijinja::ErrorKind::InvalidOperation,
        "a string builder was poisoned",
    )
}

/// A new builder holding `base` and `texts`, with room to double.
fn build(state: &State, base: &str, texts: &[Cow<str>], added: usize) -> Result<Value, Error> {
    let mut text = String::new();
    super::scope::make_room(Some(state), &mut text, base.len().saturating_add(added))?;
    text.push_str(base);
    for piece in texts {
        text.push_str(piece);
    }
    Ok(Value::from_object(Builder {
        state: Mutex::new((text, None)),
    }))
}

/// A namespace attribute's value as the template sees it: a builder's text as a
/// string, anything else as it is.
fn read(value: Value) -> Value {
    let Some(builder) = value.downcast_object_ref::<Builder>() else {
        return value;
    };
    let Ok(mut state) = builder.state.lock() else {
        return Value::from(());
    };
    if let Some(text) = &state.1 {
        return text.clone();
    }
    let text = Value::from(state.0.as_str());
    state.1 = Some(text.clone());
    text
}

/// The names of the namespace variables whose appends may use a builder: assigned an
/// attribute by an append (`{% set ns.out = ns.out ~ ... %}`) somewhere, and used only
/// through their attributes everywhere (a bare `ns` anywhere else, a loop variable, a
/// macro argument or any statement this walk does not know rules the name out).
pub(crate) fn names(ast: &Stmt) -> BTreeSet<String> {
    let mut walk = Walk::default();
    walk.stmt(ast);
    walk.appended
        .into_iter()
        .filter(|name| !walk.spoiled.contains(name) && !walk.unknown)
        .collect()
}

/// Whether `value`, assigned to `target`, is an append to the same attribute of a
/// variable: `ns.out ~ ...` assigned to `ns.out`. Gives the variable's name.
pub(crate) fn append_target<'a>(target: &Expr<'a>, value: &Expr<'a>) -> Option<&'a str> {
    let Expr::GetAttr(set) = target else {
        return None;
    };
    let Expr::Var(var) = &set.expr else {
        return None;
    };
    let mut first = value;
    let mut links = 0;
    while let Expr::BinOp(b) = first {
        if !matches!(b.op, BinOpKind::Concat) {
            return None;
        }
        first = &b.left;
        links += 1;
    }
    let Expr::GetAttr(read) = first else {
        return None;
    };
    let same = matches!(&read.expr, Expr::Var(v) if v.id == var.id) && read.name == set.name;
    (same && links > 0).then_some(var.id)
}

/// The variable `expr` reads an attribute of directly (`ns` in `ns.out`).
pub(crate) fn attribute_base<'a>(expr: &Expr<'a>) -> Option<&'a str> {
    match expr {
        Expr::GetAttr(attr) => match &attr.expr {
            Expr::Var(var) => Some(var.id),
            _ => None,
        },
        _ => None,
    }
}

#[derive(Default)]
struct Walk {
    appended: HashSet<String>,
    spoiled: HashSet<String>,
    unknown: bool,
}

impl Walk {
    fn stmts(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Template(t) => self.stmts(&t.children),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::EmitRaw(_) | Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::ForLoop(f) => {
                self.binding(&f.target);
                self.expr(&f.iter);
                if let Some(filter) = &f.filter_expr {
                    self.expr(filter);
                }
                self.stmts(&f.body);
                self.stmts(&f.else_body);
            }
            Stmt::IfCond(i) => {
                self.expr(&i.expr);
                self.stmts(&i.true_body);
                self.stmts(&i.false_body);
            }
            Stmt::Set(s) => {
                if let Some(name) = append_target(&s.target, &s.expr) {
                    self.appended.insert(name.to_string());
                }
                match &s.target {
                    // `{% set ns = namespace(...) %}` makes the variable.
                    Expr::Var(_) => {}
                    Expr::GetAttr(attr) if matches!(attr.expr, Expr::Var(_)) => {}
                    other => self.binding(other),
                }
                self.expr(&s.expr);
            }
            Stmt::Macro(m) => self.macro_decl(&m.args, &m.defaults, &m.body),
            // The rewrite walks neither callee: a read there could not be wrapped.
            Stmt::CallBlock(c) => {
                self.args(&c.call.args);
                self.expr_in(&c.call.expr, true);
                let m = &c.macro_decl;
                self.macro_decl(&m.args, &m.defaults, &m.body);
            }
            Stmt::Do(d) => {
                self.expr_in(&d.call.expr, true);
                self.args(&d.call.args);
            }
            _ => self.unknown = true,
        }
    }

    fn macro_decl(&mut self, args: &[Expr], defaults: &[Expr], body: &[Stmt]) {
        for arg in args {
            self.binding(arg);
        }
        for default in defaults {
            self.expr(default);
        }
        self.stmts(body);
    }

    /// A name bound by a loop or a macro argument: not a namespace made here.
    fn binding(&mut self, target: &Expr) {
        match target {
            Expr::Var(var) => {
                self.spoiled.insert(var.id.to_string());
            }
            Expr::List(list) => list.items.iter().for_each(|item| self.binding(item)),
            _ => self.unknown = true,
        }
    }

    fn args(&mut self, args: &[CallArg]) {
        for arg in args {
            self.expr(super::rewrite::argument(arg));
        }
    }

    fn expr(&mut self, expr: &Expr) {
        self.expr_in(expr, false);
    }

    /// `raw`: inside a Markup `+` or a string `%`, which the rewrite copies as written
    /// (into the Markup and formatting helpers' calls), so a read there is not wrapped.
    fn expr_in(&mut self, expr: &Expr, raw: bool) {
        match expr {
            // `ns.attr`: the variable used through an attribute.
            Expr::GetAttr(attr) if !raw && matches!(attr.expr, Expr::Var(_)) => {}
            Expr::GetAttr(attr) if matches!(attr.expr, Expr::Var(_)) => {
                self.expr_in(&attr.expr, raw);
            }
            Expr::Var(var) => {
                self.spoiled.insert(var.id.to_string());
            }
            // `ns.attr(...)`: the rewrite walks only `ns` of such a callee.
            Expr::Call(call) if matches!(&call.expr, Expr::GetAttr(a) if matches!(a.expr, Expr::Var(_))) =>
            {
                self.expr_in(&call.expr, true);
                self.args(&call.args);
            }
            _ => {
                let raw = raw
                    || super::rewrite::is_markup_add(expr)
                    || super::rewrite::string_percent(expr).is_some();
                for child in super::subexpressions::of(expr) {
                    self.expr_in(child, raw);
                }
            }
        }
    }
}
