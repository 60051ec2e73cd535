//! The bookkeeping of a job asked once per render: the generation last asked for and
//! the latest answer, which stays shown until a newer one arrives.

/// What was asked, and the latest answer with the generation it answers.
#[derive(Debug)]
pub struct PerRender<T> {
    asked: Option<u64>,
    shown: Option<(u64, T)>,
}

impl<T> Default for PerRender<T> {
    fn default() -> Self {
        PerRender {
            asked: None,
            shown: None,
        }
    }
}

impl<T> PerRender<T> {
    /// Whether the render of `generation` was asked about already.
    pub fn asked(&self, generation: u64) -> bool {
        self.asked == Some(generation)
    }

    /// Notes that the render of `generation` is being asked about.
    pub fn ask(&mut self, generation: u64) {
        self.asked = Some(generation);
    }

    /// Takes the answer for `generation` (`None`: it failed or was cancelled, so the
    /// next render asks again); returns whether what is shown changed.
    pub fn take(&mut self, generation: u64, answer: Option<T>) -> bool {
        if self.asked != Some(generation) {
            return false;
        }
        match answer {
            Some(answer) => {
                self.shown = Some((generation, answer));
                true
            }
            None => {
                self.asked = None;
                false
            }
        }
    }

    /// Whether the answer for the render of `shown` is still on its way.
    pub fn pending(&self, shown: u64) -> bool {
        let answered = self.shown.as_ref().map(|(generation, _)| *generation);
        self.asked == Some(shown) && answered != self.asked
    }

    /// The latest answer.
    pub fn latest(&self) -> Option<&T> {
        self.shown.as_ref().map(|(_, answer)| answer)
    }
}
