//! A fixture's `expected_tokens`: which tokenizer a session uses, and whether tokenizing
//! its prompt gives the expected count or ids. `chatplate check` runs this as a separate
//! step after the prompt comparison.

use std::path::Path;

use super::{TokenizerError, TokenizerFiles};
use crate::catalog::{self, Origin, TemplateAccess};
use crate::session::{ExpectedTokens, Session};

/// Why the token step failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenCheckError {
    /// The tokenizer could not be found or loaded, or failed.
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    /// Tokenizing gave something else; the text says what.
    #[error("{0}")]
    Mismatch(String),
}

/// The tokenizer a session uses: its `tokenizer` field (relative to `session_dir`), else
/// the one in the model folder its template file comes from. Both must be where `access`
/// allows, like the template path (a model from the Hugging Face cache keeps to the
/// cache instead; see [`crate::catalog::hf_cache`]).
pub fn session_tokenizer(
    session: &Session,
    session_dir: &Path,
    access: &TemplateAccess,
) -> Result<TokenizerFiles, TokenizerError> {
    if let Some(written) = &session.tokenizer {
        return TokenizerFiles::locate_within(&session_dir.join(written), written, access);
    }
    let template = catalog::resolve(&session.template, session_dir, access).ok();
    let template = template.as_ref();
    let files = template
        .and_then(|t| t.watched_path())
        .and_then(TokenizerFiles::beside)
        .ok_or(TokenizerError::Unspecified)?;
    let cached = template.is_some_and(
        |t| matches!(&t.origin, Origin::Model(model) if model.place.snapshot().is_some()),
    );
    if !cached {
        files.check(access)?;
    }
    Ok(files)
}

/// Whether `ids` is what `expected` asks for; `Err` says how they differ.
pub(crate) fn compare_tokens(expected: &ExpectedTokens, ids: &[u32]) -> Result<(), String> {
    match expected {
        ExpectedTokens::Count(count) if *count == ids.len() => Ok(()),
        ExpectedTokens::Count(count) => Err(format!(
            "expected {count} tokens, the tokenizer gives {}",
            ids.len()
        )),
        ExpectedTokens::Ids(want) if want.as_slice() == ids => Ok(()),
        ExpectedTokens::Ids(want) => {
            let at = want.iter().zip(ids).take_while(|(a, b)| a == b).count();
            let show = |list: &[u32]| {
                list.get(at)
                    .map_or("end".into(), std::string::ToString::to_string)
            };
            Err(format!(
                "token ids differ at token {at} (expected {} tokens, got {}): expected {}, got {}",
                want.len(),
                ids.len(),
                show(want),
                show(ids)
            ))
        }
    }
}

/// Tokenizes `prompt` with the session's tokenizer, holding at most about `max_memory`
/// bytes, and compares with `expected_tokens` (nothing to do when the session has none).
#[cfg(feature = "tokens")]
pub(crate) fn check(
    session: &Session,
    session_dir: &Path,
    access: &TemplateAccess,
    prompt: &str,
    max_memory: usize,
) -> Result<(), TokenCheckError> {
    let Some(expected) = &session.expected_tokens else {
        return Ok(());
    };
    let ids = prompt_ids(session, session_dir, access, prompt, max_memory)?;
    compare_tokens(expected, &ids).map_err(TokenCheckError::Mismatch)
}

/// Rewrites the session's `expected_tokens`, keeping its form (a count stays a count).
#[cfg(feature = "tokens")]
pub(crate) fn bless(
    session: &mut Session,
    session_dir: &Path,
    access: &TemplateAccess,
    prompt: &str,
) -> Result<(), TokenizerError> {
    let Some(expected) = &session.expected_tokens else {
        return Ok(());
    };
    let ids = prompt_ids(
        session,
        session_dir,
        access,
        prompt,
        super::DEFAULT_MAX_MEMORY,
    )?;
    session.expected_tokens = Some(match expected {
        ExpectedTokens::Count(_) => ExpectedTokens::Count(ids.len()),
        ExpectedTokens::Ids(_) => ExpectedTokens::Ids(ids),
    });
    Ok(())
}

#[cfg(feature = "tokens")]
fn prompt_ids(
    session: &Session,
    dir: &Path,
    access: &TemplateAccess,
    prompt: &str,
    max_memory: usize,
) -> Result<Vec<u32>, TokenizerError> {
    let tokenizer = super::shared(&session_tokenizer(session, dir, access)?)?;
    Ok(tokenizer.tokenize_within(prompt, max_memory)?.ids())
}

/// Without tokenizer support a fixture with `expected_tokens` cannot pass.
#[cfg(not(feature = "tokens"))]
pub(crate) fn check(
    session: &Session,
    _dir: &Path,
    _access: &TemplateAccess,
    _prompt: &str,
    _max_memory: usize,
) -> Result<(), TokenCheckError> {
    match session.expected_tokens {
        Some(_) => Err(TokenizerError::Unsupported.into()),
        None => Ok(()),
    }
}

/// Without tokenizer support `expected_tokens` is left as it is.
#[cfg(not(feature = "tokens"))]
pub(crate) fn bless(
    _session: &mut Session,
    _dir: &Path,
    _access: &TemplateAccess,
    _prompt: &str,
) -> Result<(), TokenizerError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_counts_and_ids() {
        assert!(compare_tokens(&ExpectedTokens::Count(2), &[5, 6]).is_ok());
        let err = compare_tokens(&ExpectedTokens::Count(3), &[5, 6]).unwrap_err();
        assert_eq!(err, "expected 3 tokens, the tokenizer gives 2");
        assert!(compare_tokens(&ExpectedTokens::Ids(vec![5, 6]), &[5, 6]).is_ok());
        let err = compare_tokens(&ExpectedTokens::Ids(vec![5, 7]), &[5, 6, 8]).unwrap_err();
        assert_eq!(
            err,
            "token ids differ at token 1 (expected 2 tokens, got 3): expected 7, got 6"
        );
        let err = compare_tokens(&ExpectedTokens::Ids(vec![5]), &[5, 6]).unwrap_err();
        assert!(err.ends_with("expected end, got 6"), "{err}");
    }
}
