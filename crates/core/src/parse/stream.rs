//! Streaming parse, as transformers 5.23's `ResponseParser` does it: the output is fed
//! in chunks as a model writes it, and each chunk gives the events it settles
//! (`region_open`, `region_chunk`, `region_close`), in transformers' order and with its
//! fields. Text that a later chunk could still turn into a delimiter is held back until
//! it is settled, so no event ever shows part of a marker as content.
//!
//! ```
//! use chatplate_core::parse::{ResponseParser, ResponseTemplate};
//! use serde_json::json;
//!
//! let template = ResponseTemplate::load(&json!({
//!     "start_anchor": "<|im_start|>assistant\n",
//!     "fields": {"content": {"close": "<|im_end|>"}},
//! }))?;
//! let mut parser = ResponseParser::new(&template, "", &[], &Default::default())?;
//! let first = parser.feed("Hi<|im_")?;
//! assert_eq!(first.len(), 2); // region_open, then region_chunk "Hi": "<|im_" is held
//! let second = parser.feed("end|>")?;
//! assert_eq!(second[0].to_json()["type"], "region_close");
//! let (message, _) = parser.finalize()?;
//! assert_eq!(message, json!({"content": "Hi"}));
//! # Ok::<(), chatplate_core::parse::ParseError>(())
//! ```

use serde_json::{json, Value};

use super::check_input_size;
use super::error::ParseError;
use super::limits::ParseLimits;
use super::parser::Parser;
use super::template::{Field, ResponseTemplate};

/// Content parsers whose chunks are part of the final value (`STREAMABLE_PARSERS`):
/// the others' chunks are raw text that only becomes a value when the region closes.
const STREAMABLE: [&str; 4] = ["text", "int", "float", "bool"];

/// One event of a streamed parse.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A region (a message field) opened.
    Open {
        /// The field.
        field: String,
    },
    /// Text went into the open region.
    Chunk {
        /// The field.
        field: String,
        /// The text, exactly as the model wrote it.
        text: String,
        /// Whether the text is raw input to a structured parser (json, xml-inline,
        /// kv-lines) rather than part of the final value.
        dirty: bool,
    },
    /// The region closed: its text parsed into the field's value.
    Close {
        /// The field.
        field: String,
        /// The value the region gave (one item of a repeated field).
        value: Value,
    },
}

impl StreamEvent {
    pub(crate) fn open(field: &str) -> Self {
        StreamEvent::Open {
            field: field.to_string(),
        }
    }

    pub(crate) fn chunk(field: &Field, text: &str) -> Self {
        StreamEvent::Chunk {
            field: field.name.clone(),
            text: text.to_string(),
            dirty: !STREAMABLE.contains(&field.content.as_str()),
        }
    }

    pub(crate) fn close(field: &str, value: Value) -> Self {
        StreamEvent::Close {
            field: field.to_string(),
            value,
        }
    }

    /// The event as transformers gives it: `{"type": "region_chunk", "field": ...}`.
    pub fn to_json(&self) -> Value {
        match self {
            StreamEvent::Open { field } => json!({"type": "region_open", "field": field}),
            StreamEvent::Chunk { field, text, dirty } => {
                json!({"type": "region_chunk", "field": field, "text": text, "dirty": dirty})
            }
            StreamEvent::Close { field, value } => {
                json!({"type": "region_close", "field": field, "value": value})
            }
        }
    }
}

/// `ResponseParser(template, prefix=prefix, tools=tools)`: a streamed parse.
pub struct ResponseParser<'t> {
    parser: Parser<'t>,
    limits: ParseLimits,
    buffer: String,
    pos: usize,
    initial: Vec<StreamEvent>,
}

impl<'t> ResponseParser<'t> {
    /// A parser that has read the prefix (the prompt before generation; `""` when the
    /// output holds the whole message): the events the prefix gave are
    /// [`ResponseParser::initial_events`]. Each step is bounded by `limits`.
    pub fn new(
        template: &'t ResponseTemplate,
        prefix: &str,
        tools: &[Value],
        limits: &ParseLimits,
    ) -> Result<Self, ParseError> {
        check_input_size(prefix.len())?;
        let clock = limits.start();
        let truncated = template.truncate_prefix(prefix, &clock)?.to_string();
        let mut parser = Parser::new(template, tools, clock);
        parser.record_events();
        let mut stream = ResponseParser {
            parser,
            limits: limits.clone(),
            buffer: truncated,
            pos: 0,
            initial: Vec::new(),
        };
        if !stream.buffer.is_empty() {
            stream.pos = stream.parser.process(&stream.buffer, 0, false)?;
            stream.initial = stream.parser.take_events();
        }
        Ok(stream)
    }

    /// The events the prefix gave (regions the template itself opened).
    pub fn initial_events(&self) -> &[StreamEvent] {
        &self.initial
    }

    /// `feed(text)`: the events that `text`, the output's next chunk, settles.
    pub fn feed(&mut self, text: &str) -> Result<Vec<StreamEvent>, ParseError> {
        check_input_size(self.buffer.len().saturating_add(text.len()))?;
        self.buffer.push_str(text);
        self.parser.clock = self.limits.start();
        self.pos = self.parser.process(&self.buffer, self.pos, false)?;
        Ok(self.parser.take_events())
    }

    /// `finalize()`: the end of the output. Regions open at the end close, and the
    /// message comes with the events of that last step.
    pub fn finalize(mut self) -> Result<(Value, Vec<StreamEvent>), ParseError> {
        self.parser.clock = self.limits.start();
        self.parser.process(&self.buffer, self.pos, true)?;
        let events = self.parser.take_events();
        Ok((self.parser.message()?, events))
    }
}
