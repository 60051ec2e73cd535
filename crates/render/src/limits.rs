//! The bounds on one render of an untrusted template, and how each is reported.
//!
//! Attacks are stopped by the deadline and the byte budget. The step budget (MiniJinja
//! fuel) only catches endless loops, and must never refuse a real conversation: several
//! real templates are quadratic in the number of messages (for each message they scan
//! the others: google-gemma-4 takes about 4.4 M steps for 1,000 messages,
//! openai-gpt-oss about 28.5 M for 10,000), so the budget grows with the square of the
//! input. Every limit error carries the bound it hit with its values ([`Bound`]), and
//! its message names the limit, its value and how to raise it (worded by the front end,
//! see [`crate::remedy`]).

use std::time::Duration;

use crate::remedy::{means, Knob};

/// Bounds on what an untrusted template may do in one render. More bounds may be added:
/// start from [`Limits::default`] and change what you need with the `with_` methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Limits {
    /// Base step budget (MiniJinja fuel: about one unit per instruction, plus one per 64
    /// bytes of data made). A render's budget is this plus [`STEPS_PER_ITEM_PAIR`] per
    /// pair of input items (see [`Limits::step_budget`]).
    pub fuel: u64,
    /// Largest prompt, in bytes.
    pub max_output_bytes: usize,
    /// Most memory the template may hold during the render, in bytes.
    pub max_memory_bytes: usize,
    /// Deepest macro / include / loop recursion.
    pub recursion: usize,
    /// Wall-clock bound on one render.
    pub deadline: Duration,
}

/// Extra steps per pair of input items (messages, tools, documents).
pub const STEPS_PER_ITEM_PAIR: u64 = 10;

/// Extra render time per pair of input items, in microseconds: a few times what the
/// quadratic templates of the corpus take per pair (BENCHMARKS.md).
pub(crate) const MICROS_PER_ITEM_PAIR: u64 = 1;

/// The most a deadline grows to with the input ([`Limits::deadline_for`]), and the
/// most any bounded piece of work made of many renders may take (an inspection, a
/// prefix-stability check), unless the base deadline itself is longer: a fixture from
/// a stranger cannot buy minutes of work by being long. Real conversations render far
/// within it (a 10,000-message conversation on the corpus' quadratic templates takes
/// about a second, BENCHMARKS.md); a user who needs more raises the base.
pub const MAX_GROWN_DEADLINE: Duration = Duration::from_secs(60);

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 5_000_000,
            max_output_bytes: 32 << 20,
            max_memory_bytes: 256 << 20,
            recursion: 200,
            deadline: Duration::from_secs(5),
        }
    }
}

impl Limits {
    /// With a base step budget of `fuel`.
    pub fn with_fuel(mut self, fuel: u64) -> Self {
        self.fuel = fuel;
        self
    }

    /// With a largest prompt of `bytes`.
    pub fn with_max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// With at most `bytes` of memory held by the template during a render.
    pub fn with_max_memory_bytes(mut self, bytes: usize) -> Self {
        self.max_memory_bytes = bytes;
        self
    }

    /// With macro / include / loop recursion at most `depth` deep.
    pub fn with_recursion(mut self, depth: usize) -> Self {
        self.recursion = depth;
        self
    }

