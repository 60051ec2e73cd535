//! The config file's `"lint"` section (`{"allow": [...], "deny": [...], "fail_on":
//! "warning"}`), read by `chatplate lint` (whose flags extend it) and by the app (which
//! shows findings as the policy says). A repository can keep its own file and point
//! `CHATPLATE_CONFIG` at it in CI.

use chatplate_core::files;
use chatplate_core::lint::{Policy, CONFIG_SECTION};
use serde_json::Value;

/// The policy the config file sets: the default when there is no file or no section; an
/// error naming the file when the section is wrong.
pub fn policy() -> Result<Policy, String> {
    let Some(path) = crate::template_roots::config_path() else {
        return Ok(Policy::default());
    };
    let text = match files::read_optional_text(&path, files::MAX_APP_CONFIG_BYTES) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(Policy::default()),
        Err(err) => return Err(err.to_string()),
    };
    let config: Value =
        serde_json::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
    match config.get(CONFIG_SECTION) {
        Some(section) => {
            Policy::from_config(section).map_err(|err| format!("{}: {err}", path.display()))
        }
        None => Ok(Policy::default()),
    }
}
