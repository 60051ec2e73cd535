//! The parse itself (`response_parser.py`'s `ResponseParser`): regions open and close at
//! the earliest anchor, text goes to the region that is open, and each closed region's
//! text goes through its content parser.
//!
//! Fed the whole response at once, every decision resolves as it does at the end of the
//! stream, so one pass over `truncated prefix + response` gives transformers' message.
//! Streamed (`stream.rs`), text that a later chunk could still turn into an anchor is
//! held back (partial matching, `partial.rs`) and the parser records the events
//! transformers emits.

use serde_json::{Map, Value};

use super::coerce::ToolParams;
use super::content::{parse_content, Run};
use super::error::ParseError;
use super::limits::Clock;
use super::pattern::Found;
use super::pyvalue::{shown, shown_repr, type_name};
use super::searches::Searches;
use super::stream::StreamEvent;
use super::template::{Field, ResponseTemplate};
use super::transform::apply_transform;

/// A candidate delimiter: whether it opens a region, and which field's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Open,
    Close,
}

pub(crate) struct Parser<'t> {
    spec: &'t ResponseTemplate,
    /// Replaced at each streamed chunk: the deadline bounds one step, not the stream.
    pub(crate) clock: Clock,
    tools: ToolParams,
    output: Map<String, Value>,
    /// The region text goes to: the implicit field, or `None` (text is dropped).
    current: Option<usize>,
    captures: Map<String, Value>,
    body: String,
    opened: bool,
    searches: Searches,
    /// The events so far, when the parse streams (`None`: nobody listens).
    events: Option<Vec<StreamEvent>>,
}

impl<'t> Parser<'t> {
    pub(crate) fn new(spec: &'t ResponseTemplate, tools: &[Value], clock: Clock) -> Self {
        Self {
            spec,
            clock,
            tools: ToolParams::new(tools),
            output: spec.defaults.clone(),
            current: spec.implicit,
            captures: Map::new(),
            body: String::new(),
            opened: false,
            searches: Searches::default(),
            events: None,
        }
    }

    /// Records the events from now on (the streaming parser listens).
    pub(crate) fn record_events(&mut self) {
        self.events = Some(Vec::new());
    }

