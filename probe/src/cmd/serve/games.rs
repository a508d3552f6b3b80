//! The games a database directory holds: one [`Tablebase`] per rule set and
//! board size present, and one [`BoundsTablebase`] per game with bound
//! levels (`--repetition any`), opened once when the server starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use awari_dbformat::{file, RuleSet, Rules};
use awari_probe::bounds::scan_bound_files;
use awari_probe::{BoundsTablebase, ProbeError, Tablebase};

use super::api::ApiError;

/// Every rule set and board size of one database directory.
pub(crate) struct Games {
    dir: PathBuf,
    tablebases: BTreeMap<(RuleSet, u8), Tablebase>,
    /// The games with bound levels.
    bounds: BTreeMap<(RuleSet, u8), BoundsTablebase>,
}

impl Games {
    /// Opens every game present in `dir`, with its scores, its bounds or both.
    ///
    /// # Errors
    /// When the directory cannot be listed or holds no level file of either kind.
    pub(crate) fn open(dir: &Path) -> Result<Games, ProbeError> {
        let mut present: Vec<Rules> = file::scan_dir(dir)?
            .into_iter()
            .map(|(id, _)| id.rules)
            .collect();
        present.sort_by_key(|r| (r.set(), r.pits()));
        present.dedup();
        let mut with_bounds: Vec<Rules> = scan_bound_files(dir)?
            .into_iter()
            .map(|(id, _, _)| id.rules)
            .collect();
        with_bounds.sort_by_key(|r| (r.set(), r.pits()));
        with_bounds.dedup();
        if present.is_empty() && with_bounds.is_empty() {
            return Err(ProbeError::Database {
                dir: dir.to_path_buf(),
                reason: "holds no level file; build some with awari-solve".into(),
            });
        }
        let mut tablebases = BTreeMap::new();
        for rules in present {
            tablebases.insert((rules.set(), rules.pits()), Tablebase::open(dir, rules)?);
        }
        let mut bounds = BTreeMap::new();
        for rules in with_bounds {
            bounds.insert(
                (rules.set(), rules.pits()),
                BoundsTablebase::open(dir, rules)?,
            );
        }
        Ok(Games {
            dir: dir.to_path_buf(),
            tablebases,
            bounds,
        })
    }

    /// The bound levels (`repetition=any`) for boards of `pits` pits per
    /// side under `rules`, or when no rule set is named, under the only one
    /// whose bound levels are present for that size.
    ///
    /// # Errors
    /// A 400 [`ApiError`] when the directory holds no bound levels of such a
    /// game (naming the command that builds them), or those of several rule
    /// sets for the size and none was named.
    pub(crate) fn get_bounds(
        &self,
        rules: Option<RuleSet>,
        pits: u8,
    ) -> Result<&BoundsTablebase, ApiError> {
        let found: Vec<(&(RuleSet, u8), &BoundsTablebase)> = self
            .bounds
            .iter()
            .filter(|((set, p), _)| *p == pits && rules.is_none_or(|r| r == *set))
            .collect();
        let build = |set: &str| {
            format!(
                "build them with `awari-solve --db {} --rules {set} --pits {pits} --max-seeds N --repetition any`",
                self.dir.display()
            )
        };
        match found.as_slice() {
            [(_, tb)] => Ok(tb),
            [] => Err(ApiError::bad(format!(
                "{} holds no bound levels (repetition=any) of {} with {pits} pits per side; {}",
                self.dir.display(),
                rules.map_or("any rule set".to_string(), |r| r.to_string()),
                build(rules.map_or("R", |r| r.name()))
            ))),
            _ => Err(ApiError::bad(format!(
                "{} holds the bound levels of several rule sets for {pits} pits per side; choose one with rules=",
                self.dir.display()
            ))),
        }
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

    /// "awari 6 pits, abapa 4 pits": the games with scores, for messages.
    fn names(&self) -> String {
        self.tablebases
            .keys()
            .map(|(set, pits)| format!("{set} {pits} pits"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The answer of `/api/info`: the directory and, for each game present,
    /// its rule set, board size, levels and the level up to which it is
    /// complete (even-split scores; empty and null when it has bounds only),
    /// and its bound levels (`repetition=any`) with theirs.
    pub(crate) fn info_json(&self) -> serde_json::Value {
        let mut keys: Vec<&(RuleSet, u8)> =
            self.tablebases.keys().chain(self.bounds.keys()).collect();
        keys.sort();
        keys.dedup();
        let games: Vec<_> = keys
            .into_iter()
            .map(|key @ (set, pits)| {
                let tb = self.tablebases.get(key);
                let bounds = self.bounds.get(key);
                serde_json::json!({
                    "rules": set.name(),
                    "pits": pits,
                    "levels": tb.map(Tablebase::levels).unwrap_or_default(),
                    "complete_up_to": tb.and_then(Tablebase::complete_up_to),
                    "bound_levels": bounds.map(BoundsTablebase::levels).unwrap_or_default(),
                    "bounds_complete_up_to": bounds.and_then(BoundsTablebase::complete_up_to),
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
