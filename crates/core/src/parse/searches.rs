//! Each delimiter's last search, reused: `search(text, pos)` is the leftmost match that
//! starts at or after `pos`, so an earlier search's result that starts at or after `pos`
//! (or its finding no match at all) is also the answer from `pos`. Without this, an
//! output with many regions would rescan the rest of the text for every delimiter at
//! every region: quadratic time on long hostile outputs.

use std::collections::HashMap;

use super::error::ParseError;
use super::limits::Clock;
use super::pattern::{Found, Pattern};

/// A delimiter: whether it is a close, and its field's index.
pub(crate) type Delimiter = (bool, usize);

#[derive(Debug, Default)]
pub(crate) struct Searches(HashMap<Delimiter, (usize, Option<Found>)>);

impl Searches {
    /// `pattern.search(text, pos)`, from the last result when it still holds.
    pub(crate) fn search(
        &mut self,
        delimiter: Delimiter,
        pattern: &Pattern,
        text: &str,
        pos: usize,
        clock: &Clock,
    ) -> Result<Option<Found>, ParseError> {
        if let Some((from, result)) = self.0.get(&delimiter) {
            match result {
                None if *from <= pos => return Ok(None),
                Some(m) if *from <= pos && m.start >= pos => return Ok(Some(m.clone())),
                _ => {}
            }
        }
        let result = pattern.search(text, pos, clock)?;
        self.0.insert(delimiter, (pos, result.clone()));
        Ok(result)
    }
}