    /// With a wall-clock bound of `deadline` on one render (before its growth with the
    /// conversation, see [`Limits::deadline_extension`]).
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The step budget for a render with `items` input items (messages, tools and
    /// documents): [`Limits::fuel`] + [`STEPS_PER_ITEM_PAIR`] × items².
    pub fn step_budget(&self, items: usize) -> u64 {
        let items = items as u64;
        self.fuel
            .saturating_add(STEPS_PER_ITEM_PAIR.saturating_mul(items.saturating_mul(items)))
    }

    /// The bound hit by a render of `items` input items that used up its step budget.
    pub fn steps_bound(&self, items: usize) -> Bound {
        Bound::Steps {
            budget: self.step_budget(items),
            items,
            base: self.fuel,
        }
    }

    /// The message for a render that used up its step budget.
    pub fn steps_exceeded(&self, items: usize) -> String {
        self.steps_bound(items).message()
    }

    /// The message for a prompt larger than [`Limits::max_output_bytes`].
    pub fn output_exceeded(&self) -> String {
        Bound::Output {
            max: self.max_output_bytes,
        }
        .message()
    }

    /// The bound hit by a render that needed `needed` bytes (0: unknown) past
    /// [`Limits::max_memory_bytes`].
    pub fn memory_bound(&self, needed: usize) -> Bound {
        Bound::Memory {
            max: self.max_memory_bytes,
            needed,
        }
    }

    /// The message for a render that held more than [`Limits::max_memory_bytes`].
    pub fn memory_exceeded(&self, needed: usize) -> String {
        self.memory_bound(needed).message()
    }

    /// How much longer than [`Limits::deadline`] a render of `items` input items may
    /// take: [`MICROS_PER_ITEM_PAIR`] × items², like the step budget.
    pub fn deadline_extension(&self, items: usize) -> Duration {
        let items = items as u64;
        Duration::from_micros(MICROS_PER_ITEM_PAIR.saturating_mul(items.saturating_mul(items)))
    }

    /// The wall-clock bound on one render of `items` input items (messages, tools and
    /// documents): [`Limits::deadline`] + [`Limits::deadline_extension`], at most
    /// [`Limits::deadline_cap`]. The one place that computes it: the renderer's own
    /// deadline, the app's render worker and the command line's waits all use it, and
    /// [`Limits::deadline_exceeded`] names it.
    pub fn deadline_for(&self, items: usize) -> Duration {
        self.capped(self.deadline.saturating_add(self.deadline_extension(items)))
    }

    /// The most a deadline grows to: [`MAX_GROWN_DEADLINE`], or the base deadline when
    /// the user set it longer (only they can buy more time, not the input).
    pub fn deadline_cap(&self) -> Duration {
        self.deadline.max(MAX_GROWN_DEADLINE)
    }

    /// `time`, at most [`Limits::deadline_cap`]: the bound on work made of many renders
    /// (each within [`Limits::deadline_for`]) taken together.
    pub fn capped(&self, time: Duration) -> Duration {
        time.min(self.deadline_cap())
    }

    /// The bound hit by a render of `items` input items that ran past
    /// [`Limits::deadline_for`] them.
    pub fn deadline_bound(&self, items: usize) -> Bound {
        Bound::Deadline {
            applied: self.deadline_for(items),
            items,
            base: self.deadline,
        }
    }

    /// The message for a render of `items` input items that ran past
    /// [`Limits::deadline_for`] them.
    pub fn deadline_exceeded(&self, items: usize) -> String {
        self.deadline_bound(items).message()
    }

    /// The message for recursion deeper than [`Limits::recursion`].
    pub fn recursion_exceeded(&self) -> String {
        Bound::Recursion {
            depth: self.recursion,
        }
        .message()
    }
}

/// A bound a render hit, with its values: what a front end needs to say how to raise
/// it. More bounds may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Bound {
    /// The step budget ([`Limits::step_budget`]).
    Steps {
        /// The budget for this render.
        budget: u64,
        /// Its input items (messages, tools and documents).
        items: usize,
        /// The base budget ([`Limits::fuel`]).
        base: u64,
    },
    /// The largest prompt ([`Limits::max_output_bytes`]).
    Output {
        /// The limit, in bytes.
        max: usize,
    },
    /// The memory budget ([`Limits::max_memory_bytes`]).
    Memory {
        /// The limit, in bytes.
        max: usize,
        /// What the failed request asked for, in bytes (0: not known).
        needed: usize,
    },
    /// The wall-clock bound ([`Limits::deadline_for`]).
    Deadline {
        /// The bound this render had.
        applied: Duration,
        /// Its input items.
        items: usize,
        /// The base bound ([`Limits::deadline`]).
        base: Duration,
    },
    /// The recursion depth ([`Limits::recursion`]).
    Recursion {
        /// The deepest allowed.
        depth: usize,
    },
}

impl Bound {
    /// The setting that raises this bound, if there is one to name.
    pub fn knob(&self) -> Option<Knob> {
        match self {
            Bound::Steps { .. } => Some(Knob::Fuel),
            Bound::Output { .. } => Some(Knob::MaxOutput),
            Bound::Memory { .. } => Some(Knob::MaxMemory),
            Bound::Deadline { .. } => Some(Knob::Deadline),
            Bound::Recursion { .. } => None,
        }
    }

    /// The message: the limit, its value, and how to raise it ([`crate::remedy::means`]).
    pub fn message(&self) -> String {
        match *self {
            Bound::Steps {
                budget,
                items,
                base,
            } => steps_message(budget, items, base),
            Bound::Output { max } => format!(
                "the prompt grew beyond {} (the output limit; raise it with {})",
                bytes(max),
                means(Knob::MaxOutput)
            ),
            Bound::Memory { max, needed } => memory_message(max, needed),
            Bound::Deadline {
                applied,
                items,
                base,
            } => deadline_message(applied, items, base),
            Bound::Recursion { depth } => {
                format!("the template recursed deeper than {depth} levels (the recursion limit)")
            }
        }
    }
}

fn steps_message(budget: u64, items: usize, base: u64) -> String {
    format!(
        "the template ran more than {} steps, its step budget for {} input items \
         ({} + {STEPS_PER_ITEM_PAIR} × items²); if the conversation is real, raise \
         the base budget with {}",
        group(budget),
        group(items as u64),
        group(base),
        means(Knob::Fuel)
    )
}

