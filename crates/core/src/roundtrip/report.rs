//! A token difference in words: the same wording for `chatplate roundtrip`, `check`'s
//! `assert_token_round_trip` and the app's badge note.

use super::compare::{Position, ShownToken, TokenDifference};

impl TokenDifference {
    /// Where the difference is: "token 7 of the output", "the prompt's last token".
    pub fn place(&self) -> String {
        match self.position {
            Position::Output(n) => format!("token {n} of the output"),
            Position::Prompt { from_end: 1 } => "the prompt's last token".into(),
            Position::Prompt { from_end } => {
                format!("the prompt's token {from_end} from its end")
            }
        }
    }

    /// One line: where, both tokens and the cause's label when known ("at token 7 of the
    /// output: sampled ..., re-rendered ... (spacing in JSON)").
    pub fn summary(&self) -> String {
        let rendered = self.rendered.as_ref().map_or_else(
            || "the re-render ends there".to_string(),
            |t| format!("re-rendered {}", quoted(&t.token)),
        );
        let mut line = format!(
            "at {}: sampled {}, {rendered}",
            self.place(),
            quoted(&self.sampled.token)
        );
        if let Some(cause) = &self.cause {
            line.push_str(&format!(" ({})", cause.label()));
        }
        line
    }

    /// The full report, a line each: where, both tokens with their ids, the cause when
    /// known, and both texts from the differing token on.
    pub fn lines(&self) -> Vec<String> {
        let token = |t: &ShownToken| format!("{} {}", t.id, quoted(&t.token));
        let mut lines = vec![
            format!("differs at {}", self.place()),
            format!("  sampled:          {}", token(&self.sampled)),
            format!(
                "  re-rendered:      {}",
                self.rendered
                    .as_ref()
                    .map_or_else(|| "(the re-render ends here)".into(), token)
            ),
        ];
        if let Some(cause) = &self.cause {
            lines.push(format!("  cause: {cause}"));
        }
        lines.push(format!(
            "  sampled text:     {}",
            quoted(&self.sampled_text)
        ));
        lines.push(format!(
            "  re-rendered text: {}",
            quoted(&self.rendered_text)
        ));
        lines
    }
}

/// A string as a JSON literal: quotes, and escapes for control characters.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}
