//! The source text an expression covers, for the AST-guided rewrites
//! ([`super::rewrite`]), in time linear in the template.
//!
//! MiniJinja's filter and test spans cover only `|name(args)` (and an operator
//! expression's can start early), so an expression's extent is the union of its own span
//! and its sub-expressions' extents, widened to take in parentheses the parser consumed.
//! Computed naively, every node rescans its whole subtree and the text under it, so a
//! chain of `n` operators costs `n²`. Here each extent is computed once per
//! node ([`Extents`] remembers them by node) and the parenthesis balance of a range is
//! put together from its sub-expressions' balances plus the text between them, so each
//! byte of the template is scanned a bounded number of times.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use minijinja::machinery::ast::Expr;

use super::subexpressions;

/// The parenthesis balance of a stretch of source, as a left-to-right scan leaves it:
/// strings (quoted with `'` or `"`) hide their parentheses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Balance {
    /// Opened minus closed.
    depth: i32,
    /// The lowest `depth` reached (0 or below).
    lowest: i32,
    /// The quote still open at the end.
    quote: Option<char>,
}

impl Balance {
    fn push(&mut self, ch: char) {
        match (self.quote, ch) {
            (Some(q), c) if c == q => self.quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => self.quote = Some(ch),
            (None, '(') => self.depth += 1,
            (None, ')') => {
                self.depth -= 1;
                self.lowest = self.lowest.min(self.depth);
            }
            _ => {}
        }
    }

    fn push_str(&mut self, text: &str) {
        text.chars().for_each(|ch| self.push(ch));
    }

    /// Continues the scan over a stretch whose own balance (scanned from outside any
    /// string) is `next`. Only valid outside a string.
    fn append(&mut self, next: Balance) {
        self.lowest = self.lowest.min(self.depth + next.lowest);
        self.depth += next.depth;
        self.quote = next.quote;
    }
}

/// An expression's byte range and the balance of the text in it.
#[derive(Debug, Clone, Copy)]
struct Extent {
    start: usize,
    end: usize,
    balance: Balance,
}

/// Extents of the expressions of one template, each computed once.
pub(crate) struct Extents<'s> {
    source: &'s str,
    /// By node address: the AST outlives this, and distinct nodes never share one.
    known: HashMap<usize, Extent, BuildHasherDefault<AddressHasher>>,
    /// The extents of the children of the nodes being computed, innermost last: one
    /// buffer for the whole walk instead of a `Vec` per node.
    parts: Vec<Extent>,
}

/// Hashes a node address with one multiplication: a tenth of SipHash's cost, and node
/// addresses are not chosen by anyone (no flooding to defend against).
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte) ^ self.0.rotate_left(8));
        }
    }

    fn write_usize(&mut self, address: usize) {
        self.write_u64(address as u64);
    }

    fn write_u64(&mut self, value: u64) {
        let mixed = value.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // Addresses are aligned (low bits zero): fold the high bits down.
        self.0 = mixed ^ (mixed >> 29);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl<'s> Extents<'s> {
    /// None computed yet, for expressions of `source`.
    pub(crate) fn new(source: &'s str) -> Self {
        Extents {
            source,
            known: HashMap::default(),
            parts: Vec::new(),
        }
    }

    /// The text the expressions are in.
    pub(crate) fn source(&self) -> &'s str {
        self.source
    }

    /// Byte range of the whole expression text (see the module docs).
    pub(crate) fn of(&mut self, expr: &Expr) -> (usize, usize) {
        let extent = self.extent(expr);
        (extent.start, extent.end)
    }

    fn extent(&mut self, expr: &Expr) -> Extent {
        let key = std::ptr::from_ref::<Expr>(expr) as usize;
        if let Some(known) = self.known.get(&key) {
            return *known;
        }
        let span = expr.span();
        let (mut start, mut end) = (span.start_offset as usize, span.end_offset as usize);
        if let Expr::IfExpr(_) | Expr::Compare(_) | Expr::BinOp(_) = expr {
            // Their own spans can start at the token before them; their operands are exact.
            (start, end) = (usize::MAX, 0);
        }
        // Each call leaves `parts` as it found it, so this node's parts are the tail.
        let first = self.parts.len();
        for child in subexpressions::of(expr) {
            let part = self.extent(child);
            self.parts.push(part);
        }
        let mut parts = std::mem::take(&mut self.parts);
        for part in &parts[first..] {
            start = start.min(part.start);
            end = end.max(part.end);
        }
        let len = self.source.len();
        let (start, end) = (start.min(len), end.min(len));
        parts[first..].sort_by_key(|part| part.start);
        let balance = self.balance(start, end, &parts[first..]);
        parts.truncate(first);
        self.parts = parts;
        let extent = self.widen(start, end, balance);
        self.known.insert(key, extent);
        extent
    }

    /// The balance of `source[start..end]`, taking the parts' balances as they are
    /// instead of rescanning them (`parts` sorted by start).
    fn balance(&self, start: usize, end: usize, parts: &[Extent]) -> Balance {
        let mut balance = Balance::default();
        let Some(_) = self.source.get(start..end) else {
            return balance;
        };
        let mut cursor = start;
        for part in parts {
            let usable = part.start >= cursor && part.end <= end && balance.quote.is_none();
            let text = self.source.get(cursor..part.start.clamp(cursor, end));
            if !usable || text.is_none() || self.source.get(part.start..part.end).is_none() {
                continue; // overlapping or odd: scanned as plain text below
            }
            balance.push_str(text.unwrap_or_default());
            balance.append(part.balance);
            cursor = part.end;
        }
        balance.push_str(self.source.get(cursor..end).unwrap_or_default());
        balance
    }

    /// Extends `start..end` outwards until its parentheses balance (outside strings).
    fn widen(&self, mut start: usize, mut end: usize, inner: Balance) -> Extent {
        let source = self.source;
        let mut before = Balance::default();
        for _ in 0..-inner.lowest {
            let trimmed = source[..start].trim_end();
            if trimmed.ends_with('(') {
                start = trimmed.len() - 1;
                before.push('(');
            }
        }
        let mut balance = before;
        balance.append(inner);
        for _ in 0..(inner.depth - inner.lowest).max(0) {
            let after = &source[end..];
            let skipped = after.len() - after.trim_start().len();
            if after.trim_start().starts_with(')') {
                end += skipped + 1;
                balance.push(')');
            }
        }
        Extent {
            start,
            end,
            balance,
        }
    }
}

