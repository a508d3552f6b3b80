//! The commands that change the engine's state: identification, options,
//! the position, and the limits of a `go`.

use std::time::Duration;

use awari_probe::search::{Game, RepetitionRule, MAX_CONTEMPT};
use awari_probe::ProbeError;

use super::position::Position;
use super::{say, Job, Session, Shared, START_SEEDS};

/// The engine's name in `id name`.
const NAME: &str = concat!("awari-probe ", env!("CARGO_PKG_VERSION"));

/// Time kept back from `movetime` for answering.
const MARGIN: Duration = Duration::from_millis(3);

impl Session {
    /// Runs a command other than `go`, `isready`, `stop` and `quit`.
    ///
    /// # Errors
    /// [`ProbeError::Input`] for a command, option or position the engine
    /// cannot take (the state is then unchanged).
    pub(super) fn command(
        &mut self,
        shared: &Shared<'_>,
        command: &str,
        rest: &[&str],
    ) -> Result<(), ProbeError> {
        match command {
            "uci" => {
                self.identify();
                Ok(())
            }
            "ucinewgame" => {
                shared
                    .searcher
                    .lock()
                    .expect("a search panicked")
                    .clear_table();
                self.position = Position::start(self.position.rules(), START_SEEDS);
                Ok(())
            }
            "position" => {
                self.position = self.parse_position(rest)?;
                Ok(())
            }
            "setoption" => self.set_option(shared, rest),
            other => Err(ProbeError::Input(format!("unknown command {other:?}"))),
        }
    }

    /// `id` and `option` lines, then `uciok`.
    fn identify(&self) {
        let s = &self.settings;
        say(&format!("id name {NAME}"));
        say("id author the awari authors");
        say(&format!(
            "option name Hash type spin default {} min 1 max 65536",
            s.hash_bytes >> 20
        ));
        say(&format!(
            "option name Threads type spin default {} min 1 max 256",
            s.threads
        ));
        let vars: Vec<String> = RepetitionRule::ALL
            .iter()
            .map(|r| format!("var {r}"))
            .collect();
        say(&format!(
            "option name Repetition type combo default {} {}",
            s.repetition,
            vars.join(" ")
        ));
        say(&format!(
            "option name Contempt type spin default {} min -{MAX_CONTEMPT} max {MAX_CONTEMPT}",
            s.contempt
        ));
        say("uciok");
    }

    /// `position startpos|fen F [moves M]`.
    fn parse_position(&self, rest: &[&str]) -> Result<Position, ProbeError> {
        let rules = self.position.rules();
        let moves_at = rest.iter().position(|&w| w == "moves");
        let (setup, moves) = match moves_at {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &[][..]),
        };
        let mut position = match setup {
            ["startpos"] => Position::start(rules, START_SEEDS),
            ["fen", fen @ ..] if !fen.is_empty() => Position::from_fen(rules, &fen.join(""))?,
            _ => {
                return Err(ProbeError::Input(format!(
                    "position {:?}: expected startpos or fen F, then moves M",
                    rest.join(" ")
                )))
            }
        };
        position.play_all(&moves.concat())?;
        Ok(position)
    }

    /// `setoption name N value V`.
    fn set_option(&mut self, shared: &Shared<'_>, rest: &[&str]) -> Result<(), ProbeError> {
        let value_at = rest.iter().position(|&w| w == "value");
        let (name, value) = match (rest.first(), value_at) {
            (Some(&"name"), Some(at)) => (rest[1..at].join(" "), rest[at + 1..].join(" ")),
            (Some(&"name"), None) => (rest[1..].join(" "), String::new()),
            _ => {
                return Err(ProbeError::Input(
                    "setoption: expected setoption name N value V".into(),
                ))
            }
        };
        let number = |low: i64, high: i64| -> Result<i64, ProbeError> {
            value
                .parse::<i64>()
                .ok()
                .filter(|v| (low..=high).contains(v))
                .ok_or_else(|| {
                    ProbeError::Input(format!(
                        "option {name}: {value:?} is not a number from {low} to {high}"
                    ))
                })
        };
        let s = &mut self.settings;
        match name.to_ascii_lowercase().as_str() {
            "hash" => {
                s.hash_bytes = (number(1, 65536)? as usize) << 20;
                let mut searcher = shared.searcher.lock().expect("a search panicked");
                searcher.set_limits(s.limits(None, None));
                searcher.clear_table();
            }
            "threads" => s.threads = number(1, 256)? as usize,
            "contempt" => {
                s.contempt = number(-i64::from(MAX_CONTEMPT), i64::from(MAX_CONTEMPT))? as i16
            }
            "repetition" => s.repetition = value.parse()?,
            _ => return Err(ProbeError::Input(format!("unknown option {name:?}"))),
        }
        Ok(())
    }

    /// The search a `go` asks for, with the game as it stands.
    ///
    /// # Errors
    /// [`ProbeError::Input`] for a parameter that is not a number.
    pub(super) fn job(&self, rest: &[&str]) -> Result<Job, ProbeError> {
        let mut time = None;
        let mut depth = None;
        let mut clock = [None, None];
        let mut increment = [0u64, 0];
        let mut words = rest.iter();
        while let Some(&word) = words.next() {
            let mut number = || -> Result<u64, ProbeError> {
                let text = words.next().copied().unwrap_or("");
                text.parse()
                    .map_err(|_| ProbeError::Input(format!("go {word}: {text:?} is not a number")))
            };
            match word {
                "movetime" => time = Some(Duration::from_millis(number()?)),
                "depth" => depth = Some(number()?.min(u64::from(u32::MAX)) as u32),
                "wtime" => clock[0] = Some(number()?),
                "btime" => clock[1] = Some(number()?),
                "winc" => increment[0] = number()?,
                "binc" => increment[1] = number()?,
                "movestogo" | "nodes" | "mate" => {
                    number()?;
                }
                _ => {} // infinite, ponder: no limit.
            }
        }
        let side = usize::from(!self.position.south_to_move());
        if time.is_none() && depth.is_none() {
            // A share of the clock: a fortieth of what is left, and most
            // of the increment.
            time =
                clock[side].map(|left| Duration::from_millis(left / 40 + increment[side] * 3 / 4));
        }
        let time = time.map(|t| t.saturating_sub(MARGIN).max(Duration::from_millis(1)));
        let s = &self.settings;
        Ok(Job {
            game: Game {
                repetition: s.repetition,
                history: self.position.history().to_vec(),
                captured: Some(self.position.captured()),
                contempt: s.contempt,
            },
            position: self.position.clone(),
            limits: s.limits(time, depth),
        })
    }
}
