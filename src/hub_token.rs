//! Whether models that files name (fixtures, sessions, request bodies) may be fetched
//! from the Hub with the user's token, as models named on the command line are: the
//! `--hub-token-for-fixtures` flag, or `"hub_token_for_fixtures": true` in the user's
//! config file (which lives outside every project, so no fixture can allow itself).

use serde_json::Value;

use crate::template_roots;

/// The config file's key.
pub const KEY: &str = "hub_token_for_fixtures";

/// Whether the token may go with models files name: `flag`, or the config file's switch;
/// and what was wrong with the switch, if anything (it is then off).
pub fn allowed(flag: bool) -> (bool, Option<String>) {
    if flag {
        return (true, None);
    }
    let Some(path) = template_roots::config_path() else {
        return (false, None);
    };
    // A config file that cannot be read is reported with the template roots.
    let Ok(Some(config)) = template_roots::read_config(&path) else {
        return (false, None);
    };
    match config.get(KEY) {
        None | Some(Value::Bool(false)) => (false, None),
        Some(Value::Bool(true)) => (true, None),
        Some(_) => {
            let problem = format!("{}: \"{KEY}\" must be true or false", path.display());
            (false, Some(problem))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_allows_without_reading_the_config() {
        assert_eq!(allowed(true), (true, None));
    }
}
