//! The games a database directory holds: one [`Tablebase`] per rule set and
//! board size present, opened once when the server starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use awari_dbformat::{file, RuleSet, Rules};
use awari_probe::{ProbeError, Tablebase};

use super::api::ApiError;

/// Every rule set and board size of one database directory.
pub(crate) struct Games {
    dir: PathBuf,
    tablebases: BTreeMap<(RuleSet, u8), Tablebase>,
}

impl Games {
    /// Opens every game present in `dir`.
    ///
    /// # Errors
    /// When the directory cannot be listed or holds no level file.
    pub(crate) fn open(dir: &Path) -> Result<Games, ProbeError> {
        let mut present: Vec<Rules> = file::scan_dir(dir)?
            .into_iter()
            .map(|(id, _)| id.rules)
            .collect();
        present.sort_by_key(|r| (r.set(), r.pits()));
        present.dedup();
        if present.is_empty() {
            return Err(ProbeError::Database {
                dir: dir.to_path_buf(),
                reason: "holds no level file; build some with awari-solve".into(),
            });
        }
        let mut tablebases = BTreeMap::new();
        for rules in present {
            tablebases.insert((rules.set(), rules.pits()), Tablebase::open(dir, rules)?);
        }
        Ok(Games {
            dir: dir.to_path_buf(),
            tablebases,
        })
    }

    /// The database for boards of `pits` pits per side under `rules`, or when
    /// no rule set is named, under the only one present for that size (as
    /// `awari-probe score` chooses).
    ///
    /// # Errors
    /// A 400 [`ApiError`] when the directory holds no such game, or several
    /// rule sets for the size and none was named.
    pub(crate) fn get(&self, rules: Option<RuleSet>, pits: u8) -> Result<&Tablebase, ApiError> {
        if let Some(set) = rules {
            return self.tablebases.get(&(set, pits)).ok_or_else(|| {
                ApiError::bad(format!(
                    "{} holds no level of {set} with {pits} pits per side; it holds {}",
                    self.dir.display(),
                    self.names()
                ))
            });
        }
        let sets: Vec<&Tablebase> = self
            .tablebases
            .iter()
            .filter(|((_, p), _)| *p == pits)
            .map(|(_, tb)| tb)
            .collect();
        match sets.as_slice() {
            [one] => Ok(one),
            [] => Err(ApiError::bad(format!(
                "{} holds no level with {pits} pits per side; it holds {}",
                self.dir.display(),
                self.names()
            ))),
            _ => Err(ApiError::bad(format!(
                "{} holds several rule sets for {pits} pits per side ({}); choose one with rules=",
                self.dir.display(),
                self.names()
            ))),
        }
    }

    /// "awari 6 pits, abapa 4 pits": the games present, for messages.
    fn names(&self) -> String {
        self.tablebases
            .keys()
            .map(|(set, pits)| format!("{set} {pits} pits"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The answer of `/api/info`: the directory and, for each game present,
    /// its rule set, board size, levels and the level up to which it is complete.
    pub(crate) fn info_json(&self) -> serde_json::Value {
        let games: Vec<_> = self
            .tablebases
            .iter()
            .map(|((set, pits), tb)| {
                serde_json::json!({
                    "rules": set.name(),
                    "pits": pits,
                    "levels": tb.levels(),
                    "complete_up_to": tb.complete_up_to(),
                })
            })
            .collect();
        serde_json::json!({
            "db": self.dir.display().to_string(),
            "rule_sets": RuleSet::ALL.iter().map(|r| r.name()).collect::<Vec<_>>(),
            "games": games,
        })
    }
}
