//! Sharing the levels among MPI ranks: which rank checks which level, and
//! every rank's results gathered.

use std::collections::BTreeMap;

use awari_dbformat::cluster::Ranks;

use super::Checked;

/// Which rank checks each of the levels `wanted` (of `pits` pits per side)
/// among `ranks`: the largest first, each to the rank with the fewest boards
/// so far (the same answer on every rank).
pub(super) fn checkers(wanted: &[u32], pits: u8, ranks: usize) -> BTreeMap<u32, usize> {
    let index = awari_dbformat::Index::for_pits(pits);
    let mut load = vec![0u64; ranks];
    let mut by_size = wanted.to_vec();
    by_size.sort_by_key(|&n| std::cmp::Reverse(index.level_size(n)));
    by_size
        .into_iter()
        .map(|n| {
            let r = (0..ranks).min_by_key(|&r| load[r]).expect("a rank");
            load[r] += index.level_size(n);
            (n, r)
        })
        .collect()
}

/// Every rank's checks, in order of levels, on every rank.
pub(super) fn gather_checks(ranks: &dyn Ranks, mine: &[Checked]) -> Result<Vec<Checked>, String> {
    let bytes = serde_json::to_vec(mine).expect("serialisable");
    let mut all: Vec<Checked> = Vec::new();
    for (rank, theirs) in ranks.all_gather_bytes(&bytes).into_iter().enumerate() {
        let checked: Vec<Checked> = serde_json::from_slice(&theirs)
            .map_err(|e| format!("the checks of rank {rank} are garbled: {e}"))?;
        all.extend(checked);
    }
    all.sort_by_key(|(c, _, _)| c.seeds);
    Ok(all)
}
