//! The render bounds as command-line flags, shared by `render`, `check`, `bench` and
//! the app: every limit error names the flag that raises it.

use std::time::Duration;

use clap::Args;

use chatplate_render::Limits;

/// `--fuel`, `--deadline`, `--max-output`, `--max-memory`.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Base step budget of a render (it grows with the square of the number of
    /// messages and tools). Default 5000000.
    #[arg(long, value_name = "STEPS", value_parser = clap::value_parser!(u64).range(1..))]
    fuel: Option<u64>,
    /// Wall-clock bound on one render, in seconds (it grows with the square of the
    /// number of messages and tools, by 1 µs per pair). Default 5 (2 in the app).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    deadline: Option<Duration>,
    /// Largest prompt, in bytes (suffixes K, M, G). Default 32M.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    max_output: Option<usize>,
    /// Most memory a template may hold during a render, in bytes (suffixes K, M, G).
    /// Default 256M.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    max_memory: Option<usize>,
}

impl LimitArgs {
    /// `base` with the flags given applied.
    pub fn apply(&self, base: Limits) -> Limits {
        base.with_fuel(self.fuel.unwrap_or(base.fuel))
            .with_deadline(self.deadline.unwrap_or(base.deadline))
            .with_max_output_bytes(self.max_output.unwrap_or(base.max_output_bytes))
            .with_max_memory_bytes(self.max_memory.unwrap_or(base.max_memory_bytes))
    }

    /// [`Limits::default`] with the flags given applied.
    pub fn limits(&self) -> Limits {
        self.apply(Limits::default())
    }
}

/// Seconds, more than 0 and at most a day.
pub(super) fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(seconds > 0.0 && seconds <= 86_400.0) {
        return Err("give between 0 and 86400 seconds".into());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A byte count, optionally with K, M or G (powers of 1024); at least 1 KiB.
fn parse_bytes(text: &str) -> Result<usize, String> {
    let trimmed = text.trim();
    let (digits, unit) = match trimmed.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => trimmed.split_at(at),
        None => (trimmed, ""),
    };
    let shift = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("{text:?}: use a number of bytes, or K, M or G")),
    };
    let count: usize = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a number of bytes"))?;
    let bytes = count
        .checked_mul(1usize << shift)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes < 1024 {
        return Err("give at least 1K".into());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_take_binary_suffixes() {
        assert_eq!(parse_bytes("2048"), Ok(2048));
        assert_eq!(parse_bytes("256M"), Ok(256 << 20));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert!(parse_bytes("10").is_err());
        assert!(parse_bytes("99999999999999999999G").is_err());
        assert!(parse_seconds("0").is_err());
        assert_eq!(parse_seconds("1.5"), Ok(Duration::from_millis(1500)));
    }
}
