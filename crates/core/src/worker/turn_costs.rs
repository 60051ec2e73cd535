//! The app's turn-cost column, on the worker: what each turn makes a server with a
//! prefix cache process again ([`crate::inspect::turn_costs`]), in tokens of the
//! session's tokenizer, else in bytes.
//!
//! Bounded twice: turns whose messages did not change since the previous answer are
//! reused (typing in the last message recounts the last turn), and one run stops after
//! [`BUDGET`] with the turns counted so far, so the worker's other jobs get their turn
//! on a long session; the app asks again with that answer until it is complete.

use std::sync::Arc;
use std::time::Duration;

use chatplate_render::{CancelToken, RenderError};

use crate::inspect::{ByteCounter, TurnCostRun, TurnCosts, TurnCounter};

use super::snapshot::Snapshot;
use super::tokenizing::TokenizerChoice;
use super::{Output, Template};

/// How long one run counts before it answers with what it has.
pub const BUDGET: Duration = Duration::from_millis(400);

/// Turn costs with why they are in bytes, if they are.
#[derive(Debug, Clone)]
pub struct TurnCostReport {
    /// The costs.
    pub costs: TurnCosts,
    /// Why no tokenizer counts them (they are in bytes), if none does.
    pub no_tokenizer: Option<String>,
}

/// Counts the turns of the worker's conversation, from where `previous` stops holding.
pub(super) fn count(
    template: &Template,
    choice: &TokenizerChoice,
    previous: Option<&TurnCostReport>,
    conversation: &Snapshot,
    cancel: &CancelToken,
) -> Result<Output, RenderError> {
    let compiled = template.compiled()?;
    let (counter, no_tokenizer) = counter(choice);
    let run = TurnCostRun {
        template: compiled,
        source: template.source.as_str().into(),
        settings: Arc::clone(&conversation.settings),
        messages: conversation.messages.to_vec(),
        counter: counter.as_ref(),
        whole: false,
        budget: Some(BUDGET),
    };
    let costs = crate::inspect::turn_costs(&run, previous.map(|p| &p.costs), cancel)
        .map_err(|_| RenderError::cancelled())?;
    Ok(Output::TurnCosts(Arc::new(TurnCostReport {
        costs,
        no_tokenizer,
    })))
}

/// The session's tokenizer as a counter, else bytes with why.
fn counter(choice: &TokenizerChoice) -> (Box<dyn TurnCounter>, Option<String>) {
    #[cfg(feature = "tokens")]
    match super::tokenizing::tokenizer(choice) {
        Ok(tokenizer) => (Box::new(crate::inspect::TokenCounter(tokenizer)), None),
        Err(err) => (Box::new(ByteCounter), Some(err.to_string())),
    }
    #[cfg(not(feature = "tokens"))]
    {
        let _ = choice;
        (
            Box::new(ByteCounter),
            Some("built without the tokens feature".into()),
        )
    }
}