    /// The events recorded since the last call.
    pub(crate) fn take_events(&mut self) -> Vec<StreamEvent> {
        self.events.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Runs the whole buffer, then checks required fields and drops empty values.
    pub(crate) fn finish(mut self, buffer: &str) -> Result<Value, ParseError> {
        self.process(buffer, 0, true)?;
        self.message()
    }

    /// The message: required fields checked, empty values dropped (`finalize`).
    pub(crate) fn message(&mut self) -> Result<Value, ParseError> {
        let missing: Vec<&str> = self
            .spec
            .fields
            .iter()
            .filter(|f| !f.optional && !self.output.contains_key(&f.name))
            .map(|f| f.name.as_str())
            .collect();
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|n| shown_repr(n)).collect();
            return Err(ParseError::value(format!(
                "Required response_template fields missing from parsed output: [{}]",
                names.join(", ")
            )));
        }
        let defaults = &self.spec.defaults;
        self.output
            .retain(|k, v| defaults.contains_key(k) || !is_empty(v));
        Ok(Value::Object(std::mem::take(&mut self.output)))
    }

    /// `_process`: parses `buffer` from `pos` and returns where it stopped. At the end
    /// of the stream (`eos`) everything is parsed; before it, text from the earliest
    /// delimiter that more text could still complete or extend is held back.
    pub(crate) fn process(
        &mut self,
        buffer: &str,
        mut pos: usize,
        eos: bool,
    ) -> Result<usize, ParseError> {
        // A longer buffer can change any search's answer: the reused results go.
        self.searches = Searches::default();
        loop {
            self.clock.check(|| format!("parsing at byte {pos}"))?;
            let (best, hold) = if eos {
                (self.earliest(buffer, pos)?, buffer.len())
            } else {
                self.scan(buffer, pos)?
            };
            let Some((kind, field, m)) = best else {
                if eos {
                    if pos < buffer.len() {
                        self.accumulate(&buffer[pos..]);
                    }
                    self.close_current()?;
                    return Ok(buffer.len());
                }
                if hold > pos {
                    self.accumulate(&buffer[pos..hold]);
                }
                return Ok(pos.max(hold));
            };
            if m.start > pos {
                self.accumulate(&buffer[pos..m.start]);
            }
            pos = m.end;
            if kind == Kind::Open {
                self.close_current()?;
                self.open_explicit(field, m);
                continue;
            }
            let had_content = self.opened;
            self.close_current()?;
            // A zero-width close of a region that never opened would fire again at the
            // same place: transformers stops there (and drops the rest).
            if !had_content && m.start == m.end {
                return Ok(pos);
            }
        }
    }

    /// `_scan` before the end of the stream: the earliest delimiter that can be
    /// committed now, and where the held-back text starts (a partial match, or a
    /// complete one at the end of the text that more text could still extend).
    fn scan(&mut self, buffer: &str, pos: usize) -> Result<(Option<Candidate>, usize), ParseError> {
        let mut hold = buffer.len();
        let mut best: Option<Candidate> = None;
        for (kind, index) in self.watchlist() {
            let field = &self.spec.fields[index];
            let pattern = if kind == Kind::Open {
                &field.open
            } else {
                &field.close
            };
            let pattern = pattern.as_ref().expect("watched");
            let delimiter = (kind == Kind::Close, index);
            let found = self
                .searches
                .search(delimiter, pattern, buffer, pos, &self.clock)?;
            let Some(m) = found else {
                hold = hold.min(pattern.partial_start(buffer, pos, &self.clock)?);
                continue;
            };
            // `_can_grow`: a match ending at the edge may still change, unless it is
            // a literal no other literal of its list extends.
            if m.end == buffer.len() && (m.start == m.end || !pattern.fixed) {
                hold = hold.min(m.start);
                continue;
            }
            let better = best.as_ref().is_none_or(|(bk, bi, bm)| {
                rank(kind, field, &m) < rank(*bk, &self.spec.fields[*bi], bm)
            });
            if better {
                best = Some((kind, index, m));
            }
        }
        // A pending delimiter that starts no later might still be the one that fires.
        let best = best.filter(|(_, _, m)| m.start < hold);
        Ok((best, hold))
    }

    /// The delimiters that matter now: the close of an open explicit region, or every
    /// open plus the implicit region's close.
    fn watchlist(&self) -> Vec<(Kind, usize)> {
        if let Some(current) = self.current.filter(|c| Some(*c) != self.spec.implicit) {
            let has_close = self.spec.fields[current].close.is_some();
            return if has_close {
                vec![(Kind::Close, current)]
            } else {
                Vec::new()
            };
        }
        let mut watch: Vec<(Kind, usize)> = (0..self.spec.fields.len())
            .filter(|i| self.spec.fields[*i].open.is_some())
            .map(|i| (Kind::Open, i))
            .collect();
        if let Some(implicit) = self
            .spec
            .implicit
            .filter(|i| self.spec.fields[*i].close.is_some())
        {
            watch.push((Kind::Close, implicit));
        }
        watch
    }

    /// The earliest match (longest on ties, opens before closes, then by field name).
    fn earliest(&mut self, buffer: &str, pos: usize) -> Result<Option<Candidate>, ParseError> {
        let mut best: Option<Candidate> = None;
        for (kind, index) in self.watchlist() {
            let field = &self.spec.fields[index];
            let pattern = if kind == Kind::Open {
                &field.open
            } else {
                &field.close
            };
            let pattern = pattern.as_ref().expect("watched");
            let delimiter = (kind == Kind::Close, index);
            let Some(m) = self
                .searches
                .search(delimiter, pattern, buffer, pos, &self.clock)?
            else {
                continue;
            };
            let better = best.as_ref().is_none_or(|(bk, bi, bm)| {
                rank(kind, field, &m) < rank(*bk, &self.spec.fields[*bi], bm)
            });
            if better {
                best = Some((kind, index, m));
            }
        }
        Ok(best)
    }

    fn accumulate(&mut self, text: &str) {
        let Some(current) = self.current.filter(|_| !text.is_empty()) else {
            return;
        };
        let field = &self.spec.fields[current];
        if let Some(events) = &mut self.events {
            if !self.opened {
                events.push(StreamEvent::open(&field.name));
            }
            events.push(StreamEvent::chunk(field, text));
        }
        self.opened = true;
        self.body.push_str(text);
    }

    fn open_explicit(&mut self, field: usize, m: Found) {
        if let Some(events) = &mut self.events {
            events.push(StreamEvent::open(&self.spec.fields[field].name));
        }
        self.current = Some(field);
        self.captures = m
            .groups
            .into_iter()
            .map(|(k, v)| (k, Value::from(v)))
            .collect();
        self.body.clear();
        self.opened = true;
    }

    /// Parses the open region's text into its field, then returns to the implicit region.
    fn close_current(&mut self) -> Result<(), ParseError> {
        let result = match self.current {
            Some(index) if self.opened => self.store(index),
            _ => Ok(()),
        };
        self.current = self.spec.implicit;
        self.captures.clear();
        self.body.clear();
        self.opened = false;
        result
    }

    fn store(&mut self, index: usize) -> Result<(), ParseError> {
        let field = &self.spec.fields[index];
        let run = Run {
            clock: &self.clock,
            patterns: &self.spec.patterns,
        };
        let mut value = process_field(&self.body, field, &self.captures, run)?;
        if !self.tools.is_empty() {
            self.tools.coerce(&mut value);
        }
        if let Some(events) = &mut self.events {
            events.push(StreamEvent::close(&field.name, value.clone()));
        }
        if let Some(join) = &field.join {
            let Value::String(text) = value else {
                return Err(ParseError::value(format!(
                    "Field '{}': 'join' requires each match to parse to a string, got {}.",
                    shown(&field.name),
                    type_name(&value)
                )));
            };
            return join_into(&mut self.output, &field.name, join, text);
        }
        if field.repeats {
            return append_into(&mut self.output, &field.name, value);
        }
        self.output.insert(field.name.clone(), value);
        Ok(())
    }
}