/// Byte range of the whole expression text (see the module docs); linear in the
/// expression's size. Callers that ask for many nested expressions share an [`Extents`].
pub(crate) fn extent(expr: &Expr, source: &str) -> (usize, usize) {
    Extents::new(source).of(expr)
}

/// The source text of the whole expression: from its first byte to its last, closing
/// brackets and parentheses included.
pub fn expression_source<'s>(expr: &Expr, source: &'s str) -> &'s str {
    let (start, end) = extent(expr, source);
    source.get(start..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extent as it was computed before (each node rescanning its subtree and the
    /// text under it): the reference the linear version must agree with.
    fn naive(expr: &Expr, source: &str) -> (usize, usize) {
        let span = expr.span();
        let (mut start, mut end) = (span.start_offset as usize, span.end_offset as usize);
        if let Expr::IfExpr(_) | Expr::Compare(_) | Expr::BinOp(_) = expr {
            (start, end) = (usize::MAX, 0);
        }
        for child in subexpressions::of(expr) {
            let (child_start, child_end) = naive(child, source);
            start = start.min(child_start);
            end = end.max(child_end);
        }
        let (start, end) = (start.min(source.len()), end.min(source.len()));
        let mut balance = Balance::default();
        balance.push_str(source.get(start..end).unwrap_or_default());
        let extents = Extents::new(source);
        let widened = extents.widen(start, end, balance);
        (widened.start, widened.end)
    }

    fn agree_on(source: &str) -> usize {
        let Ok(ast) = minijinja::machinery::parse(source, "t", Default::default()) else {
            return 0;
        };
        let mut extents = Extents::new(source);
        let mut checked = 0;
        super::super::diagnose::visit_stmt(&ast, &mut |expr| {
            assert_eq!(extents.of(expr), naive(expr, source), "in {source:?}");
            checked += 1;
        });
        checked
    }

    /// The conformance corpus's templates: `$CHATPLATE_CORPUS`, else
    /// `../shared/conformance/dev` beside the repository, as the integration tests find it
    /// (`tests/common`). Without it the corpus half is skipped, or fails under `CI=true`.
    fn corpus_templates() -> Option<std::path::PathBuf> {
        let corpus = std::env::var_os("CHATPLATE_CORPUS").map_or_else(
            || {
                // This crate is crates/render in the repository.
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../../shared/conformance/dev")
            },
            std::path::PathBuf::from,
        );
        if corpus.join("MANIFEST.json").exists() {
            return Some(corpus.join("templates"));
        }
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        let reason = format!("no corpus at {} (set CHATPLATE_CORPUS)", corpus.display());
        assert!(
            !in_ci,
            "corpus extents need what CI provides, but: {reason}"
        );
        eprintln!("SKIPPED corpus extents: {reason}");
        None
    }

    #[test]
    fn agrees_with_the_rescanning_extent() {
        let cases = [
            "{{ (a ~ (b | upper)) ~ ( c ) }}",
            "{{ ((x)) }}{{ (((x | f('(', \")\")) )) }}",
            "{{ x if (y) else (z ~ ')') }}{{ 'a%s' % (b, (c)) }}",
            "{% set x = { 'k': (v), (k2): v2 } %}{{ (d.items) }}{{ f((a), b=(c))[1:(2)] }}",
            "{{ (not (a is defined)) and (b in (c)) }}",
        ];
        for case in cases {
            assert!(agree_on(case) > 0, "{case}");
        }
        let Some(dir) = corpus_templates() else {
            return;
        };
        let entries = std::fs::read_dir(&dir).expect("the corpus's templates");
        let mut total = 0;
        for entry in entries.flatten() {
            if let Ok(source) = std::fs::read_to_string(entry.path()) {
                total += agree_on(&source.replace("\r\n", "\n"));
            }
        }
        assert!(total > 1000, "only {total} expressions checked");
    }
}