fn memory_message(max: usize, needed: usize) -> String {
    let needed = match needed {
        0 => String::new(),
        n => format!(" (it asked for {})", bytes(n)),
    };
    format!(
        "the template needed more than {} of memory{needed} (the memory limit; raise \
         it with {})",
        bytes(max),
        means(Knob::MaxMemory)
    )
}

fn deadline_message(applied: Duration, items: usize, base: Duration) -> String {
    let grown = base.saturating_add(Limits::default().deadline_extension(items));
    if applied < grown && applied >= MAX_GROWN_DEADLINE {
        return format!(
            "the template did not finish within {} s and was stopped: its deadline for {} \
             input items ({} s + {MICROS_PER_ITEM_PAIR} µs × items²) stops growing at {} s, \
             so that a long fixture cannot buy minutes; if the conversation is real, \
             give a longer deadline with {}",
            seconds(applied),
            group(items as u64),
            seconds(base),
            seconds(MAX_GROWN_DEADLINE),
            means(Knob::Deadline)
        );
    }
    if applied.saturating_sub(base) < Duration::from_millis(100) {
        return format!(
            "the template did not finish within {} s and was stopped (the deadline; \
             raise it with {})",
            seconds(applied),
            means(Knob::Deadline)
        );
    }
    format!(
        "the template did not finish within {} s and was stopped, its deadline for {} \
         input items ({} s + {MICROS_PER_ITEM_PAIR} µs × items²); raise the base with \
         {}",
        seconds(applied),
        group(items as u64),
        seconds(base),
        means(Knob::Deadline)
    )
}

/// `1234567` as `1,234,567`.
pub(crate) fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, ch) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Seconds for people, to the millisecond: `0.5`, `0.51`, `9.5`, `100.0`; so the number
/// in a message is the bound applied, not a rounding of it.
pub(crate) fn seconds(duration: Duration) -> String {
    let millis = format!("{:.3}", duration.as_secs_f64());
    let trimmed = millis.trim_end_matches('0');
    match trimmed.strip_suffix('.') {
        Some(whole) => format!("{whole}.0"),
        None => trimmed.to_string(),
    }
}

/// A byte count for people: `256 MiB`, `1,000 bytes`.
pub(crate) fn bytes(n: usize) -> String {
    const MIB: usize = 1 << 20;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", group((n / MIB) as u64))
    } else if n >= 10 * MIB {
        format!("{:.0} MiB", n as f64 / MIB as f64)
    } else {
        format!("{} bytes", group(n as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_grows_with_the_square_of_the_input() {
        let limits = Limits::default();
        assert_eq!(limits.step_budget(0), 5_000_000);
        assert_eq!(limits.step_budget(1_000), 15_000_000);
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(bytes(256 << 20), "256 MiB");
        assert_eq!(bytes(1000), "1,000 bytes");
    }

    #[test]
    fn the_deadline_grows_with_the_square_of_the_input_and_its_message_names_it() {
        let limits = Limits::default().with_deadline(Duration::from_millis(500));
        assert_eq!(limits.deadline_for(0), Duration::from_millis(500));
        assert_eq!(limits.deadline_for(3_000), Duration::from_millis(9_500));
        assert!(limits
            .deadline_exceeded(3_000)
            .contains("within 9.5 s and was stopped, its deadline for 3,000 input items (0.5 s"));
        // A small extension is still part of the number shown.
        assert!(limits.deadline_exceeded(100).contains("within 0.51 s"));
        assert_eq!(seconds(Duration::from_secs(100)), "100.0");
    }

    #[test]
    fn the_grown_deadline_stops_at_a_minute_unless_the_base_is_longer() {
        let limits = Limits::default();
        // 5 s + 1 µs × 8,000² = 69 s, capped.
        assert_eq!(limits.deadline_for(8_000), MAX_GROWN_DEADLINE);
        assert_eq!(limits.deadline_for(5_000), Duration::from_secs(30));
        let message = limits.deadline_exceeded(8_000);
        assert!(
            message.contains("within 60.0 s and was stopped: its deadline for 8,000 input items")
                && message.contains("stops growing at 60.0 s")
                && message.contains("Limits::deadline"),
            "{message}"
        );
        // A user's longer base is the cap: the input buys nothing beyond it.
        let patient = limits.with_deadline(Duration::from_secs(300));
        assert_eq!(patient.deadline_for(8_000), Duration::from_secs(300));
        assert_eq!(patient.deadline_for(0), Duration::from_secs(300));
        assert_eq!(
            patient.capped(Duration::from_secs(900)),
            Duration::from_secs(300)
        );
        assert_eq!(seconds(Duration::from_micros(1_000_001)), "1.0");
    }
}