/// A delimiter found: whether it opens, its field, the match.
type Candidate = (Kind, usize, Found);

/// How candidates compare: earliest, then longest, opens before closes, then by name.
fn rank<'f>(
    kind: Kind,
    field: &'f Field,
    m: &Found,
) -> (usize, std::cmp::Reverse<usize>, bool, &'f str) {
    (
        m.start,
        std::cmp::Reverse(m.end - m.start),
        kind == Kind::Close,
        &field.name,
    )
}

fn join_into(
    output: &mut Map<String, Value>,
    name: &str,
    join: &str,
    text: String,
) -> Result<(), ParseError> {
    let joined = match output.get(name) {
        None | Some(Value::Null) => text,
        Some(Value::String(previous)) => format!("{previous}{join}{text}"),
        Some(other) => {
            return Err(ParseError::new(
                "TypeError",
                format!(
                    "unsupported operand type(s) for +: '{}' and 'str'",
                    type_name(other)
                ),
            ))
        }
    };
    output.insert(name.to_string(), Value::String(joined));
    Ok(())
}

fn append_into(
    output: &mut Map<String, Value>,
    name: &str,
    value: Value,
) -> Result<(), ParseError> {
    match output
        .entry(name)
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(items) => {
            items.push(value);
            Ok(())
        }
        other => Err(ParseError::new(
            "AttributeError",
            format!("'{}' object has no attribute 'append'", type_name(other)),
        )),
    }
}

/// `process_field`: the content parser, then the transform (per item with `transform_each`).
fn process_field(
    body: &str,
    field: &Field,
    captures: &Map<String, Value>,
    run: Run<'_>,
) -> Result<Value, ParseError> {
    let value = parse_content(body, &field.content, &field.content_args, run)?;
    let Some(transform) = &field.transform else {
        return Ok(value);
    };
    if !field.transform_each {
        let mut scope = captures.clone();
        scope.insert("content".into(), value);
        return apply_transform(transform, &scope);
    }
    let Value::Array(items) = value else {
        return Err(ParseError::value(format!(
            "Field '{}': transform_each requires the parsed content to be a list, got {}.",
            shown(&field.name),
            type_name(&value)
        )));
    };
    items
        .into_iter()
        .map(|item| {
            let Value::Object(keys) = item else {
                return Err(ParseError::value(format!(
                    "Field '{}': transform_each requires each list element to be a dict, got {}.",
                    shown(&field.name),
                    type_name(&item)
                )));
            };
            let mut scope = captures.clone();
            scope.extend(keys);
            apply_transform(transform, &scope)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// `_is_empty`: `None` and empty strings, lists and dicts.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}
