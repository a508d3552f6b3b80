//! `awari-probe count`: how many boards each level stores.

use std::process::ExitCode;

use awari_dbformat::{Index, RuleSet, Rules};

use super::CmdResult;

/// Print the number of stored boards per level and in total.
///
/// With 6 pits and 48 seeds this is the count of Romein & Bal: every level
/// 0..=48 except 47 (which no 4-seeds-per-pit game can reach), plus the start
/// position: 889,063,398,406.
///
/// Example: awari-probe count --pits 6 --max-seeds 48
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Pits per side (2 to 8).
    #[arg(long, default_value_t = 6)]
    pits: u8,
    /// The largest level to count [default: 8 × pits, a start with 4 seeds per pit].
    #[arg(long)]
    max_seeds: Option<u32>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Groups digits in threes: 889063398406 -> "889,063,398,406".
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Prints the table; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    let rules = Rules::new(RuleSet::Awari, args.pits)?;
    let board_pits = rules.board_pits() as u32;
    let max = args.max_seeds.unwrap_or(4 * board_pits);
    if max > awari_dbformat::MAX_SEEDS {
        return Err(format!(
            "--max-seeds {max} is more than the {} supported",
            awari_dbformat::MAX_SEEDS
        )
        .into());
    }
    let index = Index::for_pits(args.pits);
    // A start with S seeds per pit has 2PS seeds; 2PS - 1 can never arise from it.
    let is_start_total = max.is_multiple_of(board_pits) && max > 0;
    let mut levels = Vec::new();
    let mut total = 0u64;
    for n in 0..=max {
        if is_start_total && n == max - 1 {
            continue;
        }
        let boards = index.level_size(n);
        total += boards;
        levels.push((n, boards));
    }
    if is_start_total {
        total += 1; // the start position, which no level stores
    }
    if args.json {
        let levels: Vec<_> = levels
            .iter()
            .map(|(n, b)| serde_json::json!({"seeds": n, "boards": b}))
            .collect();
        let out = serde_json::json!({
            "pits": args.pits,
            "max_seeds": max,
            "levels": levels,
            "start_position_counted": is_start_total,
            "total": total,
        });
        println!("{out}");
    } else {
        println!("{:>5}  {:>20}", "seeds", "boards");
        for (n, b) in &levels {
            println!("{n:>5}  {:>20}", thousands(*b));
        }
        if is_start_total {
            println!("start  {:>20}", 1);
            println!(
                "(level {} is skipped: a start with {} seeds per pit never reaches it)",
                max - 1,
                max / board_pits
            );
        }
        println!("total  {:>20}", thousands(total));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups_digits() {
        assert_eq!(super::thousands(889_063_398_406), "889,063,398,406");
        assert_eq!(super::thousands(12), "12");
        assert_eq!(super::thousands(1_000), "1,000");
    }
}
